"""Read side of the SQLite search index: cached per-generation state and Mapping views.

Every write to the index, and every switch of the published version, bumps
``index_pointer.generation`` in the same transaction. Readers keep what they
loaded (documents, per-tenant arrays, vector matrices) in an
:class:`IndexState` tagged with the version and generation it was read at, and
drop it when the stored generation moves on, whether the write came from this
process or another one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from ...catalog.sql import scalar
from ...model.contracts import Chunk, Document, Trust
from ..quantized import QuantizedRows
from ..snapshot import ids_by_trust
from .fts import Postings, check_fts_name
from .records import chunk_from_json, document_from_json
from .tables import IndexTables
from .versions import read_pointer
from .writer import VectorModel, read_vector_model

__all__ = [
    "ChunksView",
    "IndexState",
    "TenantView",
    "load_chunks_by_document",
    "load_doc_keys",
    "load_documents",
    "load_tenant_view",
]

_CHUNK_CACHE_LIMIT = 65536


@dataclass(frozen=True, slots=True)
class TenantView:
    """One tenant's chunks as arrays aligned by position: keys ascending."""

    tenant: str
    tenant_key: int
    fts_table: str
    keys: npt.NDArray[np.int64]
    doc_keys: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]
    chunk_ids: tuple[str, ...]


@dataclass
class IndexState:
    """What a reader loaded from one index version at one generation."""

    tables: IndexTables
    generation: int
    documents: dict[str, Document] | None = None
    by_trust: dict[Trust, frozenset[str]] | None = None
    doc_keys: dict[str, int] | None = None
    chunks_by_document: dict[str, tuple[str, ...]] | None = None
    chunks: dict[str, Chunk] = field(default_factory=dict)
    tenants: dict[str, TenantView | None] = field(default_factory=dict)
    matrices: dict[str, npt.NDArray[np.float32] | None] = field(default_factory=dict)
    quantized: dict[str, QuantizedRows] = field(default_factory=dict)
    ann: dict[str, Any] = field(default_factory=dict)  # tenant → AnnView or None (approximate)
    eligible: tuple[frozenset[str], npt.NDArray[np.bool_], str] | None = None
    model: VectorModel | None = None
    model_read: bool = False
    postings: dict[tuple[str, str], Postings] = field(default_factory=dict)
    postings_size: int = 0
    postings_hits: int = 0
    postings_reads: int = 0

    def cache_info(self) -> dict[str, int]:
        """What is held in memory for this generation (for benchmarks and tuning)."""
        return {
            "version": self.tables.version,
            "generation": self.generation,
            "tenants_loaded": sum(v is not None for v in self.tenants.values()),
            "matrices_loaded": sum(m is not None for m in self.matrices.values()),
            "postings_terms": len(self.postings),
            "postings_entries": self.postings_size,
            "postings_hits": self.postings_hits,
            "postings_reads": self.postings_reads,
        }


def load_documents(connection: apsw.Connection, tables: IndexTables) -> dict[str, Document]:
    """Every indexed document (as of indexing), by document id; bodies from the catalog's rows."""
    return {
        str(document_id): document_from_json(str(record), body)
        for document_id, record, body in connection.execute(
            f"SELECT i.document_id, i.record, d.body FROM {tables.documents} AS i "
            "LEFT JOIN documents AS d ON d.document_id = i.document_id ORDER BY i.document_id"
        )
    }


def load_doc_keys(connection: apsw.Connection, tables: IndexTables) -> dict[str, int]:
    """The integer key of every indexed document, by document id."""
    return {
        str(document_id): int(doc_key)
        for document_id, doc_key in connection.execute(f"SELECT document_id, doc_key FROM {tables.documents}")
    }


def load_chunks_by_document(connection: apsw.Connection, tables: IndexTables) -> dict[str, tuple[str, ...]]:
    """Chunk ids of every indexed document, in ordinal order."""
    grouped: dict[str, list[str]] = {}
    for document_id in connection.execute(f"SELECT document_id FROM {tables.documents}"):
        grouped[document_id[0]] = []
    for document_id, chunk_id in connection.execute(
        f"SELECT d.document_id, c.chunk_id FROM {tables.chunks} AS c "
        f"JOIN {tables.documents} AS d USING (doc_key) ORDER BY c.doc_key, c.ordinal"
    ):
        grouped[document_id].append(chunk_id)
    return {document_id: tuple(ids) for document_id, ids in grouped.items()}


def load_chunk(connection: apsw.Connection, tables: IndexTables, chunk_id: str) -> Chunk | None:
    """One indexed chunk, or ``None``; its text comes from the catalog's row of the same id.

    A chunk whose catalog row is gone or holds other text than was indexed comes
    back with empty text (see :func:`~veracity.index.sqlite.records.chunk_from_json`).
    """
    row = connection.execute(
        f"SELECT i.record, c.text, c.context_prefix FROM {tables.chunks} AS i "
        "LEFT JOIN chunks AS c ON c.chunk_id = i.chunk_id WHERE i.chunk_id = ?",
        (chunk_id,),
    ).fetchone()
    return chunk_from_json(str(row[0]), row[1], row[2]) if row else None


