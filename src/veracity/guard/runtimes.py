"""The names of the guard's runtimes, importable without numpy (the command line lists them)."""

from __future__ import annotations

from typing import Final

__all__ = ["RUNTIMES"]

RUNTIMES: Final = ("numpy", "onnx-fp32", "onnx-int8")
"""What computes a guard's scores (:meth:`veracity.guard.model.Guard.using`): ``numpy`` and
``onnx-fp32`` give the same scores; ``onnx-int8`` has a threshold and a version of its own."""
