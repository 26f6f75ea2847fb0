"""A one-logit head on the encoder's ``<s>`` vector: the run-time part that the sentence reader
(:mod:`.choice`) and the guard (:mod:`veracity.guard.model`) share, computed in numpy or, in a copy
from :meth:`OneLogitModel.in_runtime`, by onnxruntime (:mod:`.ort_head`)."""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Sequence
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ..model.errors import ConfigError
from .encoder import Encoder
from .ort_head import OnnxOneLogit, onnxruntime_available
from .packed import first_token_states
from .runtimes import MOVED_LOGITS, RUNTIMES
from .tokenizer import Tokenizer

Model = TypeVar("Model", bound="OneLogitModel")

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
        self.runtime = "numpy"
        self._onnx: OnnxOneLogit | None = None

    def in_runtime(self: Model, runtime: str) -> Model:
        """This model with its logits computed by ``runtime`` (:data:`RUNTIMES`): a copy of the numpy
        model sharing its weights, made once per runtime, its version suffixed where the logits move
        (:data:`MOVED_LOGITS`: ``<version>-int8``); ``ConfigError`` for another name, or without
        onnxruntime."""
        if runtime not in RUNTIMES:
            raise ConfigError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
        made: dict[str, Model] = self.__dict__.setdefault("_made", {"numpy": self})  # shared by the copies
        if runtime not in made:
            base = made["numpy"]  # never another runtime's copy: its version and settings are its own
            model = copy.copy(base)
            model.runtime = runtime
            mode = runtime.removeprefix("onnx-")
            model._onnx = OnnxOneLogit(base.encoder, base.head, base.head_bias, mode)
            if runtime in MOVED_LOGITS:
                model.version = f"{base.version}-{mode}"
            model._entered(runtime)
            made[runtime] = model
        return made[runtime]

    def _entered(self, runtime: str) -> None:
        """What a copy made for ``runtime`` changes of itself beyond its version (a subclass's threshold)."""

    def logits(self, rows: Sequence[Sequence[int]], *, batch_size: int = 16) -> npt.NDArray[np.float32]:
        """The head's logit of each id row: by onnxruntime in an onnx runtime, else in numpy
        (``batch_size`` rows packed without padding at a time)."""
        if self._onnx is not None:
            return self._onnx.logits(rows)
        out = np.zeros(len(rows), dtype=np.float32)
        for begin in range(0, len(rows), batch_size):
            states = first_token_states(self.encoder, rows[begin : begin + batch_size])
            out[begin : begin + len(states)] = states @ self.head + self.head_bias
        return out


def float_runtime() -> str:
    """The faster runtime with numpy's logits for this process's threads: ``onnx-fp32`` (one thread)
    where onnxruntime is installed and BLAS runs one thread (``OMP_NUM_THREADS=1``, as a service's
    workers do: there the sentence reader's choice stage takes about two thirds of numpy's time),
    else ``numpy`` (on BLAS's default threads numpy was about 8 % faster than onnxruntime's one;
    ``benchmarks/bench_chooser.py --runtime``)."""
    one_thread = os.environ.get("OMP_NUM_THREADS", "").strip() == "1"
    return "onnx-fp32" if one_thread and onnxruntime_available() else "numpy"
