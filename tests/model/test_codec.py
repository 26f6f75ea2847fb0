"""Answers to JSON and back: every field, every type, nothing that does not fit."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from veracity.evaluate.cases import parse_cases
from veracity.fixtures import fixture_cases_text, tenant_config
from veracity.model.codec import from_plain, to_plain
from veracity.pipeline.outcome import Answer


def test_every_demo_answer_survives_json(fake_kb) -> None:
    config = tenant_config()
    cases = [c for c in parse_cases(fixture_cases_text(), config) if c.question]
    assert len(cases) >= 15
    for case in cases:
        answer = fake_kb.ask(
            case.question, case.principal, case.target_version, case.as_of,
            required_fact_ids=case.required_fact_ids or None,
        )  # fmt: skip
        text = json.dumps(to_plain(answer), ensure_ascii=False)
        assert from_plain(Answer, json.loads(text)) == answer, case.case_id


@dataclass(frozen=True)
class _Pair:
    name: str
    scores: tuple[tuple[str, float], ...] = ()
    limit: int | None = None


def test_values_that_do_not_fit_are_refused() -> None:
    assert from_plain(_Pair, {"name": "a", "scores": [["x", 1]], "limit": None}) == _Pair("a", (("x", 1.0),))
    with pytest.raises(TypeError, match="no field"):
        from_plain(_Pair, {"name": "a", "extra": 1})
    with pytest.raises(TypeError):
        from_plain(_Pair, {"name": 3})
    with pytest.raises(TypeError):
        from_plain(_Pair, {"name": "a", "scores": [["x", 1, 2]]})
    with pytest.raises(TypeError):
        from_plain(_Pair, {"name": "a", "limit": True})  # a bool is not a count
