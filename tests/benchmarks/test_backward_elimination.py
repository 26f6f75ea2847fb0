"""Backward elimination of the answer step's features (benchmarks/answer_feature_ablation.py)."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

from tests.benchmarks.scripts import benchmark_script


def _module() -> ModuleType:
    return benchmark_script("answer_feature_ablation")


def _figures(left_out: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``a`` and ``b`` stand in for one another (either alone can go, not both); ``c`` carries
    English answers; ``d`` is noise that helps a little."""
    gone = {name for _, name in left_out}
    answered = 0.70 - (0.05 if {"a", "b"} <= gone else 0.0) - (0.02 if "c" in gone else 0.0)
    return {
        "choice_en": 0.84 + (0.001 if "d" in gone else 0.0),
        "choice_zh": 0.86,
        "answered_right_en": answered,
        "answered_right_zh": 0.98,
    }


def test_features_that_stand_in_for_one_another_go_one_at_a_time() -> None:
    eliminate = _module().eliminate
    order = [("sentence", name) for name in "dabc"]
    removed, steps = eliminate(order, _figures, 0.004)
    assert removed == [("sentence", "d"), ("sentence", "a")]
    assert [goes for _, goes, _ in steps] == [True, True, False, False]
    assert steps[2][2]["answered_right_en"] < -0.004  # b, once a is gone, costs what both carry


def test_a_step_no_figure_measures_is_kept() -> None:
    eliminate = _module().eliminate
    removed, steps = eliminate([("decision", "margin")], lambda left_out: {}, 1.0)
    assert removed == [] and steps == [(("decision", "margin"), False, {})]
