"""The ``resident-ann`` plan's read side: which artefact serves a tenant now, and its candidates.

An artefact is loaded (every check of :func:`~veracity.index.sqlite.artefacts.load_artefact`,
sha256 included) once per file: a reader keeps it across index generations for as
long as the manifest file on disk is the same one (same size, mtime, inode), and
per generation works out which of the tenant's current rows it covers.

Candidates for a query are the artefact's nearest *eligible covered* rows
(filtered inside faiss by a bitmap of their keys, widened until enough come
back) plus every eligible row the artefact does not cover (added since it was
built), all rescored exactly by the caller. Rows it covers that are gone from
the index are never selected, so never returned.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ...catalog.catalog import Catalog
from ..ann import AnnIndex, ann_search, faiss_module, selection_bitmap
from ..dense import Embedder
from .artefacts import load_artefact, manifest_path, refresh_artefacts
from .sync import SyncReport
from .tables import IndexTables
from .views import IndexState, TenantView
from .writer import VectorModel, read_vector_model

__all__ = ["AnnReader", "AnnView", "ApproximateDense"]

_Stamp = tuple[int, int, int]


@dataclass
class AnnView:
    """An artefact lined up with one tenant's rows at one generation."""

    ann: AnnIndex
    covered: npt.NDArray[np.bool_]
    """Per position of the tenant's rows: the artefact holds that chunk key."""
    whole: bool
    """Every row the artefact holds is still in the tenant (so, with all eligible, no selector is needed)."""
    selection: tuple[object, npt.NDArray[np.uint8] | None, int] | None = field(default=None)
    """The last eligibility mask seen, its bitmap and eligible covered count (a principal's mask repeats)."""


class AnnReader:
    """Loads artefacts from ``folder`` and keeps them while their manifests stay the same."""

    def __init__(self, folder: Path | None) -> None:
        """Read artefacts under ``folder`` (``None``: there are none, e.g. an in-memory database)."""
        self.folder = folder
        self._loaded: dict[tuple[str, str], tuple[_Stamp, AnnIndex | None]] = {}
        self._lock = threading.Lock()
        self.last_problem = ""

    def view(self, version: int, model: VectorModel, tenant: TenantView) -> AnnView | None:
        """The usable artefact for ``tenant`` lined up with its rows, or ``None`` (then exact/binary)."""
        if self.folder is None:
            return None
        path = manifest_path(self.folder, model, tenant.tenant)
        try:
            status = os.stat(path)
        except OSError:
            return None
        stamp = (status.st_size, status.st_mtime_ns, status.st_ino)
        key = (model.table, tenant.tenant)
        with self._lock:
            cached = self._loaded.get(key)
        if cached is None or cached[0] != stamp:
            loaded = load_artefact(self.folder, version, model, tenant.tenant)
            self.last_problem = loaded.problem
            cached = (stamp, loaded.ann)
            with self._lock:
                self._loaded[key] = cached
        ann = cached[1]
        if ann is None:
            return None
        where = np.minimum(np.searchsorted(ann.keys, tenant.keys), max(ann.keys.size - 1, 0))
        covered = ann.keys[where] == tenant.keys if ann.keys.size else np.zeros(tenant.keys.size, bool)
        return AnnView(ann=ann, covered=covered, whole=int(covered.sum()) == ann.rows)

    @staticmethod
    def candidates(
        view: AnnView,
        keys: npt.NDArray[np.int64],
        allowed: npt.NDArray[np.bool_],
        positions: npt.NDArray[np.intp],
        query: npt.NDArray[np.float32],
        count: int,
        nprobe: int,
    ) -> npt.NDArray[np.intp] | None:
        """Positions to rescore (a subset of ``positions``), or ``None`` when the artefact covers too little.

        ``allowed`` is the eligibility mask ``positions`` came from (its identity
        keys the bitmap cache); ``keys`` are the tenant's chunk keys by position.
        """
        inside = view.covered[positions]
        covered, uncovered = positions[inside], positions[~inside]
        if uncovered.size > covered.size:
            return None  # mostly rows added since the build: exact or binary search serves better
        cached = view.selection
        if cached is not None and cached[0] is allowed:
            selected, eligible = cached[1], cached[2]
        else:
            eligible = int(covered.size)
            selected = None if view.whole and eligible == view.ann.rows else selection_bitmap(keys[covered])
            view.selection = (allowed, selected, eligible)
        if eligible == 0:
            return uncovered
        found = ann_search(view.ann, query, count, selected=selected, eligible=eligible, nprobe=nprobe)
        return np.concatenate((np.searchsorted(keys, found.keys), uncovered))


class ApproximateDense:
    """The approximate-index half of ``SQLiteSearchIndex`` (a mixin: needs ``_ann``, ``_conn``,
    ``_tables``, ``ann_min_rows``, ``ann_nprobe``, ``ann_oversample`` and a ``sync`` further on)."""

    _ann: AnnReader
    _conn: Any
    ann_min_rows: int | None
    ann_nprobe: int
    ann_oversample: int
    _tables: Callable[[], IndexTables]  # an annotation only: the index's own method must win

    def _dense_ann(
        self,
        state: IndexState,
        view: TenantView,
        model: VectorModel,
        query: npt.NDArray[np.float32],
        positions: npt.NDArray[np.intp],
        k: int,
    ) -> npt.NDArray[np.intp] | None:
        """Positions to rescore from the tenant's approximate index, or ``None`` when it does not apply.

        It applies from ``ann_min_rows`` eligible rows (fewer are cheaper to scan exactly) and
        when the tenant has a usable artefact.
        """
        minimum = self.ann_min_rows
        if minimum is None or positions.size < minimum or positions.size <= self.ann_oversample * k:
            return None
        if view.tenant not in state.ann:
            state.ann[view.tenant] = self._ann.view(state.tables.version, model, view)
        ann = state.ann[view.tenant]
        if ann is None or state.eligible is None:
            return None
        return self._ann.candidates(
            ann, view.keys, state.eligible[1], positions, query, self.ann_oversample * k, self.ann_nprobe
        )

    def sync(self, catalog: Catalog, embedder: Embedder | None, **options: Any) -> SyncReport:
        """``IndexWriter.sync``, then build the approximate indexes that are missing or stale."""
        report: SyncReport = super().sync(catalog, embedder, **options)  # type: ignore[misc]
        self.refresh_ann()
        return report

    def refresh(self, catalog: Catalog, document_ids: Sequence[str]) -> bool:
        """``IndexWriter.refresh``, then the approximate indexes, as after :meth:`sync`."""
        touched: bool = super().refresh(catalog, document_ids)  # type: ignore[misc]
        self.refresh_ann()
        return touched

    def refresh_ann(self) -> list[str]:
        """Build the version's missing or stale approximate-index artefacts; return the tenants built.

        Nothing happens without faiss, for an in-memory database, or with ``ann_min_rows=None``.
        """
        folder, minimum = self._ann.folder, self.ann_min_rows
        if folder is None or minimum is None or faiss_module() is None:
            return []
        tables = self._tables()
        model = read_vector_model(self._conn, tables)
        if model is None:
            return []
        return refresh_artefacts(self._conn, tables, model, folder, minimum)  # no read lock held meanwhile
