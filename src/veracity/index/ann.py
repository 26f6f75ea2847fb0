"""Approximate dense search: an IVF index with 8-bit scalar quantization (faiss), filtered while it searches.

One index per tenant partition. Its vectors are the partition's unit rows,
its ids the chunk keys, its metric the inner product (the cosine of unit rows):

- **build**: ``nlist`` k-means cells trained on a seeded sample of the rows,
  then every row added (in batches) as 8-bit codes to the list of its cell;
- **search**: the query is compared with the cells' centres, the ``nprobe``
  nearest cells are scanned (more when few rows are eligible), and only ids
  the **selector** accepts are ranked (a bitmap over the eligible chunk keys, tested inside faiss' scan: an
  ineligible row is never scored nor returned). When fewer than
  ``min(count, eligible rows)`` candidates come back (a selective filter leaves
  few eligible rows in the probed cells), ``nprobe`` doubles until enough are
  found or every cell was scanned, so the count is guaranteed;
- the caller rescores the candidates with the float rows (exact cosines, ties
  by chunk id), so the approximation only decides *which* rows are scored.

faiss is optional (``pip install 'veracity[ann]'``): :func:`faiss_module` returns
``None`` without it and callers keep the exact and binary plans. Pure logic, no
file I/O (:mod:`veracity.index.sqlite.artefacts` persists the index). Recall and
latency are measured by ``benchmarks/bench_ann.py``; the defaults below come
from its table.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "ANN_FORMAT",
    "ANN_FORMAT_VERSION",
    "ANN_MIN_ROWS",
    "ANN_OVERSAMPLE",
    "DEFAULT_NPROBE",
    "INSTALL_HINT",
    "REBUILD_SHARE",
    "AnnIndex",
    "AnnParams",
    "ann_search",
    "build_ann",
    "default_nlist",
    "faiss_module",
    "keys_digest",
    "selection_bitmap",
]

ANN_FORMAT: Final = "faiss-ivf-sq8"
ANN_FORMAT_VERSION: Final = 1

INSTALL_HINT: Final = "install the approximate index with: pip install 'veracity[ann]'"

ANN_MIN_ROWS: Final = 100_000
"""Partitions with at least this many rows get an approximate index, and queries use it when at least
this many rows are eligible; below, the exact and binary plans answer. Measured (``bench_ann.py``,
real `use` chunk vectors tiled with noise 0.02, 200 CMRC questions, 2 shared cores; all eligible):

| rows    | exact p50 | binary (oversample 32) recall / p50 | ann (nprobe 64) recall / p50 | build |
|---------|-----------|-------------------------------------|------------------------------|-------|
| 4,998   | 0.16 ms   | 0.993 / 0.27 ms                     | 0.991 / 0.33 ms              | 0.2 s |
| 100,000 | 16.7 ms   | 0.964 / 1.8 ms                      | 0.997 / 0.8 ms               | 7.8 s |
| 300,000 | 35.9 ms   | 0.936 / 6.3 ms                      | 0.986 / 1.4 ms               | 40 s  |

and on the synthetic Gaussian mixture at 1M rows: exact 258 ms, binary 0.968 / 29 ms, ann 1.000 / 2.3 ms,
build 218 s.

Below ~100k rows binary search is ≤ 2 ms at recall ≥ 0.96 and needs no build; above it its recall
falls under 0.95 and its time grows with the rows, while the approximate index stays near 1 ms.
With 5 % of the rows eligible binary is faster (100k–1M rows: 0.7–7 ms vs 2.4–12 ms, recall ≥ 0.96),
hence the threshold counts eligible rows, not the partition's."""

DEFAULT_NPROBE: Final = 64
"""Cells scanned first, times (covered rows / eligible rows) so a selective filter still meets enough
eligible rows; doubled while too few come back. recall@10 on the tiled real vectors, all eligible:
nprobe 32 → 0.961 (100k) / 0.972 (300k), 64 → 0.997 / 0.986, 128 → 0.999 / 0.995 at about twice
the time of 64; so 64."""

ANN_OVERSAMPLE: Final = 4
"""Candidates taken from the approximate index per result wanted (``oversample × k``), then rescored
with the float rows. 4 and 8 gave the same recall at every nprobe measured (100k rows): the misses
are rows in unprobed cells, not 8-bit ranking errors; so 4."""

REBUILD_SHARE: Final = 0.1
"""``sync`` rebuilds a partition's index once rows it does not cover (added since) plus rows it covers
that are gone exceed this share of the partition; until then the uncovered rows are scored exactly."""

_TRAIN_PER_CELL: Final = 40  # faiss warns below 39 training points per centroid
_BATCH_ROWS: Final = 65_536


def faiss_module() -> ModuleType | None:
    """The ``faiss`` module, or ``None`` when it is not installed (callers fall back to exact search)."""
    try:
        import faiss
    except ImportError:
        return None
    return faiss


@dataclass(frozen=True, slots=True)
class AnnParams:
    """Build parameters, recorded in the artefact's manifest."""

    nlist: int
    train_rows: int
    seed: int = 17
    quantizer: str = "QT_8bit"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"nlist": self.nlist, "train_rows": self.train_rows, "seed": self.seed,
                "quantizer": self.quantizer}  # fmt: skip


