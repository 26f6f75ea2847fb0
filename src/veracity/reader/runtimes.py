"""The names of the runtimes a one-logit model (the sentence reader, the guard) runs in, importable
without numpy (the command line lists them)."""

from __future__ import annotations

from typing import Final

__all__ = ["RUNTIMES"]

RUNTIMES: Final = ("numpy", "onnx-fp32", "onnx-int8")
"""What computes a one-logit model's logits (:meth:`veracity.reader.head.OneLogitModel.in_runtime`):
``numpy`` and ``onnx-fp32`` give the same logits (to about 1e-5); ``onnx-int8`` moves them, so a
guard run so has a threshold and a version of its own (:meth:`veracity.guard.model.Guard.using`)."""
