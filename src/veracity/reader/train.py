"""Fine-tune the reader (``veracity[train]``: PyTorch, CPU): batches of windows by length, AdamW
with linear warm-up and decay, one seed for everything, progress on stderr.

Pure training mechanics: the windows come from :mod:`.features`, the command line and the model
card from :mod:`veracity.bench.reading.train`.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch

from .features import Window
from .torch_model import TorchReader, span_loss

Batch = TypeVar("Batch")
Item = TypeVar("Item")


@dataclass(frozen=True, slots=True)
class TrainSettings:
    """The knobs of one fit (all recorded in the model card)."""

    layers: int = 6
    epochs: float = 1.0
    batch_tokens: int = 4096
    learning_rate: float = 1e-4
    warmup: float = 0.06
    weight_decay: float = 0.01
    seed: int = 0
    threads: int = 2


def batches(windows: Sequence[Window], batch_tokens: int, rng: random.Random) -> list[list[Window]]:
    """Windows grouped by similar length (little padding), at most ``batch_tokens`` padded tokens
    a batch, in a seeded random order."""
    return by_length(windows, batch_tokens, rng, lambda window: (len(window.input_ids),))


def by_length(
    items: Sequence[Item], batch_tokens: int, rng: random.Random, row_lengths: Callable[[Item], Sequence[int]]
) -> list[list[Item]]:
    """``items`` (each of one or more rows of ``row_lengths``) in batches of similar row length, at
    most ``batch_tokens`` padded tokens (longest row × rows) a batch, in a seeded random order."""
    ordered = sorted(items, key=lambda item: (max(row_lengths(item)), rng.random()))
    out: list[list[Item]] = []
    current: list[Item] = []
    for item in ordered:
        rows = sum(len(row_lengths(i)) for i in current) + len(row_lengths(item))
        longest = max(length for i in [*current, item] for length in row_lengths(i))
        if current and longest * rows > batch_tokens:
            out.append(current)
            current = []
        current.append(item)
    if current:
        out.append(current)
    rng.shuffle(out)
    return out


def tensors(batch: Sequence[Window], pad: int) -> tuple[torch.Tensor, ...]:
    """ids, mask, starts and ends of ``batch``, right-padded."""
    length = max(len(w.input_ids) for w in batch)
    ids = torch.full((len(batch), length), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), length), dtype=torch.long)
    for row, window in enumerate(batch):
        ids[row, : len(window.input_ids)] = torch.tensor(window.input_ids)
        mask[row, : len(window.input_ids)] = 1
    starts = torch.tensor([w.start for w in batch])
    ends = torch.tensor([w.end for w in batch])
    return ids, mask, starts, ends


def label_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of a one-logit head (the guard's: 1 = gives orders)."""
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, labels.float())


def fit(
    weights: Mapping[str, np.ndarray],
    windows: Sequence[Window],
    settings: TrainSettings,
    *,
    outputs: int = 2,
    pad: int = 1,
    report: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> tuple[dict[str, np.ndarray], list[dict[str, float]]]:
    """Train from ``weights`` (the bundled encoder, or a reader to continue) on ``windows``; the
    exported tuned tensors and the loss log (one entry per 50 steps)."""

    def step_loss(model: TorchReader, batch: list[Window]) -> tuple[torch.Tensor, int]:
        ids, mask, starts, ends = tensors(batch, pad)
        start_logits, end_logits = model(ids, mask)
        if outputs == 1:  # a label per window, carried in ``start``
            return label_loss(start_logits, starts), int(mask.sum())
        return span_loss(start_logits, end_logits, mask, starts, ends), int(mask.sum())

    return train_steps(
        weights,
        settings,
        outputs=outputs,
        plan_of=lambda rng: batches(windows, settings.batch_tokens, rng),
        step_loss=step_loss,
        report=report,
    )


def train_steps(
    weights: Mapping[str, np.ndarray],
    settings: TrainSettings,
    *,
    outputs: int,
    plan_of: Callable[[random.Random], list[Batch]],
    step_loss: Callable[[TorchReader, Batch], tuple[torch.Tensor, int]],
    report: Callable[[str], None],
) -> tuple[dict[str, np.ndarray], list[dict[str, float]]]:
    """The fit every model here shares: one seed for everything; the encoder's first
    ``settings.layers`` layers with an ``outputs`` head; AdamW (no weight decay on biases and
    norms); ``settings.epochs`` passes over ``plan_of(rng)`` (a fraction: the first part of one
    more); linear warm-up and decay; clipped gradients; ``step_loss`` gives a batch's loss and its
    real tokens. Returns the exported tuned tensors and the loss log (one entry per 50 steps)."""
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    rng = random.Random(settings.seed)
    model = TorchReader(weights, layers=settings.layers, outputs=outputs)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in trainable if p.ndim >= 2]
    flat = [p for p in trainable if p.ndim < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": settings.weight_decay}, {"params": flat, "weight_decay": 0.0}],
        lr=settings.learning_rate,
    )
    plan: list[Batch] = []
    whole = math.floor(settings.epochs)
    for _ in range(whole):
        plan += plan_of(rng)
    if settings.epochs > whole:
        part = plan_of(rng)
        plan += part[: round(len(part) * (settings.epochs - whole))]
    total = len(plan)
    warmup = max(1, round(total * settings.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    log: list[dict[str, float]] = []
    started = time.perf_counter()
    running = 0.0
    tokens = 0
    for step, batch in enumerate(plan, start=1):
        loss, batch_tokens = step_loss(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        running += float(loss.detach())
        tokens += batch_tokens
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
