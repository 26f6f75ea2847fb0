"""Fine-tune the sentence reader (``veracity[train]``: PyTorch, CPU), listwise.

A *group* is one question with some sentences of one passage. Its logits, with a fixed 0 for
"none of these" in front, go through one softmax; the loss is minus the log of the probability
of the group's positives (or of "none" when it has none: an unanswerable question, or a passage
that does not hold the answer). So sentences compete for being the answer, and every score is on
one scale against "no answer" (0).

Pure training mechanics; the groups come from :mod:`veracity.bench.reading.chooser`.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .torch_model import TorchReader
from .train import TrainSettings


@dataclass(frozen=True, slots=True)
class Group:
    """One question's candidate rows (token ids) and which of them answer (none: no answer here)."""

    group_id: str
    language: str
    rows: tuple[tuple[int, ...], ...]
    positives: tuple[int, ...]

    @property
    def tokens(self) -> int:
        return sum(len(r) for r in self.rows)


def group_batches(groups: Sequence[Group], batch_tokens: int, rng: random.Random) -> list[list[Group]]:
    """Groups of similar row length together, at most ``batch_tokens`` padded tokens a batch,
    in a seeded random order."""
    ordered = sorted(groups, key=lambda g: (max(len(r) for r in g.rows), rng.random()))
    out: list[list[Group]] = []
    current: list[Group] = []
    for group in ordered:
        rows = sum(len(g.rows) for g in current) + len(group.rows)
        longest = max([len(r) for g in [*current, group] for r in g.rows])
        if current and longest * rows > batch_tokens:
            out.append(current)
            current = []
        current.append(group)
    if current:
        out.append(current)
    rng.shuffle(out)
    return out


def listwise_loss(logits: torch.Tensor, batch: Sequence[Group]) -> torch.Tensor:
    """Mean over groups of −log P(positives) under softmax([0, logits of the group])."""
    losses = []
    at = 0
    for group in batch:
        scores = torch.cat([logits.new_zeros(1), logits[at : at + len(group.rows)]])
        at += len(group.rows)
        targets = [p + 1 for p in group.positives] or [0]
        losses.append(torch.logsumexp(scores, 0) - torch.logsumexp(scores[targets], 0))
    return torch.stack(losses).mean()


def fit_groups(
    weights: Mapping[str, np.ndarray],
    groups: Sequence[Group],
    settings: TrainSettings,
    *,
    pad: int = 1,
    report: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> tuple[dict[str, np.ndarray], list[dict[str, float]]]:
    """Train a one-logit head over the first ``settings.layers`` layers of ``weights`` on
    ``groups``; the exported tuned tensors and the loss log (one entry per 50 steps)."""
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    rng = random.Random(settings.seed)
    model = TorchReader(weights, layers=settings.layers, outputs=1)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        [
            {"params": [p for p in trainable if p.ndim >= 2], "weight_decay": settings.weight_decay},
            {"params": [p for p in trainable if p.ndim < 2], "weight_decay": 0.0},
        ],
        lr=settings.learning_rate,
    )
    plan: list[list[Group]] = []
    whole = math.floor(settings.epochs)
    for _ in range(whole):
        plan += group_batches(groups, settings.batch_tokens, rng)
    if settings.epochs > whole:
        part = group_batches(groups, settings.batch_tokens, rng)
        plan += part[: round(len(part) * (settings.epochs - whole))]
    total = len(plan)
    warmup = max(1, round(total * settings.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    log: list[dict[str, float]] = []
    started = time.perf_counter()
    running, tokens = 0.0, 0
    for step, batch in enumerate(plan, start=1):
        rows = [r for g in batch for r in g.rows]
        length = max(len(r) for r in rows)
        ids = torch.full((len(rows), length), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), length), dtype=torch.long)
        for index, row in enumerate(rows):
            ids[index, : len(row)] = torch.tensor(row)
            mask[index, : len(row)] = 1
        logits, _ = model(ids, mask)
        loss = listwise_loss(logits, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        running += float(loss.detach())
        tokens += int(mask.sum())
        if step % 50 == 0 or step == total:
            elapsed = time.perf_counter() - started
            entry = {"step": step, "loss": round(running / (50 if step % 50 == 0 else step % 50), 4),
                     "tokens_per_s": round(tokens / elapsed, 1), "elapsed_s": round(elapsed, 1)}  # fmt: skip
            log.append(entry)
            eta = elapsed / step * (total - step)
            report(f"step {step}/{total} loss {entry['loss']:.4f} · {entry['tokens_per_s']:.0f} tokens/s · "
                   f"{elapsed / 60:.1f} min, about {eta / 60:.0f} min left")  # fmt: skip
            running = 0.0
    model.eval()
    return model.export(), log
