"""Dense search over a tenant's vectors: the plans of ``SQLiteSearchIndex.dense_search``.

In ``DenseMode.RESIDENT`` (default) the tenant's matrix is read once from the
vec0 table and kept until the index changes; then, per query, over the eligible
rows only:

- ``resident-ann``: candidates from the tenant's approximate index when enough
  rows are eligible (:mod:`veracity.index.sqlite.approximate`);
- ``resident-binary``: a sign-bit Hamming pre-selection of ``oversample × k``
  rows (at least ``min_candidates``) once the scan would read ``quantized_min_rows`` rows
  (:mod:`veracity.index.quantized`);
- ``resident-exact``: every eligible row;

each rescored with the float rows (exact cosines, ties by chunk id). In
``DenseMode.SQL`` (or when the matrix cannot be read) the vec0 table answers:
point lookups and exact numpy for small eligible sets, else its KNN with the
tenant and document filters inside the search.

A mixin: the index supplies the tenant's view with its eligibility mask and the
top-``k`` cut (see the class annotations); :class:`~veracity.index.sqlite.entry.SearchEntry`
checks the arguments and reads the model before ``_dense`` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...model.errors import EmbedderMismatchError, SearchIndexError
from ..dense import Embedder
from ..quantized import QuantizedRows, hamming_candidates, quantize
from .entry import Among
from .vectors import fetch_vectors, knn, load_partition
from .views import IndexState, TenantView
from .writer import VectorModel

__all__ = [
    "FULL_SCAN_SHARE",
    "SQL_FETCH_COST_RATIO",
    "DenseMode",
    "ResidentDense",
    "check_embedder_fits",
]

SQL_FETCH_COST_RATIO: Final = 40
"""In ``DenseMode.SQL``, fetching one vector by key costs about as much as KNN-scanning this many rows
(sqlite-vec 0.1.9, 512 dims, 100k chunks: ~50-75 us per point lookup vs ~1.5 us per scanned row;
measured crossover ~800 eligible chunks in a 33k-chunk partition). Eligible sets smaller than
``partition / ratio`` are fetched and scored exactly in numpy."""


FULL_SCAN_SHARE: Final = 0.2
"""Resident dense search multiplies the whole tenant matrix (no copy) once more than this share of
its chunks is eligible; below it, it gathers the eligible rows first (measured crossover ~0.2)."""


class DenseMode(StrEnum):
    """How :meth:`SQLiteSearchIndex.dense_search` scores (see the module docstring)."""

    RESIDENT = "resident"
    SQL = "sql"


def check_embedder_fits(model: VectorModel | None, embedder: Embedder) -> None:
    """``EmbedderMismatchError`` unless ``embedder`` made (or may make) the vectors of ``model``."""
    if model is not None and (model.model_id != embedder.model_id or model.dim != embedder.dim):
        raise EmbedderMismatchError(
            f"the index holds vectors of {model.model_id!r} (dim {model.dim}); the embedder is "
            f"{embedder.model_id!r} (dim {embedder.dim}); open it with the index's model, "
            "or build a new index for the new model"
        )


class ResidentDense:
    """The dense half of ``SQLiteSearchIndex`` (a mixin; see the module docstring)."""

    _conn: Any
    dense_mode: DenseMode
    quantized_min_rows: int | None
    oversample: int
    min_candidates: int
    sql_exact_max: int | None
    last_dense_plan: str
    _eligible_rows: Callable[[IndexState, Among], tuple[TenantView, npt.NDArray[np.bool_]] | None]
    _top: Callable[[TenantView, npt.NDArray[np.intp], npt.NDArray[np.floating], int], list[tuple[str, float]]]
    _dense_ann: Callable[..., npt.NDArray[np.intp] | None]

    def _dense(
        self, state: IndexState, among: Among, model: VectorModel, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        """The plans above, for :meth:`.entry.SearchEntry.dense_search` (which checks the arguments)."""
        eligible = self._eligible_rows(state, among)
        if eligible is None:
            return []
        view, positions = eligible[0], np.flatnonzero(eligible[1])
        if self.dense_mode is DenseMode.RESIDENT:
            matrix = self._matrix(state, view, model)
            if matrix is not None:
                self.last_dense_plan = "resident-exact"
                full_scan = positions.size > view.keys.size * FULL_SCAN_SHARE
                scanned = view.keys.size if full_scan else positions.size  # rows exact search would read
                found = self._dense_ann(state, view, model, query, positions, k)
                if found is not None:
                    scores = np.einsum("ij,j->i", matrix[found], query)
                    self.last_dense_plan = "resident-ann"
                    return self._top(view, found, scores, k)
                minimum = self.quantized_min_rows
                count = max(self.oversample * k, self.min_candidates)
                if minimum is not None and scanned >= minimum and positions.size > count:
                    self.last_dense_plan = "resident-binary"
                    quantized = self._quantized(state, view.tenant, matrix)
                    positions = hamming_candidates(quantized, query, positions, count, full_scan=full_scan)
                    scores = np.einsum("ij,j->i", matrix[positions], query)  # no BLAS threads for 1k rows
                    return self._top(view, positions, scores, k)
                if full_scan:
                    scores = (matrix @ query)[positions]
                else:
                    scores = matrix[positions] @ query
                return self._top(view, positions, scores, k)
        return self._dense_sql(view, model, query, positions, k)

    def _matrix(
        self, state: IndexState, view: TenantView, model: VectorModel
    ) -> npt.NDArray[np.float32] | None:
        if view.tenant not in state.matrices:
            loaded = self._load_matrix(view, model)
            matrix = None
            if loaded is not None:
                keys, matrix = loaded
                if not np.array_equal(keys, view.keys):
                    raise SearchIndexError(
                        f"tenant {view.tenant!r}: {view.keys.size} indexed chunks but {keys.size} vectors "
                        "of the index model; sync the index again"
                    )
            state.matrices[view.tenant] = matrix
        return state.matrices[view.tenant]

    def _load_matrix(
        self, view: TenantView, model: VectorModel
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        """The tenant's vectors as ``(keys ascending, matrix)``; ``None`` when they cannot be read whole.

        SQLite reads the vec0 table's storage; PostgreSQL overrides it (and ``_dense_sql``).
        """
        return load_partition(self._conn, model.table, view.tenant, model.dim)

    def _quantized(self, state: IndexState, tenant: str, matrix: npt.NDArray[np.float32]) -> QuantizedRows:
        """The tenant matrix's sign bits (no int8 codes: rescoring reads the floats), once per generation."""
        found = state.quantized.get(tenant)
        if found is None:
            found = state.quantized[tenant] = quantize(matrix, codes=False)  # rescored with floats
        return found

    def _dense_sql(
        self,
        view: TenantView,
        model: VectorModel,
        query: npt.NDArray[np.float32],
        positions: npt.NDArray[np.intp],
        k: int,
    ) -> list[tuple[str, float]]:
        limit = self.sql_exact_max
        if limit is None:
            limit = view.keys.size // SQL_FETCH_COST_RATIO
        if positions.size <= limit:
            self.last_dense_plan = "sql-fetch-exact"
            keys, matrix = fetch_vectors(self._conn, model.table, view.keys[positions].tolist(), model.dim)
            found = np.searchsorted(view.keys, keys)
            return self._top(view, found, matrix @ query, k)
        self.last_dense_plan = "vec0-knn"
        doc_keys = np.unique(view.doc_keys[positions]).tolist()
        rows = knn(self._conn, model.table, view.tenant, query, k=k, doc_keys=doc_keys)
        if not rows:
            return []
        found = np.searchsorted(view.keys, np.array([key for key, _ in rows], dtype=np.int64))
        return self._top(view, found, np.array([score for _, score in rows]), k)
