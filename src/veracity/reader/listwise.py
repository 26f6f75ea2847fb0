"""Fine-tune the sentence reader (``veracity[train]``: PyTorch, CPU), listwise.

A *group* is one question with some sentences of one passage. Its logits, with a fixed 0 for
"none of these" in front, go through one softmax; the loss is minus the log of the probability
of the group's positives (or of "none" when it has none: an unanswerable question, or a passage
that does not hold the answer). So sentences compete for being the answer, and every score is on
one scale against "no answer" (0).

With a *teacher* (another reader's logits of the same rows), a share ``distill`` of each group's
loss is instead the divergence of the group's softmax from the teacher's, both at ``temperature``
(knowledge distillation: a smaller reader learns how a larger one ranks the wrong sentences too,
not only which one is right).

Pure training mechanics; the groups come from :mod:`veracity.bench.reading.chooser`.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch

from .features import Group
from .torch_model import TorchReader
from .train import TrainSettings, by_length, train_steps


def group_batches(groups: Sequence[Group], batch_tokens: int, rng: random.Random) -> list[list[Group]]:
    """Groups of similar row length together, at most ``batch_tokens`` padded tokens a batch,
    in a seeded random order."""
    return by_length(groups, batch_tokens, rng, lambda group: [len(row) for row in group.rows])


def listwise_loss(
    logits: torch.Tensor,
    batch: Sequence[Group],
    teacher: Mapping[str, Sequence[float]] | None = None,
    *,
    distill: float = 0.0,
    temperature: float = 1.0,
) -> torch.Tensor:
    """Mean over groups of −log P(positives) under softmax([0, logits of the group]); with a
    ``teacher`` (logits by group id), ``(1 − distill)`` of that plus ``distill`` times
    ``temperature² · KL(teacher ‖ this)`` over the same softmax at ``temperature``."""
    losses = []
    at = 0
    for group in batch:
        scores = torch.cat([logits.new_zeros(1), logits[at : at + len(group.rows)]])
        at += len(group.rows)
        targets = [p + 1 for p in group.positives] or [0]
        loss = torch.logsumexp(scores, 0) - torch.logsumexp(scores[targets], 0)
        if teacher is not None and distill > 0.0:
            taught = torch.tensor([0.0, *teacher[group.group_id]], dtype=scores.dtype)
            # in log space: a softmax that underflows to 0 would make 0 · log 0 = NaN
            wanted = torch.log_softmax(taught / temperature, 0)
            divergence = torch.sum(wanted.exp() * (wanted - torch.log_softmax(scores / temperature, 0)))
            loss = (1.0 - distill) * loss + distill * temperature**2 * divergence
        losses.append(loss)
    return torch.stack(losses).mean()


def fit_groups(
    weights: Mapping[str, np.ndarray],
    groups: Sequence[Group],
    settings: TrainSettings,
    *,
    pad: int = 1,
    teacher: Mapping[str, Sequence[float]] | None = None,
    distill: float = 0.0,
    temperature: float = 1.0,
    report: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> tuple[dict[str, np.ndarray], list[dict[str, float]]]:
    """Train a one-logit head over the first ``settings.layers`` layers of ``weights`` on
    ``groups`` (with ``teacher``: see :func:`listwise_loss`); the exported tuned tensors and the
    loss log (one entry per 50 steps)."""

    def step_loss(model: TorchReader, batch: list[Group]) -> tuple[torch.Tensor, int]:
        rows = [r for g in batch for r in g.rows]
        length = max(len(r) for r in rows)
        ids = torch.full((len(rows), length), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), length), dtype=torch.long)
        for index, row in enumerate(rows):
            ids[index, : len(row)] = torch.tensor(row)
            mask[index, : len(row)] = 1
        logits, _ = model(ids, mask)
        loss = listwise_loss(logits, batch, teacher, distill=distill, temperature=temperature)
        return loss, int(mask.sum())

    return train_steps(
        weights,
        settings,
        outputs=1,
        plan_of=lambda rng: group_batches(groups, settings.batch_tokens, rng),
        step_loss=step_loss,
        report=report,
    )