def load_tenant_view(connection: apsw.Connection, tables: IndexTables, tenant: str) -> TenantView | None:
    """The tenant's chunk arrays, or ``None`` for a tenant the index does not know."""
    row = connection.execute(
        f"SELECT tenant_key, fts_table FROM {tables.tenants} WHERE tenant = ?", (tenant,)
    ).fetchone()
    if row is None:
        return None
    tenant_key, fts_table = int(row[0]), str(row[1])
    if fts_table:  # spliced into SQL later; PostgreSQL's postings have no table per tenant ('')
        check_fts_name(fts_table)
    rows = connection.execute(
        f"SELECT chunk_key, doc_key, n_tokens, chunk_id FROM {tables.chunks} "
        "WHERE tenant_key = ? ORDER BY chunk_key",
        (tenant_key,),
    ).fetchall()
    numbers = np.array([r[:3] for r in rows], dtype=np.int64).reshape(len(rows), 3)
    return TenantView(
        tenant=tenant,
        tenant_key=tenant_key,
        fts_table=fts_table,
        keys=numbers[:, 0].copy(),
        doc_keys=numbers[:, 1].copy(),
        lengths=numbers[:, 2].copy(),
        chunk_ids=tuple(str(r[3]) for r in rows),
    )


class ChunksView(Mapping[str, Chunk]):
    """Indexed chunks by id, loaded one at a time from SQL and cached per generation."""

    def __init__(self, connection: apsw.Connection, state: Callable[[], IndexState]) -> None:
        """Read chunks through ``connection``; ``state`` gives the current cache."""
        self._connection = connection
        self._state = state

    def __getitem__(self, chunk_id: str) -> Chunk:
        state = self._state()
        cache = state.chunks
        chunk = cache.get(chunk_id)
        if chunk is None:
            chunk = load_chunk(self._connection, state.tables, chunk_id)
            if chunk is None:
                raise KeyError(chunk_id)
            if len(cache) >= _CHUNK_CACHE_LIMIT:
                cache.clear()
            cache[chunk_id] = chunk
        return chunk

    def __contains__(self, chunk_id: object) -> bool:
        if not isinstance(chunk_id, str):
            return False
        state = self._state()
        if chunk_id in state.chunks:
            return True
        row = self._connection.execute(
            f"SELECT 1 FROM {state.tables.chunks} WHERE chunk_id = ?", (chunk_id,)
        ).fetchone()
        return row is not None

    def __iter__(self) -> Iterator[str]:
        table = self._state().tables.chunks
        rows = self._connection.execute(f"SELECT chunk_id FROM {table} ORDER BY chunk_id").fetchall()
        return iter([str(row[0]) for row in rows])

    def __len__(self) -> int:
        return int(scalar(self._connection, f"SELECT count(*) FROM {self._state().tables.chunks}"))


class VersionedReads:
    """What a search index reads of its index version, whatever the engine (a mixin: needs
    ``_conn``, ``_pinned`` and ``_state``; the loaders above take ``?`` placeholders on both)."""

    _conn: Any
    _pinned: IndexTables | None

    def _state(self) -> IndexState:  # pragma: no cover - defined by the index
        raise NotImplementedError

    @property
    def version(self) -> int:
        """The index version this instance reads now (the published one unless pinned)."""
        return self._tables().version

    @property
    def pinned(self) -> bool:
        """True when built for one version (``version=N``) rather than following the pointer."""
        return self._pinned is not None

    def _tables(self) -> IndexTables:
        """Tables to read or write now; inside a write transaction this is the version written."""
        return self._pinned or IndexTables(read_pointer(self._conn)[0])

    def _model(self, state: IndexState) -> VectorModel | None:
        """The version's embedding model and vector table, read once per generation."""
        if not state.model_read:
            state.model, state.model_read = read_vector_model(self._conn, state.tables), True
        return state.model

    @property
    def documents(self) -> Mapping[str, Document]:
        """Every indexed document as of indexing (read-only; loaded once per index generation)."""
        state = self._state()
        if state.documents is None:
            state.documents = load_documents(self._conn, state.tables)
        return MappingProxyType(state.documents)

    @property
    def document_ids_by_trust(self) -> Mapping[Trust, frozenset[str]]:
        """The documents' ids by trust (:func:`~veracity.index.snapshot.ids_by_trust`), once per
        generation."""
        state = self._state()
        if state.by_trust is None:
            state.by_trust = ids_by_trust(self.documents)
        return MappingProxyType(state.by_trust)

    @property
    def chunks_by_document(self) -> Mapping[str, tuple[str, ...]]:
        """Chunk ids of every indexed document, in order (read-only; loaded once per generation)."""
        state = self._state()
        if state.chunks_by_document is None:
            state.chunks_by_document = load_chunks_by_document(self._conn, state.tables)
        return MappingProxyType(state.chunks_by_document)
