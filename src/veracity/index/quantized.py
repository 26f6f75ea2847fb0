"""Quantized dense search: sign bits for a Hamming pre-selection, then an exact rescoring.

Every unit vector is kept twice more, both derived from the float rows:

- **sign bits**: bit ``j`` is set when component ``j`` is positive, packed into
  ``uint64`` words (512 dims → 8 words, 64 bytes a vector, 1/32 of float32),
  stored word-major (one contiguous array per word) so the distance is 8 vector
  operations over the rows rather than a reduction along each short row;
- **int8 codes** with one scale per vector (``round(127 · x / max|x|)``), 1/4 of float32.

Search over a set of row positions (the eligible rows, never others): the Hamming
distance of the query's sign bits to each row's (``numpy.bitwise_count`` over the
XOR), the ``oversample × k`` nearest by Hamming distance (ties by position), then
those candidates rescored with the float rows (exact cosine) or with the int8
codes. Pure numpy; no I/O. Recall against exact float search is measured by
``benchmarks/bench_quantized.py``; the defaults below come from its table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_OVERSAMPLE",
    "MIN_CANDIDATES",
    "QUANTIZED_MIN_ROWS",
    "QuantizedRows",
    "hamming_candidates",
    "hamming_distances",
    "quantize",
    "rescore_int8",
    "sign_bits",
]

DEFAULT_OVERSAMPLE: Final = 32
"""Candidates kept by Hamming distance per result wanted (``oversample × k``), before rescoring.
Measured (``bench_quantized.py``, 4,998 real `use` chunk vectors of CMRC + DRCD + SQuAD, 300 CMRC
questions): recall@10 against exact float 0.940 at 8, 0.977 at 16, 0.994 at 32; rescoring 320
rows costs ~0.1 ms, so 32."""

MIN_CANDIDATES: Final = 2_000
"""Candidates kept by Hamming distance whatever ``k`` (``max(oversample × k, MIN_CANDIDATES)``): a
larger set only adds rows to rescore, so recall can only rise. Measured on the 100k synthetic mixture
(``bench_hybrid_100k.py``'s vectors: 4,096 clusters, queries with noise), 60 queries, k = 10:
recall@10 0.780 with 320 candidates (1.1 ms), 0.905 with 1,000 (1.1 ms), 0.962 with 2,000 (1.6 ms)."""

QUANTIZED_MIN_ROWS: Final = 20_000
"""Exact float search reads fewer rows than this; quantized search at or above it. Measured on this
machine's kind (2 shared cores): exact scan of 5k × 512 ≈ 0.2 ms (no gain to have), of 20k ≈ 13 ms
under load against ≈ 0.7 ms for Hamming + rescoring (see the README's quantized table)."""


@dataclass(frozen=True, slots=True)
class QuantizedRows:
    """Sign bits and int8 codes of a matrix of unit rows, aligned with it by position."""

    bits: npt.NDArray[np.uint64]
    """``(words, rows)``: word ``w`` of every row's sign bits, contiguous."""
    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]

    @property
    def rows(self) -> int:
        """How many rows."""
        return int(self.bits.shape[1])

    @property
    def nbytes(self) -> int:
        """Memory held by the bits, codes and scales."""
        return int(self.bits.nbytes + self.codes.nbytes + self.scales.nbytes)


def sign_bits(matrix: npt.NDArray[np.floating]) -> npt.NDArray[np.uint64]:
    """Packed sign bits of each row (``x > 0``), padded to whole 64-bit words."""
    rows = np.atleast_2d(matrix)
    dim = rows.shape[1]
    words = max(1, -(-dim // 64))
    packed = np.packbits(rows > 0, axis=1)
    padded = np.zeros((rows.shape[0], words * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view(np.uint64)


_QUANTIZE_BATCH: Final = 65_536


def quantize(matrix: npt.NDArray[np.float32], *, codes: bool = True) -> QuantizedRows:
    """Sign bits, int8 codes and per-row scales of ``matrix`` (rows of unit length).

    Done in batches of rows: whole-matrix temporaries would briefly need twice the
    float matrix again (4 GB more at 1M × 512). Without ``codes`` only the sign bits
    are made (codes and scales empty): a caller that rescores with the float rows
    needs no int8 copy (512 MB at 1M × 512).
    """
    rows = np.asarray(matrix, dtype=np.float32)
    count, dim = rows.shape
    words = max(1, -(-dim // 64))
    bits = np.empty((words, count), dtype=np.uint64)
    kept = count if codes else 0
    int8 = np.empty((kept, dim), dtype=np.int8)
    scales = np.empty(kept, dtype=np.float32)
    for first in range(0, count, _QUANTIZE_BATCH):
        part = rows[first : first + _QUANTIZE_BATCH]
        last = first + part.shape[0]
        bits[:, first:last] = sign_bits(part).T
        if not codes:
            continue
        peak = np.abs(part).max(axis=1) if part.size else np.zeros(part.shape[0], np.float32)
        scales[first:last] = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        int8[first:last] = np.clip(np.rint(part / scales[first:last, None]), -127, 127).astype(np.int8)
    return QuantizedRows(bits=bits, codes=int8, scales=scales)


def hamming_distances(
    quantized: QuantizedRows, query: npt.NDArray[np.float32], positions: npt.NDArray[np.intp] | None
) -> npt.NDArray[np.uint16]:
    """Hamming distance of ``query``'s sign bits to the rows at ``positions`` (every row if ``None``)."""
    query_bits = sign_bits(np.asarray(query, dtype=np.float32)[None, :])[0]
    total: npt.NDArray[np.uint16] | None = None
    for word, value in enumerate(query_bits):
        column = quantized.bits[word] if positions is None else quantized.bits[word][positions]
        counts = np.bitwise_count(column ^ value).astype(np.uint16)
        total = counts if total is None else np.add(total, counts, out=total)
    assert total is not None
    return total


def hamming_candidates(
    quantized: QuantizedRows,
    query: npt.NDArray[np.float32],
    positions: npt.NDArray[np.intp],
    count: int,
    *,
    full_scan: bool = False,
) -> npt.NDArray[np.intp]:
    """The ``count`` of ``positions`` nearest to ``query`` by Hamming distance, ties by position.

    The result is a subset of ``positions`` (ascending). ``full_scan`` computes the
    distances of every row and then keeps those at ``positions`` (cheaper than gathering
    when most rows are wanted); the others' distances are dropped unread.
    """
    if positions.size <= count:
        return positions
    if full_scan:
        distances = hamming_distances(quantized, query, None)[positions]
    else:
        distances = hamming_distances(quantized, query, positions)
    cut = np.partition(distances, count - 1)[count - 1]
    inside = np.flatnonzero(distances < cut)
    boundary = np.flatnonzero(distances == cut)[: count - inside.size]  # lowest positions first
    return positions[np.sort(np.concatenate((inside, boundary)))]


def rescore_int8(
    quantized: QuantizedRows, query: npt.NDArray[np.float32], positions: npt.NDArray[np.intp]
) -> npt.NDArray[np.float32]:
    """Approximate cosine of ``query`` with the rows at ``positions`` from their int8 codes."""
    codes = quantized.codes[positions].astype(np.float32)
    return (codes @ np.asarray(query, dtype=np.float32)) * quantized.scales[positions]