def default_nlist(rows: int) -> int:
    """About ``4·√rows`` cells (faiss' usual guidance for IVF), at least 1."""
    return max(1, round(4 * math.sqrt(max(rows, 1))))


def keys_digest(keys: npt.NDArray[np.int64]) -> str:
    """sha256 of the sorted keys as little-endian int64: which rows an artefact covers."""
    ordered = np.sort(np.asarray(keys, dtype="<i8"))
    return hashlib.sha256(ordered.tobytes()).hexdigest()


@dataclass(frozen=True, slots=True)
class AnnIndex:
    """A built (or loaded) approximate index and the sorted chunk keys it covers."""

    index: Any
    """The faiss ``IndexIVFScalarQuantizer``."""
    keys: npt.NDArray[np.int64]
    params: AnnParams

    @property
    def rows(self) -> int:
        """How many rows the index holds."""
        return int(self.index.ntotal)


def build_ann(
    keys: npt.NDArray[np.int64],
    matrix: npt.NDArray[np.float32],
    *,
    nlist: int | None = None,
    seed: int = 17,
    batch_rows: int = _BATCH_ROWS,
) -> AnnIndex:
    """An IVF-SQ8 inner-product index over ``matrix`` (unit rows) with ``keys`` as ids.

    ``ImportError`` naming the install line when faiss is missing. The training
    sample is ``40 × nlist`` rows drawn with ``seed`` (every row when fewer).
    """
    faiss = faiss_module()
    if faiss is None:
        raise ImportError(f"faiss is not installed; {INSTALL_HINT}")
    keys = np.asarray(keys, dtype=np.int64)
    rows, dim = matrix.shape
    if keys.shape != (rows,) or rows == 0:
        raise ValueError(f"need one key per row and at least one row, got {keys.shape} keys, {rows} rows")
    cells = max(1, min(nlist or default_nlist(rows), rows // _TRAIN_PER_CELL))
    rng = np.random.default_rng(seed)
    train_rows = min(rows, _TRAIN_PER_CELL * cells)
    sample = np.sort(rng.choice(rows, size=train_rows, replace=False)) if train_rows < rows else None
    training = np.ascontiguousarray(matrix if sample is None else matrix[sample], dtype=np.float32)
    coarse = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFScalarQuantizer(
        coarse, dim, cells, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    index.cp.seed = seed
    index.cp.min_points_per_centroid = 1  # the sample has 40 per cell unless the partition is smaller
    index.train(training)
    del training
    for first in range(0, rows, batch_rows):
        part = np.ascontiguousarray(matrix[first : first + batch_rows], dtype=np.float32)
        index.add_with_ids(part, keys[first : first + batch_rows])
    params = AnnParams(nlist=cells, train_rows=train_rows, seed=seed)
    return AnnIndex(index=index, keys=np.sort(keys), params=params)


def selection_bitmap(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """The bitmap faiss' ``IDSelectorBitmap`` reads: bit ``key & 7`` of byte ``key >> 3`` set per key."""
    keys = np.asarray(keys, dtype=np.int64)
    if keys.size and int(keys.min()) < 0:
        raise ValueError("chunk keys are never negative")
    flags = np.zeros(int(keys.max(initial=0)) + 1, dtype=bool)
    flags[keys] = True
    return np.packbits(flags, bitorder="little")


@dataclass(frozen=True, slots=True)
class AnnResult:
    """Candidate keys (best first by approximate score) and how the search went."""

    keys: npt.NDArray[np.int64]
    nprobe: int
    widened: int


def ann_search(
    ann: AnnIndex,
    query: npt.NDArray[np.float32],
    count: int,
    *,
    selected: npt.NDArray[np.uint8] | None,
    eligible: int,
    nprobe: int = DEFAULT_NPROBE,
    scale: bool = True,
) -> AnnResult:
    """Up to ``count`` candidate keys among the selected ones, at least ``min(count, eligible)``.

    ``selected`` is a :func:`selection_bitmap` of the eligible covered keys
    (``None``: every covered key is eligible); ``eligible`` is how many keys it
    selects. The first pass scans ``nprobe × rows / eligible`` cells with
    ``scale`` (a filter keeping 5 % of the rows leaves 1/20 as many eligible
    rows per cell), else ``nprobe``; it doubles while too few candidates came
    back and cells remain unscanned. With every cell scanned, every selected
    row was seen, so the count is guaranteed.
    """
    faiss = faiss_module()
    assert faiss is not None  # an AnnIndex exists only where faiss does
    index = ann.index
    vector = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
    wanted = min(int(count), int(eligible))
    selector = None
    if selected is not None:
        selector = faiss.IDSelectorBitmap(int(selected.size), faiss.swig_ptr(selected))
    start = int(nprobe)
    if scale and eligible:
        start = math.ceil(start * ann.rows / eligible)
    probes, widened = max(1, min(start, index.nlist)), 0
    while True:
        params = faiss.SearchParametersIVF(sel=selector, nprobe=probes) if selector is not None else (
            faiss.SearchParametersIVF(nprobe=probes)
        )  # fmt: skip
        _, ids = index.search(vector, int(count), params=params)
        found = ids[0][ids[0] >= 0]
        if found.size >= wanted or probes >= index.nlist:
            return AnnResult(found.astype(np.int64), probes, widened)
        probes, widened = min(probes * 2, index.nlist), widened + 1
