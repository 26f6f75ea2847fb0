"""Fitting the answer models: logistic regression, a listwise sentence ranker, a threshold.

Pure numpy on arrays of features (no retrieval): used by
:mod:`veracity.bench.train_answers`, which collects the tuning rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..pipeline.decision import LogisticModel


def fit_logistic(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    names: Sequence[str],
    l2: float = 1.0,
    weights: npt.NDArray[np.float64] | None = None,
) -> LogisticModel:
    """L2-regularised logistic regression by Newton's method on standardised features;
    ``weights`` (default all 1) scale each row's share of the loss."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    row_weight = np.ones(x.shape[0]) if weights is None else weights
    z = np.hstack([np.ones((x.shape[0], 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.eye(z.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        gradient = z.T @ (row_weight * (p - y)) + penalty @ w
        hessian = (z * (row_weight * p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return LogisticModel(
        names=tuple(names),
        weights=tuple(float(v) for v in w[1:]),
        bias=float(w[0]),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
    )


def fit_listwise(
    groups: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]],
    names: Sequence[str],
    l2: float = 1e-3,
    steps: int = 400,
) -> LogisticModel:
    """A linear scorer trained to put the softmax mass of each question on its right sentences.

    Only questions with at least one right and one wrong candidate teach the
    ranking; Adam on standardised features. The bias is then set so the
    scores read as log-odds of "this sentence holds the answer" over all
    candidates (a pointwise calibration on top of the listwise order).
    """
    useful = [(x, y) for x, y in groups if y.any() and not y.all()]
    stacked = np.vstack([x for x, _ in groups])
    mean = stacked.mean(axis=0)
    scale = stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0
    standard = [((x - mean) / scale, y) for x, y in useful]
    w = np.zeros(len(names))
    first, second = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, steps + 1):
        gradient = l2 * w
        for z, y in standard:
            logits = z @ w
            p = np.exp(logits - logits.max())
            p /= p.sum()
            q = p * y
            q /= q.sum()
            gradient += z.T @ (p - q)
        gradient /= len(standard)
        first = 0.9 * first + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient**2
        w -= 0.05 * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    z_all = (stacked - mean) / scale
    labels = np.concatenate([y for _, y in groups]).astype(np.float64)
    scores = z_all @ w
    bias = 0.0
    for _ in range(50):  # one-dimensional Newton for the intercept
        p = 1.0 / (1.0 + np.exp(-np.clip(scores + bias, -30, 30)))
        bias -= (p - labels).sum() / max((p * (1 - p)).sum(), 1e-9)
    return LogisticModel(
        names=tuple(names),
        weights=tuple(float(v) for v in w),
        bias=float(bias),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
    )


@dataclass(frozen=True, slots=True)
class Group:
    """One question's candidates for the sentence model: language, fold, features, labels."""

    language: str
    fold: int
    x: npt.NDArray[np.float64]
    y: npt.NDArray[np.bool_]


def fold_of(question_id: str) -> int:
    """0 or 1, from the question id's digest: a split that does not depend on file order."""
    return int(hashlib.sha256(question_id.encode("utf-8")).hexdigest(), 16) % 2


def own_model_gain(groups: Sequence[Group], language: str, names: Sequence[str]) -> dict[str, float]:
    """Two-fold (by question id) share of ``language``'s questions whose best candidate is right,
    with the model fitted on every language and with one fitted on ``language`` alone: a
    language gets its own sentence model only when that share is higher with it."""
    right = {"pooled": 0, "own": 0}
    asked = 0
    for fold in (0, 1):
        train = [g for g in groups if g.fold != fold]
        models = {
            "pooled": fit_listwise([(g.x, g.y) for g in train], names),
            "own": fit_listwise([(g.x, g.y) for g in train if g.language == language], names),
        }
        for group in groups:
            if group.fold != fold or group.language != language or not group.y.any():
                continue
            asked += 1
            for name, model in models.items():
                scores = [model.logit(dict(zip(names, row, strict=True))) for row in group.x]
                right[name] += bool(group.y[int(np.argmax(scores))])
    return {name: round(count / max(asked, 1), 4) for name, count in right.items()}


def threshold_for_budget(negative_scores: npt.NDArray[np.float64], budget: float) -> float:
    """The lowest threshold whose share of negatives at or above it is within ``budget``."""
    if negative_scores.size == 0:
        return 0.5
    ordered = np.sort(negative_scores)[::-1]
    allowed = int(np.floor(budget * ordered.size))
    return float(ordered[allowed]) + 1e-9 if allowed < ordered.size else 0.0
