"""Write side of the PostgreSQL search index: the functions ``IndexWriter`` calls, for PostgreSQL.

The same signatures as :mod:`veracity.index.sqlite.writer` (one index version
per call, inside the caller's catalog transaction). Rows go in with ``COPY``
(vectors in binary); postings as one segment per tenant and batch, merged by
size (:mod:`.segments`). Removing a document deletes its rows from every table
of the version in the caller's transaction, except its postings, which its
segment's next merge drops (the tables keep no foreign keys, see :mod:`.tables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...model.contracts import Document, Status, Visibility
from ..sqlite import writer as shared
from ..sqlite.records import chunk_to_json, document_to_json, moment_text, record_text_digest, version_key
from ..sqlite.tables import IndexTables
from ..sqlite.writer import PreparedDocument, VectorModel, read_vector_model
from .segments import merge_segments, next_chunk_key, write_segment
from .tables import create_vector_table, ensure_index_tables
from .vectors import copy_vector_rows, fetch_vectors

__all__ = [
    "POSTGRES_WRITES",
    "delete_documents",
    "ensure_vector_model",
    "insert_documents",
    "read_vector_model",
    "reusable_vectors",
    "update_documents",
]


def _insert_roles(connection: Any, tables: IndexTables, doc_key: int, document: Document) -> None:
    connection.executemany(
        f"INSERT INTO {tables.document_roles} (doc_key, role, doc_tenant) VALUES (?, ?, ?)",
        [(doc_key, role, document.tenant) for role in sorted(set(document.allowed_roles))],
    )


def _restatus_vectors(
    connection: Any, tables: IndexTables, model: VectorModel, doc_key: int, status: str
) -> None:
    connection.execute(f"UPDATE {model.table} SET status = ? WHERE doc_key = ?", (status, doc_key))


POSTGRES_WRITES: Final = shared.WriteDialect(create_vector_table, _insert_roles, _restatus_vectors)
"""PostgreSQL's part of the writes both engines share: pgvector tables, roles with their tenant."""


def ensure_vector_model(connection: Any, tables: IndexTables, model_id: str, dim: int) -> VectorModel:
    """Record ``model_id`` as the version's model (first time) or check it is the recorded one.

    A new database's version 1 gets its tables here (the migrations register it, the index
    layer knows its tables).
    """
    ensure_index_tables(connection, tables)
    return shared.record_model(connection, tables, model_id, dim, POSTGRES_WRITES)


def _tenant_keys(connection: Any, tables: IndexTables, tenants: Iterable[str]) -> dict[str, int]:
    known = {
        str(t): int(k) for k, t in connection.execute(f"SELECT tenant_key, tenant FROM {tables.tenants}")
    }
    for tenant in sorted(set(tenants) - set(known)):
        known[tenant] = max(known.values(), default=0) + 1
        connection.execute(
            f"INSERT INTO {tables.tenants} (tenant_key, tenant) VALUES (?, ?)", (known[tenant], tenant)
        )
    return known


def _next_key(connection: Any, column: str, table: str) -> int:
    return int(connection.execute(f"SELECT coalesce(max({column}), 0) + 1 FROM {table}").fetchall()[0][0])


def insert_documents(
    connection: Any, tables: IndexTables, prepared: Sequence[PreparedDocument], model: VectorModel | None
) -> int:
    """Insert documents, chunks, postings and vectors; return the number of chunks written."""
    if not prepared:
        return 0
    tenant_keys = _tenant_keys(connection, tables, (item.document.tenant for item in prepared))
    doc_key = _next_key(connection, "doc_key", tables.documents)
    chunk_key = next_chunk_key(connection, tables)
    documents: list[tuple[Any, ...]] = []
    roles: list[tuple[Any, ...]] = []
    chunks: list[tuple[Any, ...]] = []
    postings: dict[str, list[tuple[int, Sequence[str]]]] = {}
    vectors: list[tuple[int, str, int, str, npt.NDArray[np.float32]]] = []
    for item in prepared:
        document, tenant = item.document, item.document.tenant
        status = Status(document.status).value
        documents.append((
            doc_key, document.document_id, tenant, status, Visibility(document.visibility).value,
            moment_text(document.valid_from),
            moment_text(document.valid_until) if document.valid_until is not None else None,
            version_key(document.version_min), version_key(document.version_max), document_to_json(document),
            len(item.chunks), sum(len(tokens) for tokens in item.tokens),
        ))  # fmt: skip
        roles.extend((doc_key, role, tenant) for role in sorted(set(document.allowed_roles)))
        for position, (chunk, tokens) in enumerate(zip(item.chunks, item.tokens, strict=True)):
            chunks.append(
                (chunk_key, chunk.chunk_id, doc_key, tenant_keys[tenant], chunk.ordinal, len(tokens),
                 chunk_to_json(chunk), tenant)
            )  # fmt: skip
            postings.setdefault(tenant, []).append((chunk_key, tokens))
            if model is not None and item.vectors is not None:
                vectors.append((chunk_key, tenant, doc_key, status, item.vectors[position]))
            chunk_key += 1
        doc_key += 1
    connection.copy_rows(
        tables.documents,
        ("doc_key", "document_id", "tenant", "status", "visibility", "valid_from", "valid_until",
         "version_min_key", "version_max_key", "record", "n_chunks", "n_tokens"),
        documents,
    )  # fmt: skip
    connection.copy_rows(tables.document_roles, ("doc_key", "role", "doc_tenant"), roles)
    connection.copy_rows(
        tables.chunks,
        ("chunk_key", "chunk_id", "doc_key", "tenant_key", "ordinal", "n_tokens", "record", "doc_tenant"),
        chunks,
    )
    for tenant, written in sorted(postings.items()):
        write_segment(connection, tables, tenant, written)
        merge_segments(connection, tables, tenant)
    if model is not None and vectors:
        with connection.raw() as raw:
            copy_vector_rows(raw, model.table, vectors)
    return len(chunks)


