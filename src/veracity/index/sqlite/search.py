"""``SQLiteSearchIndex``: the derived search index inside the catalog's SQLite file.

A drop-in :class:`veracity.index.snapshot.SearchBackend` that lives on the same apsw
connection as the :class:`~veracity.catalog.sqlite.SQLiteStore`. The file holds
index *versions* (:mod:`veracity.index.sqlite.versions`); an instance reads the
published one (following the pointer from query to query) or, when built with
``version=N``, that version only (how a new version is built and verified).
Each version has:

- ``index_documents`` / ``index_chunks``: every indexed document and chunk *as
  it was when indexed* (the index snapshot the eligibility step reads; the live
  catalog stays the truth and the return gate asks it again);
- one contentless FTS5 table per tenant (:mod:`veracity.index.sqlite.fts`); term
  statistics are computed per query over the eligible chunks only;
- one sqlite-vec vec0 table per embedding model, tenant as partition key,
  status and doc key as metadata (:mod:`veracity.index.sqlite.vectors`).

Reading: BM25 is the plan of :mod:`veracity.index.sqlite.bm25_plan` (shared with
PostgreSQL) over FTS5 postings, with the in-memory index's formula (equal
scores). Dense search is the plans of :mod:`veracity.index.sqlite.resident`
(exact, sign-bit pre-selection, or the approximate index of
:mod:`veracity.index.sqlite.approximate`, each rescored exactly); only eligible
rows are ever ranked or returned.

The eligibility step runs in SQL (:mod:`veracity.index.sqlite.eligibility`): one
query gives every document of the tenant its primary exclusion reason, and the
outcome is kept per principal class and validity interval until the index changes.

Writing: :meth:`SQLiteSearchIndex.sync` brings the index in line with a
catalog: new documents are tokenized, embedded in batches and indexed; changed
governance metadata (a status) is updated without re-embedding; documents gone
from the catalog are removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...catalog.sql import scalar
from ...catalog.sqlite import SQLiteStore
from ...model.governance import EligibilityScope, EligibleDocuments
from ..ann import ANN_MIN_ROWS, ANN_OVERSAMPLE, DEFAULT_NPROBE
from ..dense import Embedder
from .approximate import AnnReader, ApproximateDense
from .artefacts import ann_folder
from .bm25_plan import PostingsBM25
from .eligibility import EligibilityStep
from .entry import SearchEntry
from .filter import eligible_keys
from .fts import Postings, read_postings
from .opened import OpenedIndex
from .resident import SQL_FETCH_COST_RATIO, DenseMode, ResidentDense, check_embedder_fits
from .sync import IndexWriter, SyncReport
from .tables import IndexTables
from .versions import read_pointer
from .views import (
    IndexState,
    TenantView,
    VersionedReads,
)
from .writer import VectorModel, read_vector_model

__all__ = ["SQL_FETCH_COST_RATIO", "DenseMode", "IndexStats", "SQLiteSearchIndex", "SyncReport"]


@dataclass(frozen=True, slots=True)
class IndexStats:
    """Counts and identity of an index version."""

    version: int
    generation: int
    documents: int
    chunks: int
    tenants: int
    vectors: int
    model_id: str | None
    dim: int | None

    @classmethod
    def counted(
        cls, tables: IndexTables, generation: int, model: VectorModel | None, count: Callable[[str], int]
    ) -> IndexStats:
        """The stats of ``tables`` with ``count(table)`` rows in each (SQLite and PostgreSQL alike)."""
        return cls(
            version=tables.version,
            generation=generation,
            documents=count(tables.documents),
            chunks=count(tables.chunks),
            tenants=count(tables.tenants),
            vectors=count(model.table) if model else 0,
            model_id=model.model_id if model else None,
            dim=model.dim if model else None,
        )


class SQLiteSearchIndex(
    OpenedIndex, SearchEntry, PostingsBM25, ResidentDense, ApproximateDense, VersionedReads, IndexWriter
):
    """The search index stored next to the catalog in one SQLite file."""

    _store: SQLiteStore

    def _attach(self, store: SQLiteStore) -> None:
        """The eligibility step's cache and the approximate indexes (see :class:`OpenedIndex`)."""
        self._eligibility: tuple[IndexState, EligibilityStep] | None = None
        self.ann_min_rows: int | None = ANN_MIN_ROWS  # None: never build nor use approximate indexes
        self.ann_nprobe, self.ann_oversample = DEFAULT_NPROBE, ANN_OVERSAMPLE
        self._ann = AnnReader(ann_folder(store))

    # -- identity and state ----------------------------------------------------

    @property
    def store(self) -> SQLiteStore:
        """The catalog store whose file holds this index."""
        return self._store

    @property
    def embedder_id(self) -> str:
        """Model id of the stored vectors; empty while the index holds none."""
        model = read_vector_model(self._conn, self._tables())
        return model.model_id if model else ""

    def vector_model(self) -> VectorModel | None:
        """The recorded embedding model and its vec0 table, if any."""
        return read_vector_model(self._conn, self._tables())

    def check_embedder(self, embedder: Embedder) -> None:
        """``EmbedderMismatchError`` unless ``embedder`` made (or may make) this index's vectors."""
        check_embedder_fits(read_vector_model(self._conn, self._tables()), embedder)

    def stats(self) -> IndexStats:
        """Counts of indexed documents, chunks, tenants and vectors."""
        with self._store.read():
            current, generation = read_pointer(self._conn)
            tables = self._pinned or IndexTables(current)
            model = read_vector_model(self._conn, tables)
            rows = lambda table: int(scalar(self._conn, f"SELECT count(*) FROM {table}"))  # noqa: E731
            return IndexStats.counted(tables, generation, model, rows)

    def cache_info(self) -> dict[str, int]:
        """What this reader holds in memory for the current generation (for benchmarks and tuning)."""
        return self._state().cache_info()

    def _state(self) -> IndexState:
        current, generation = read_pointer(self._conn)
        tables = self._pinned or IndexTables(current)
        with self._lock:
            cache = self._cache
            if cache is None or cache.generation != generation or cache.tables != tables:
                self._cache = cache = IndexState(tables, generation)
            return cache

    def _read_postings(self, state: IndexState, view: TenantView, terms: Sequence[str]) -> list[Postings]:
        """The terms' postings from the tenant's FTS5 table (for :class:`.bm25_plan.PostingsBM25`)."""
        return read_postings(self._conn, view.fts_table, terms)

    # -- SearchBackend -----------------------------------------------------------

    # -- governance filter in SQL ------------------------------------------------------

    def eligible_document_ids(self, scope: EligibilityScope) -> set[str]:
        """Document ids eligible for ``principal`` per the index snapshot, computed in SQL.

        Agrees with :func:`veracity.model.governance.eligibility` over ``documents``.
        """
        return {document_id for _, document_id in eligible_keys(self._conn, self._state().tables, scope)}

    def eligible_documents(self, scope: EligibilityScope) -> EligibleDocuments:
        """The eligibility step in SQL: eligible ids, named exclusions and the hidden count.

        Equal to :func:`veracity.model.governance.eligible_documents` over ``documents``
        (see :class:`veracity.index.snapshot.FiltersEligibility`); one query over the
        tenant's rows gives every document's primary reason.
        """
        return self.eligibility().outcome(scope)

    def eligibility(self) -> EligibilityStep:
        """The eligibility step of the current index generation (its kept outcomes go with it)."""
        state = self._state()
        with self._lock:
            held = self._eligibility
            if held is None or held[0] is not state:
                step = EligibilityStep(
                    self._conn, state.tables, lambda: self.documents, lambda: self._doc_keys(state)
                )
                self._eligibility = held = (state, step)
            return held[1]
