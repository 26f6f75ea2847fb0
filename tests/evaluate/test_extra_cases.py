"""Answer cases beyond the 20 conformance cases: an English question, a typo, a refuted
premise, and a 3.3 question before and after the 3.3 preview is valid (real default model)."""

from __future__ import annotations

import pytest

from veracity.evaluate.cases import parse_cases
from veracity.evaluate.context import Context
from veracity.evaluate.runner import run_case
from veracity.fixtures import fixture_cases_text, tenant_config

EXTRA = parse_cases(
    fixture_cases_text(file="cases-extra.jsonl"), tenant_config(), source="starship/cases-extra.jsonl"
)


@pytest.mark.parametrize("case", EXTRA, ids=[c.case_id for c in EXTRA])
def test_extra_answer_case(demo_kb, case) -> None:
    result, trace = run_case(Context(demo_kb), case)
    assert result["failures"] == [], (result["status"], result["cited"], trace and trace["decisions"])