def update_documents(
    connection: Any, tables: IndexTables, documents: Sequence[Document], model: VectorModel | None
) -> None:
    """Replace the indexed governance snapshot of already indexed documents (status, ...)."""
    shared.replace_governance(connection, tables, documents, model, POSTGRES_WRITES)


def delete_documents(
    connection: Any, tables: IndexTables, document_ids: Sequence[str], model: VectorModel | None
) -> int:
    """Remove documents with their chunks, postings and vectors; return the number of chunks removed."""
    if not document_ids:
        return 0
    keys = [
        int(r[0])
        for r in connection.execute(
            f"SELECT doc_key FROM {tables.documents} WHERE document_id = ANY(?)", (list(document_ids),)
        )
    ]
    if not keys:
        return 0
    return delete_rows(connection, tables, keys, model)


def delete_rows(
    connection: Any, tables: IndexTables, doc_keys: Sequence[int], model: VectorModel | None
) -> int:
    """Delete the documents ``doc_keys`` from every table of the version; return their chunk count."""
    removed = int(
        connection.execute(
            f"SELECT count(*) FROM {tables.chunks} WHERE doc_key = ANY(?)", (list(doc_keys),)
        ).fetchall()[0][0]
    )
    if model is not None:
        connection.execute(f"DELETE FROM {model.table} WHERE doc_key = ANY(?)", (list(doc_keys),))
    for table in (tables.chunks, tables.document_roles, tables.documents):  # postings: see .segments
        connection.execute(f"DELETE FROM {table} WHERE doc_key = ANY(?)", (list(doc_keys),))
    return removed


def reusable_vectors(
    connection: Any,
    tables: IndexTables,
    model: VectorModel,
    documents: Sequence[Document],
    wanted: Iterable[str],
) -> dict[str, npt.NDArray[np.float32]]:
    """See :func:`veracity.index.sqlite.reuse.reusable_vectors` (the same result, in PostgreSQL)."""
    wanted = set(wanted)
    if not documents or not wanted:
        return {}
    sources = {(d.tenant, d.source_id) for d in documents}
    own = {d.document_id for d in documents}
    siblings = [
        str(document_id)
        for document_id, tenant, source_id in connection.execute(
            "SELECT document_id, tenant, source_id FROM documents WHERE source_id = ANY(?)",
            (sorted({source for _, source in sources}),),
        )
        if (tenant, source_id) in sources and document_id not in own
    ]
    if not siblings:
        return {}
    keys: dict[str, int] = {}
    for chunk_key, record in connection.execute(
        f"SELECT c.chunk_key, c.record FROM {tables.chunks} AS c JOIN {tables.documents} AS d "
        "USING (doc_key) WHERE d.document_id = ANY(?)",
        (siblings,),
    ):
        digest = record_text_digest(str(record))
        if digest in wanted:
            keys.setdefault(digest, int(chunk_key))
    if not keys:
        return {}
    with connection.raw() as raw:
        rows, matrix = fetch_vectors(
            raw, f"SELECT chunk_key, embedding FROM {model.table} WHERE chunk_key = ANY(%s)",
            (sorted(keys.values()),), model.dim,
        )  # fmt: skip
    by_key = {int(row[0]): matrix[i] for i, row in enumerate(rows)}
    return {digest: by_key[key] for digest, key in keys.items() if key in by_key}
