"""A one-logit head on the encoder's ``<s>`` vector: the run-time part that the sentence reader
(:mod:`.choice`) and the guard (:mod:`veracity.guard.model`) share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .encoder import Encoder
from .packed import first_token_states
from .tokenizer import Tokenizer

HEAD: Final = "qa_outputs"
"""The head's tensor names in the tuned weights (``qa_outputs.weight``, ``qa_outputs.bias``)."""


def logistic(logit: float) -> float:
    """The probability a logit stands for, the logit clamped to ±50 (no overflow)."""
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))


class OneLogitModel:
    """The tuned layers with a one-logit head, and the card (``meta``) they were loaded with."""

    def __init__(self, weights: dict[str, np.ndarray], tokenizer: Tokenizer, *, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.tokenizer = tokenizer
        self.encoder = Encoder(weights, eps=float(meta.get("eps", 1e-12)))
        self.head = np.asarray(weights[f"{HEAD}.weight"], dtype=np.float32).reshape(-1)
        self.head_bias = float(np.asarray(weights[f"{HEAD}.bias"]).reshape(-1)[0])
        self.version = str(meta.get("version", "unversioned"))

    def logits(self, rows: Sequence[Sequence[int]], *, batch_size: int = 16) -> npt.NDArray[np.float32]:
        """The head's logit of each id row (``batch_size`` rows packed without padding at a time)."""
        out = np.zeros(len(rows), dtype=np.float32)
        for begin in range(0, len(rows), batch_size):
            states = first_token_states(self.encoder, rows[begin : begin + batch_size])
            out[begin : begin + len(states)] = states @ self.head + self.head_bias
        return out
