"""Writing the SQLite search index: add, remove and sync with a catalog.

Mixed into :class:`veracity.index.sqlite.search.SQLiteSearchIndex`. Chunks are
tokenized and embedded *before* each write transaction (never under the
catalog's write lock); each transaction writes about ``batch_chunks`` chunks
with their FTS5 rows and vectors and bumps the index generation, so readers
see a batch whole or not at all. A chunk whose embedded text an earlier
revision of its source already has gets that vector back instead of a new
embedding (:mod:`veracity.index.sqlite.reuse`). Progress is reported after
every embedding call, so a long first batch does not look stuck.

New documents go to the version the instance writes (the published one, or the
pinned one being built). Removals and governance changes (a status) go to
*every* version that still has tables, in the same transaction, so no kept
version (a rollback target, one being built) still answers from a deleted or
withdrawn document.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import apsw
import numpy as np
import numpy.typing as npt

from ...catalog.bulk import chunks_by_document, stored_document_ids
from ...catalog.catalog import Catalog
from ...catalog.sql import all_rows, rows_among, values_present
from ...catalog.sqlite import SQLiteStore
from ...model.contracts import Chunk, Document
from ...model.errors import ConfigError, EmbedderMismatchError
from ..ahead import AheadTokens
from ..dense import Embedder, normalized_rows
from ..snapshot import index_text
from . import writer
from .records import current_document_record, document_to_json, embedded_text_digest
from .reuse import reusable_vectors
from .tables import IndexTables
from .versions import live_versions
from .views import IndexState
from .writer import PreparedDocument, bump_generation

__all__ = ["IndexSQL", "IndexWriter", "Progress", "SyncReport"]

Progress = Callable[[int, int], None]
"""``progress(chunks_done, chunks_total)``."""


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What :meth:`IndexWriter.sync` or ``add`` did, with timings in seconds."""

    added_documents: int = 0
    updated_documents: int = 0
    removed_documents: int = 0
    indexed_chunks: int = 0
    embedded_chunks: int = 0
    reused_chunks: int = 0
    tokenize_seconds: float = 0.0
    embed_seconds: float = 0.0
    write_seconds: float = 0.0


class IndexSQL:
    """The statements one backend writes an index version with (SQLite's; PostgreSQL has its own).

    Each takes the connection and the version's tables first, as in :mod:`veracity.index.sqlite.writer`.
    """

    read_vector_model = staticmethod(writer.read_vector_model)
    ensure_vector_model = staticmethod(writer.ensure_vector_model)
    insert_documents = staticmethod(writer.insert_documents)
    update_documents = staticmethod(writer.update_documents)
    delete_documents = staticmethod(writer.delete_documents)
    reusable_vectors = staticmethod(reusable_vectors)


