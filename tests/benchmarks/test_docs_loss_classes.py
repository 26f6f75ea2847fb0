"""Where a documentation question is lost (benchmarks/docs_loss_classes.py): the class rules."""

from __future__ import annotations

from types import ModuleType

from tests.benchmarks.scripts import benchmark_script
from veracity.pipeline.choice import CHOICE_DEPTH


def _module() -> ModuleType:
    return benchmark_script("docs_loss_classes")


GOLD = ("port 5173",)
RIGHT = "The server listens on **port 5173** by default."
OTHER = "The build writes to dist."


def test_each_class() -> None:
    m = _module()
    below = [OTHER] * CHOICE_DEPTH + [RIGHT]
    assert m.loss_class([], GOLD, False) == m.CLASSES[0]
    assert m.loss_class([([OTHER], [OTHER])], GOLD, True) == m.CLASSES[0]
    assert m.loss_class([(below, below)], GOLD, False) == m.CLASSES[1]
    assert m.loss_class([([OTHER, RIGHT], [OTHER, RIGHT])], GOLD, True) == m.CLASSES[2]
    assert m.loss_class([([OTHER, RIGHT], [RIGHT, OTHER])], GOLD, False) == m.CLASSES[3]
    assert m.loss_class([([OTHER, RIGHT], [RIGHT, OTHER])], GOLD, True) == m.CLASSES[4]


def test_any_sub_question_or_tier_counts() -> None:
    m = _module()
    missed, chosen = ([OTHER], [OTHER]), ([RIGHT], [RIGHT])
    assert m.loss_class([missed, chosen], GOLD, True) == m.CLASSES[4]


def test_the_wrapper_is_removed_after_the_block() -> None:
    m = _module()
    import veracity.pipeline.decision as decision

    before = decision.rechoose
    with m.recorded_rankings() as calls:
        assert decision.rechoose is not before
    assert decision.rechoose is before and calls == []
