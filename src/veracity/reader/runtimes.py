"""The names of the runtimes a one-logit model (the sentence reader, the guard) runs in, importable
without numpy (the command line lists them)."""

from __future__ import annotations

from typing import Final

__all__ = ["MOVED_LOGITS", "RUNTIMES"]

RUNTIMES: Final = ("numpy", "onnx-fp32", "onnx-int8")
"""What computes a one-logit model's logits (:meth:`veracity.reader.head.OneLogitModel.in_runtime`):
``numpy`` and ``onnx-fp32`` give the same logits (to about 1e-5); ``onnx-int8`` moves them, so a
guard run so has a threshold and a version of its own (:meth:`veracity.guard.model.Guard.using`)."""

MOVED_LOGITS: Final = frozenset({"onnx-int8"})
"""The runtimes whose logits are not numpy's: a model read in one has a version of its own
(``<version>-int8``), and what is fitted or calibrated on its logits records the runtime."""
