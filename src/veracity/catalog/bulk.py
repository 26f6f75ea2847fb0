"""Reads of many documents at once, for the index writer and the ingest: one statement per batch,
not per document.

Over a database a statement costs a round trip (PostgreSQL: a network hop and a
plan), so reading 2,000 documents one by one spent more time waiting than
indexing. Any other store (the in-memory one) is read document by document
through the ``Store`` protocol; the results are the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.contracts import Chunk, Document
from ..model.errors import NotFoundError
from .rows import CHUNK_COLUMNS, chunk_of, select_documents
from .sql import in_values, values_present
from .store import DatabaseStore, Store

__all__ = ["all_document_ids", "chunks_by_document", "documents_by_source", "stored_document_ids"]


def documents_by_source(store: Store, source_ids: Sequence[str]) -> dict[str, list[Document]]:
    """``find_documents(source_id=…)`` of each of ``source_ids`` (every tenant, oldest revision
    first); a source without documents is absent."""
    ids = sorted(set(source_ids))
    found: dict[str, list[Document]] = {}
    if not isinstance(store, DatabaseStore):
        for source_id in ids:
            documents = store.find_documents(source_id=source_id)
            if documents:
                found[source_id] = documents
        return found
    if not ids:
        return found
    where, bound = in_values(store.connection, "source_id", ids)
    with store.read():
        for document in select_documents(store.connection, where, (bound,)):
            found.setdefault(document.source_id, []).append(document)
    return found


def all_document_ids(store: Store) -> frozenset[str]:
    """The id of every document the catalog holds (any status, every tenant the store may read)."""
    if not isinstance(store, DatabaseStore):
        return frozenset(document.document_id for document in store.find_documents())
    with store.read():
        return frozenset(str(row[0]) for row in store.connection.execute("SELECT document_id FROM documents"))


def stored_document_ids(store: Store, document_ids: Sequence[str]) -> set[str]:
    """Which of ``document_ids`` the catalog holds now (any status)."""
    ids = sorted(set(document_ids))
    if not isinstance(store, DatabaseStore):
        found: set[str] = set()
        for document_id in ids:
            try:
                store.get_document(document_id)
            except NotFoundError:
                continue
            found.add(document_id)
        return found
    with store.read():
        return values_present(store.connection, "documents", "document_id", ids)


def chunks_by_document(store: Store, document_ids: Sequence[str]) -> dict[str, list[Chunk]]:
    """The chunks of each of ``document_ids`` in order; ``NotFoundError`` if one is absent."""
    ids = list(dict.fromkeys(document_ids))
    if not isinstance(store, DatabaseStore):
        return {document_id: store.get_chunks(document_id) for document_id in ids}
    out: dict[str, list[Chunk]] = {document_id: [] for document_id in ids}
    where, bound = in_values(store.connection, "document_id", ids)
    with store.read():
        missing = set(ids) - stored_document_ids(store, ids)
        if missing:
            raise NotFoundError(f"no document {sorted(missing)[0]!r} in the catalog")
        rows = store.connection.execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE {where} ORDER BY document_id, ordinal", (bound,)
        )
        for row in rows:
            chunk = chunk_of(row)
            out[chunk.document_id].append(chunk)
    return out
