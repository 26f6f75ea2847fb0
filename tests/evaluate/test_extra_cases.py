"""Answer cases beyond the 20 conformance cases: an English question, a typo, a refuted
premise, and a 3.3 question before and after the 3.3 preview is valid (real default model).

A ``failure_probe`` case records a known failure: it must keep failing (strict xfail), so
the day it passes it is noticed and becomes a conformance case.
"""

from __future__ import annotations

import pytest

from veracity.evaluate.cases import parse_cases
from veracity.evaluate.context import Context
from veracity.evaluate.runner import run_case
from veracity.fixtures import fixture_cases_text, tenant_config

EXTRA = parse_cases(
    fixture_cases_text(file="cases-extra.jsonl"), tenant_config(), source="starship/cases-extra.jsonl"
)
PARAMS = [
    pytest.param(
        case,
        id=case.case_id,
        marks=[pytest.mark.xfail(strict=True, reason="known failure")]
        if case.mode == "failure_probe"
        else [],
    )
    for case in EXTRA
]


@pytest.mark.parametrize("case", PARAMS)
def test_extra_answer_case(demo_kb, case) -> None:
    result, trace = run_case(Context(demo_kb), case)
    assert result["failures"] == [], (result["status"], result["cited"], trace and trace["decisions"])


def test_the_extra_cases_cover_what_they_claim() -> None:
    assert {c.case_id for c in EXTRA} == {
        "extra-english-question",
        "extra-typo",
        "extra-premise-refuted",
        "extra-33-before-preview",
        "extra-33-after-preview",
    }