class IndexWriter:
    """The write half of a search index (a mixin: needs ``_store``, ``_conn``, ``_cache``).

    The statements come from ``_sql`` (:class:`IndexSQL` for SQLite); the rest (batching,
    tokenizing and embedding outside transactions, reuse, every kept version) is shared.
    """

    _store: SQLiteStore
    _conn: apsw.Connection
    _cache: IndexState | None
    _sql: type[IndexSQL] = IndexSQL

    def check_embedder(self, embedder: Embedder) -> None:  # pragma: no cover - defined by the index
        """See ``SQLiteSearchIndex.check_embedder``."""
        raise NotImplementedError

    def _tables(self) -> IndexTables:  # pragma: no cover - defined by the index
        """See ``SQLiteSearchIndex._tables``."""
        raise NotImplementedError

    def ensure_model(self, tables: IndexTables, model_id: str, dim: int) -> writer.VectorModel:
        """Record ``model_id`` as the embedding model of ``tables`` or check it (inside a transaction)."""
        return self._sql.ensure_vector_model(self._conn, tables, model_id, dim)

    def _versions(self) -> list[IndexTables]:
        """Every version with tables, and this instance's own even if it is not registered live."""
        own = self._tables()
        kept = live_versions(self._conn)
        return kept if own in kept else [*kept, own]

    def add(
        self,
        items: Iterable[tuple[Document, Sequence[Chunk]]],
        embedder: Embedder | None,
        *,
        batch_chunks: int = 2048,
        batch_size: int = 64,
        progress: Progress | None = None,
        total_chunks: int = 0,
        tokens: AheadTokens | None = None,
    ) -> SyncReport:
        """Index documents not indexed yet (by document id); already indexed ones are skipped.

        Chunks are tokenized (or their ``tokens`` computed ahead taken) and embedded
        (``batch_size`` texts per call) before each write transaction of about
        ``batch_chunks`` chunks. ``embedder=None`` builds a lexical-only index, allowed
        only while the index holds no vectors.
        """
        ahead = tokens if tokens is not None else AheadTokens(limit=0)
        tables = self._tables()
        model = self._sql.read_vector_model(self._conn, tables)
        if embedder is not None:
            self.check_embedder(embedder)
            if model is None and self._conn.execute(f"SELECT 1 FROM {tables.chunks} LIMIT 1").fetchone():
                raise ConfigError(
                    "this index was built without vectors (lexical only); adding vectors to part of it "
                    "would leave chunks the dense channel cannot see: build a new index with the embedder"
                )
        elif model is not None:
            raise ConfigError("this index holds vectors: adding documents needs its embedder")
        totals = {"docs": 0, "chunks": 0, "embedded": 0, "reused": 0, "tok": 0.0, "emb": 0.0, "write": 0.0}
        pending: list[tuple[Document, tuple[Chunk, ...]]] = []
        seen: set[str] = set()
        size = 0

        def flush() -> None:
            nonlocal pending, size
            # Only the batch's own ids are looked up: an ingest adds each transaction's documents
            # as it commits, and reading every indexed id each time grew with the index.
            ids = [document.document_id for document, _ in pending]
            indexed = values_present(self._conn, tables.documents, "document_id", ids)
            pending = [item for item in pending if item[0].document_id not in indexed]
            if pending:
                self._write_batch(pending, embedder, batch_size, totals, ahead, progress, total_chunks)
                if progress is not None:
                    progress(int(totals["chunks"]), total_chunks)
            pending, size = [], 0

        for document, chunks in items:
            if document.document_id in seen:
                continue
            seen.add(document.document_id)
            pending.append((document, tuple(chunks)))
            size += len(chunks)
            if size >= batch_chunks:
                flush()
        flush()
        return SyncReport(
            added_documents=int(totals["docs"]),
            indexed_chunks=int(totals["chunks"]),
            embedded_chunks=int(totals["embedded"]),
            reused_chunks=int(totals["reused"]),
            tokenize_seconds=totals["tok"],
            embed_seconds=totals["emb"],
            write_seconds=totals["write"],
        )

    def _write_batch(
        self,
        batch: list[tuple[Document, tuple[Chunk, ...]]],
        embedder: Embedder | None,
        batch_size: int,
        totals: dict[str, float],
        ahead: AheadTokens,
        progress: Progress | None = None,
        total_chunks: int = 0,
    ) -> None:
        start = time.perf_counter()
        tokens = [tuple(ahead.tokens(chunk) for chunk in chunks) for _, chunks in batch]
        totals["tok"] += time.perf_counter() - start
        vectors: list[npt.NDArray[np.float32] | None] = [None] * len(batch)
        if embedder is not None:
            start = time.perf_counter()
            flat = [index_text(chunk) for _, chunks in batch for chunk in chunks]
            matrix = self._vectors(batch, flat, embedder, batch_size, totals, progress, total_chunks)
            offset = 0
            for i, (_, chunks) in enumerate(batch):
                vectors[i] = matrix[offset : offset + len(chunks)]
                offset += len(chunks)
            totals["emb"] += time.perf_counter() - start
        prepared = [
            PreparedDocument(document, chunks, doc_tokens, doc_vectors)
            for (document, chunks), doc_tokens, doc_vectors in zip(batch, tokens, vectors, strict=True)
        ]
        start = time.perf_counter()
        with self._store.transaction():
            # A document deleted from the catalog after it was read (and embedded) is not
            # written: the delete's transaction and this one are serialized.
            present = stored_document_ids(self._store, [item.document.document_id for item in prepared])
            prepared = [item for item in prepared if item.document.document_id in present]
            tables = self._tables()
            model = None
            if embedder is not None:
                model = self._sql.ensure_vector_model(self._conn, tables, embedder.model_id, embedder.dim)
            totals["chunks"] += self._sql.insert_documents(self._conn, tables, prepared, model)
            bump_generation(self._conn)
        totals["write"] += time.perf_counter() - start
        totals["docs"] += len(batch)
        self._cache = None

    def _vectors(
        self,
        batch: list[tuple[Document, tuple[Chunk, ...]]],
        flat: list[str],
        embedder: Embedder,
        batch_size: int,
        totals: dict[str, float],
        progress: Progress | None,
        total_chunks: int,
    ) -> npt.NDArray[np.float32]:
        """One unit vector per text of ``flat``: reused from earlier revisions, else embedded once."""
        digests = [embedded_text_digest(chunk) for _, chunks in batch for chunk in chunks]
        tables = self._tables()
        model = self._sql.read_vector_model(self._conn, tables)
        known = (
            self._sql.reusable_vectors(self._conn, tables, model, [d for d, _ in batch], digests)
            if model is not None and model.model_id == embedder.model_id
            else {}
        )
        missing = sorted({digest: i for i, digest in enumerate(digests) if digest not in known}.values())
        done = int(totals["chunks"]) + len(flat) - len(missing)
        for first in range(0, len(missing), batch_size):
            part = missing[first : first + batch_size]
            raw = embedder.embed_batch([flat[i] for i in part], kind="passage")
            embedded = normalized_rows(raw, what="vectors")
            if embedded.ndim != 2 or embedded.shape[1] != embedder.dim:
                raise EmbedderMismatchError(f"{embedder.model_id!r} returned shape {embedded.shape}")
            known.update((digests[i], row) for i, row in zip(part, embedded, strict=True))
            done += len(part)
            if progress is not None:
                progress(min(done, total_chunks or done), total_chunks)
        totals["embedded"] += len(missing)
        totals["reused"] += len(flat) - len(missing)
        if not flat:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.vstack([known[digest] for digest in digests]).astype(np.float32, copy=False)

    def remove(self, document_ids: Sequence[str]) -> int:
        """Remove documents from every kept index version; return the chunks removed from this one."""
        removed = 0
        with self._store.transaction():
            own = self._tables()
            for tables in self._versions():
                model = self._sql.read_vector_model(self._conn, tables)
                count = self._sql.delete_documents(self._conn, tables, list(document_ids), model)
                removed = count if tables == own else removed
            bump_generation(self._conn)
        self._cache = None
        return removed

    def refresh(self, catalog: Catalog, document_ids: Sequence[str]) -> bool:
        """Bring what every kept version holds of ``document_ids`` in line with ``catalog`` (one
        transaction): a document the catalog no longer has is removed, one whose governance changed
        (a status) gets its new snapshot. What :meth:`sync` does for every document, for these alone:
        a withdraw reads one document, not the whole catalog. A document the index lacks is left to
        :meth:`sync`, which indexes its chunks. True when anything changed."""
        ids = sorted(set(document_ids))
        with self._store.transaction():
            live = catalog.store.get_documents(ids)
            touched = self._reconcile(live, ids)[3]
        if touched:
            self._cache = None
        return touched

    def _reconcile(
        self, live: dict[str, Document], among: Sequence[str] | None
    ) -> tuple[dict[str, str], list[str], list[Document], bool]:
        """Inside a transaction, in every kept version: remove the indexed documents (of ``among``,
        else all) that ``live`` lacks and update those whose stored snapshot differs from ``live``'s.
        Returns this version's stored records (id → JSON), what it removed and updated there, and
        whether any version changed."""
        own = self._tables()
        stored: dict[str, str] = {}
        gone: list[str] = []
        changed: list[Document] = []
        touched = False
        for tables in self._versions():
            select = f"SELECT document_id, record FROM {tables.documents}"
            if among is None:
                rows = all_rows(self._conn, select)
            else:
                rows = rows_among(self._conn, select, "document_id", among)
            records = {str(i): current_document_record(str(r)) for i, r in rows}
            version_gone = sorted(set(records) - set(live))
            version_changed = [
                d for i, d in sorted(live.items()) if i in records and records[i] != document_to_json(d)
            ]
            if version_gone or version_changed:
                model = self._sql.read_vector_model(self._conn, tables)
                self._sql.delete_documents(self._conn, tables, version_gone, model)
                self._sql.update_documents(self._conn, tables, version_changed, model)
                touched = True
            if tables == own:
                stored, gone, changed = records, version_gone, version_changed
        if touched:
            bump_generation(self._conn)
        return stored, gone, changed, touched

    def sync(
        self,
        catalog: Catalog,
        embedder: Embedder | None,
        *,
        batch_chunks: int = 2048,
        batch_size: int = 64,
        progress: Progress | None = None,
        tokens: AheadTokens | None = None,
    ) -> SyncReport:
        """Make the index match ``catalog`` (every document, any status); never re-embeds.

        Removes documents the catalog no longer has and updates the governance
        snapshot of documents whose metadata changed (a status) in every kept
        version, in one transaction; then indexes new ones into this version
        (``tokens``: computed ahead, see :class:`~veracity.index.ahead.AheadTokens`).
        """
        if embedder is not None:
            self.check_embedder(embedder)
        with self._store.transaction():
            live = {document.document_id: document for document in catalog.documents()}
            stored, gone, changed, touched = self._reconcile(live, None)
        if touched:
            self._cache = None
        new = [document for document_id, document in live.items() if document_id not in stored]
        total = 0
        items: list[tuple[Document, Sequence[Chunk]]] = []
        stored_chunks = chunks_by_document(catalog.store, [document.document_id for document in new])
        for document in new:
            chunks = stored_chunks[document.document_id]
            total += len(chunks)
            items.append((document, chunks))
        report = self.add(
            items,
            embedder,
            batch_chunks=batch_chunks,
            batch_size=batch_size,
            progress=progress,
            total_chunks=total,
            tokens=tokens,
        )
        return SyncReport(
            added_documents=report.added_documents,
            updated_documents=len(changed),
            removed_documents=len(gone),
            indexed_chunks=report.indexed_chunks,
            embedded_chunks=report.embedded_chunks,
            reused_chunks=report.reused_chunks,
            tokenize_seconds=report.tokenize_seconds,
            embed_seconds=report.embed_seconds,
            write_seconds=report.write_seconds,
        )
