"""Sign bits, int8 codes and the Hamming pre-selection (pure numpy)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veracity.index.quantized import hamming_candidates, hamming_distances, quantize, rescore_int8, sign_bits


def unit_rows(rows: int, dim: int, seed: int) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_hamming_distance_counts_differing_signs() -> None:
    matrix = unit_rows(50, 100, 1)  # 100 dims: not a multiple of 64, padding must not count
    query = unit_rows(1, 100, 2)[0]
    expected = ((matrix > 0) != (query > 0)).sum(axis=1)
    assert np.array_equal(hamming_distances(quantize(matrix), query, None), expected)
    positions = np.array([3, 7, 40])
    assert np.array_equal(hamming_distances(quantize(matrix), query, positions), expected[positions])
    assert sign_bits(matrix).shape == (50, 2)


def test_int8_rescoring_is_close_to_float() -> None:
    matrix = unit_rows(200, 512, 3)
    query = unit_rows(1, 512, 4)[0]
    positions = np.arange(200)
    assert np.abs(rescore_int8(quantize(matrix), query, positions) - matrix @ query).max() < 0.01


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 120),
    count=st.integers(1, 40),
    seed=st.integers(0, 10_000),
    full_scan=st.booleans(),
)
def test_candidates_are_a_subset_of_positions_nearest_first(rows, count, seed, full_scan) -> None:
    matrix = unit_rows(rows, 64, seed)
    matrix[rows // 2 :] = matrix[: rows - rows // 2]  # duplicates: ties must break by position
    rng = np.random.default_rng(seed)
    positions = np.sort(rng.choice(rows, size=int(rng.integers(1, rows + 1)), replace=False))
    query = unit_rows(1, 64, seed + 1)[0]
    quantized = quantize(matrix)
    found = hamming_candidates(quantized, query, positions, count, full_scan=full_scan)
    assert set(found.tolist()) <= set(positions.tolist())
    assert found.size == min(count, positions.size) and np.all(np.diff(found) > 0)
    measured = hamming_distances(quantized, query, positions).tolist()
    distances = dict(zip(positions.tolist(), measured, strict=True))
    ranked = sorted(positions.tolist(), key=lambda p: (distances[p], p))
    assert found.tolist() == sorted(ranked[: found.size])


def test_sign_bits_alone_equal_those_made_with_the_codes() -> None:
    matrix = np.random.default_rng(3).standard_normal((700, 130)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    full, bits_only = quantize(matrix), quantize(matrix, codes=False)
    assert np.array_equal(full.bits, bits_only.bits)
    assert bits_only.codes.size == 0 and bits_only.scales.size == 0 and bits_only.rows == 700
