"""``PostgresSearchIndex``: the ``SearchBackend`` in the catalog's PostgreSQL database.

The same index versions, registry and write path as the SQLite index
(:class:`~veracity.index.sqlite.sync.IndexWriter` driving :mod:`.writer`);
what differs is where scores are computed:

- **BM25**: SQLite's plan (:mod:`..sqlite.bm25_plan`): the tenant's chunk
  arrays and the postings of the terms asked for are read once per index
  generation (a term's few segment rows of ``ix<v>_postings``, found by the
  primary key, :mod:`.segments`) and kept in memory; each query scores in numpy
  with statistics over its eligible chunks only, so scores and ties equal
  SQLite's and a chunk the asker may not see changes none of the asker's scores.
- **Dense**, ``DenseMode.RESIDENT`` (default): SQLite's resident plans
  (:mod:`..sqlite.resident`): the tenant's vectors are read once per index
  generation (4 × dim bytes a chunk held by each process that serves the
  tenant) and the eligible rows scored in numpy, exactly or sign bits first.
- **Dense**, ``DenseMode.SQL`` (a process that should hold no matrices): in the
  database, eligible sets up to :data:`EXACT_MAX_CHUNKS` chunks are ranked
  exactly by pgvector's cosine distance; in larger ones the eligible rows are
  ranked by the Hamming distance of their stored sign bits to the query's, and
  the best ``max(`` ``DEFAULT_OVERSAMPLE`` × ``k``, ``MIN_CANDIDATES`` ``)`` (:mod:`..quantized`)
  are ranked again by cosine (SQLite's quantized plan, the same constants).
  The final candidates' stored vectors are scored again in numpy (float32, as
  the SQLite index does).

Either way both backends give the same scores and the same ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from ...catalog.postgres.store import PostgresStore
from ...catalog.scope import current_tenant
from ...model.governance import EligibilityScope
from ..dense import Embedder
from ..sqlite.bm25_plan import PostingsBM25
from ..sqlite.entry import Hits, SearchEntry, Vector
from ..sqlite.filter import eligible_sql
from ..sqlite.fts import Postings
from ..sqlite.opened import OpenedIndex
from ..sqlite.resident import ResidentDense, check_embedder_fits
from ..sqlite.search import IndexStats
from ..sqlite.sync import IndexSQL, IndexWriter
from ..sqlite.tables import IndexTables
from ..sqlite.versions import read_pointer
from ..sqlite.views import IndexState, TenantView, VersionedReads
from ..sqlite.writer import VectorModel
from . import writer
from .segments import read_segment_postings
from .tables import sign_bits_sql
from .vectors import fetch_vectors, vector_literal

__all__ = [
    "EXACT_MAX_CHUNKS",
    "PostgresIndexSQL",
    "PostgresSearchIndex",
]

EXACT_MAX_CHUNKS: Final = 4096
"""Eligible sets up to this many chunks are ranked by float cosine over all their vectors; larger ones
by sign bits first (approximate; recall measured by ``benchmarks/bench_backends.py``)."""

EXACT_MARGIN: Final = 2
"""The exact plan takes this many × ``k`` rows by pgvector's cosine (float arithmetic of its own)
and ranks them again in numpy, so a last-place tie is settled as SQLite settles it."""


class PostgresIndexSQL(IndexSQL):
    """PostgreSQL's statements for the shared write path."""

    ensure_vector_model = staticmethod(writer.ensure_vector_model)
    insert_documents = staticmethod(writer.insert_documents)
    update_documents = staticmethod(writer.update_documents)
    delete_documents = staticmethod(writer.delete_documents)
    reusable_vectors = staticmethod(writer.reusable_vectors)


