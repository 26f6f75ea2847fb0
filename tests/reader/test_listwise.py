"""The listwise loss, with and without a teacher. Needs PyTorch (``veracity[train]``)."""

from __future__ import annotations

import math

import pytest

from veracity.reader.features import Group

torch = pytest.importorskip("torch", reason="training needs veracity[train] (PyTorch)")
from veracity.reader.listwise import listwise_loss  # noqa: E402


def _group(group_id: str, rows: int, positives: tuple[int, ...]) -> Group:
    return Group(group_id, "en", tuple((1, 2, 3) for _ in range(rows)), positives)


def test_without_a_teacher_the_loss_is_minus_the_log_probability_of_the_positives() -> None:
    logits = torch.tensor([2.0, 0.0, -1.0])
    loss = listwise_loss(logits, [_group("a", 3, (0,))])
    expected = math.log(1 + math.exp(2.0) + 1 + math.exp(-1.0)) - 2.0
    assert loss.item() == pytest.approx(expected, rel=1e-6)


def test_a_teacher_that_agrees_adds_nothing_and_one_that_disagrees_adds_its_divergence() -> None:
    logits = torch.tensor([2.0, 0.0, -1.0, 0.5])
    batch = [_group("a", 3, (0,)), _group("b", 1, ())]
    plain = listwise_loss(logits, batch).item()
    same = {"a": [2.0, 0.0, -1.0], "b": [0.5]}
    agreeing = listwise_loss(logits, batch, same, distill=0.5, temperature=2.0).item()
    assert agreeing == pytest.approx(0.5 * plain, rel=1e-6)  # the divergence part is 0
    other = {"a": [-1.0, 0.0, 2.0], "b": [-3.0]}
    disagreeing = listwise_loss(logits, batch, other, distill=0.5, temperature=2.0).item()
    assert disagreeing > agreeing
    assert listwise_loss(logits, batch, other, distill=0.0).item() == pytest.approx(plain, rel=1e-6)


def test_a_teacher_sure_of_one_sentence_gives_a_finite_loss() -> None:
    # a teacher logit far below the rest: its softmax share underflows to 0 in float32
    teacher = {"a": [200.0, -200.0]}
    loss = listwise_loss(torch.tensor([1.0, 0.0]), [_group("a", 2, (0,))], teacher, distill=0.5)
    assert math.isfinite(loss.item())