class PostgresSearchIndex(OpenedIndex, SearchEntry, PostingsBM25, ResidentDense, VersionedReads, IndexWriter):
    """The search index stored next to the catalog in one PostgreSQL database."""

    _sql = PostgresIndexSQL

    def _attach(self, store: PostgresStore) -> None:
        """Per-scope caches and the database's own plan choice (see :class:`OpenedIndex`)."""
        self._pg = store.connection
        self._scoped: dict[str, IndexState] = {}
        self._pointer_held: tuple[object, tuple[int, int]] | None = None
        self.exact_max = EXACT_MAX_CHUNKS  # DenseMode.SQL's choice of plan

    # -- identity and state ----------------------------------------------------------------

    @property
    def store(self) -> PostgresStore:
        """The catalog store whose database holds this index."""
        return self._store

    @property
    def embedder_id(self) -> str:
        """Model id of the stored vectors; empty while the index holds none."""
        model = self.vector_model()
        return model.model_id if model else ""

    def vector_model(self) -> VectorModel | None:
        """The recorded embedding model and its vector table, if any."""
        return writer.read_vector_model(self._conn, self._tables())

    def check_embedder(self, embedder: Embedder) -> None:
        """``EmbedderMismatchError`` unless ``embedder`` made (or may make) this index's vectors."""
        check_embedder_fits(self.vector_model(), embedder)

    def stats(self) -> IndexStats:
        """Counts of indexed documents, chunks, tenants and vectors."""
        with self._store.read():
            current, generation = read_pointer(self._conn)
            tables = self._pinned or IndexTables(current)
            model = writer.read_vector_model(self._conn, tables)
            return IndexStats.counted(
                tables, generation, model,
                lambda table: int(self._pg.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]),
            )  # fmt: skip

    def cache_info(self) -> dict[str, int]:
        """What this reader holds in memory for the current generation (for benchmarks and tuning)."""
        return self._state().cache_info()

    def _scope(self) -> str | None:
        """The tenant reads are confined to now: row-level security shows the reader role only its rows."""
        return current_tenant() if self.store.scoped_reads else None

    def _state(self) -> IndexState:
        """What is cached for the version read now, per generation and per tenant scope.

        A scoped read (the reader role, :func:`~veracity.catalog.scope.acting_for`) sees one
        tenant's rows only, so what it loads is kept apart from what other scopes load.
        """
        current, generation = self._pointer()
        tables = self._pinned or IndexTables(current)
        scope = self._scope()
        with self._lock:
            cache = self._cache if scope is None else self._scoped.get(scope)
            if cache is None or cache.generation != generation or cache.tables != tables:
                cache = IndexState(tables, generation)
                if scope is None:
                    self._cache = cache
                else:
                    self._scoped = {k: v for k, v in self._scoped.items() if v.generation == generation}
                    self._scoped[scope] = cache
            return cache

    def _tables(self) -> IndexTables:
        """Tables to read or write now (see :meth:`_pointer`); in a write transaction, read each time."""
        return self._pinned or IndexTables(self._pointer()[0])

    def _pointer(self) -> tuple[int, int]:
        """The published version and generation, read once per read block (a snapshot cannot see
        them move): an ask looks up dozens of chunks, each through :meth:`_state`."""
        token = self.store.snapshot_token
        held = self._pointer_held
        if token is not None and held is not None and held[0] is token:
            return held[1]
        pointer = read_pointer(self._conn)
        if token is not None:
            self._pointer_held = (token, pointer)
        return pointer

    def _read_postings(self, state: IndexState, view: TenantView, terms: Sequence[str]) -> list[Postings]:
        """The terms' postings from the tenant's segments (for :class:`~..sqlite.bm25_plan.PostingsBM25`)."""
        with self._pg.raw() as raw:
            return list(read_segment_postings(raw, state.tables, view.tenant, terms, view.keys))

    # -- dense: ResidentDense's plans, with PostgreSQL's reads -----------------------------

    def _load_matrix(
        self, view: TenantView, model: VectorModel
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        """The tenant's vectors, keys ascending (for :class:`~..sqlite.resident.ResidentDense`)."""
        with self._pg.raw() as raw:
            rows, matrix = fetch_vectors(
                raw,
                f"SELECT chunk_key, embedding FROM {model.table} WHERE doc_tenant = %s ORDER BY chunk_key",
                (view.tenant,), model.dim,
            )  # fmt: skip
        return np.array([int(r[0]) for r in rows], dtype=np.int64), matrix

    def _dense_ann(self, *_: object) -> None:
        """No approximate index in PostgreSQL: the resident plans are exact or sign bits first."""
        return None

    def _dense_sql(
        self, view: TenantView, model: VectorModel, query: Vector, positions: npt.NDArray[np.intp], k: int
    ) -> Hits:
        """``DenseMode.SQL``: the plans of the module docstring, computed in the database."""
        table = model.table
        eligible = "v.doc_tenant = %s AND v.doc_key = ANY(%s::bigint[])"
        params = (view.tenant, np.unique(view.doc_keys[positions]).tolist(), vector_literal(query))
        with self._pg.raw() as raw:
            if positions.size <= self.exact_max:
                self.last_dense_plan = "exact"
                rows, matrix = fetch_vectors(
                    raw,
                    f"SELECT v.chunk_key, v.embedding FROM {table} AS v "
                    f"WHERE {eligible} ORDER BY v.embedding <=> %s::vector LIMIT %s",
                    (*params, EXACT_MARGIN * int(k)), model.dim,
                )  # fmt: skip
            else:
                self.last_dense_plan = "sign-bits"
                candidates = max(self.oversample * int(k), self.min_candidates)
                query_bits = sign_bits_sql("%s::vector", model.dim)
                rows, matrix = fetch_vectors(
                    raw,
                    "SELECT v.chunk_key, v.embedding FROM (SELECT v.chunk_key, v.embedding "
                    f"FROM {table} AS v WHERE {eligible} "
                    f"ORDER BY v.bits <~> {query_bits}, v.chunk_key LIMIT %s) AS v "
                    "ORDER BY v.embedding <=> %s::vector LIMIT %s",
                    (*params, candidates, params[-1], EXACT_MARGIN * int(k)), model.dim,
                )  # fmt: skip
        if not rows:
            return []
        found = np.searchsorted(view.keys, np.array([int(r[0]) for r in rows], dtype=np.int64))
        return self._top(view, found, matrix @ query, k)

    # -- governance filter in SQL ------------------------------------------------------------

    def eligible_document_ids(self, scope: EligibilityScope) -> set[str]:
        """Document ids eligible for ``principal`` per the index snapshot, computed in SQL."""
        query = eligible_sql(self._state().tables, scope)
        if query is None:
            return set()
        sql, params = query
        sql = sql.replace(
            "(SELECT value FROM json_each(:roles))", "(SELECT jsonb_array_elements_text(:roles))"
        )
        named = sql.replace(":tenant", "%(tenant)s").replace(":as_of", "%(as_of)s")
        named = named.replace(":version_key", "%(version_key)s::text").replace(":roles", "%(roles)s::jsonb")
        with self._pg.raw() as raw:
            return {str(row[1]) for row in raw.execute(named, params).fetchall()}
