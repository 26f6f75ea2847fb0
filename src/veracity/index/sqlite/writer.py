"""Write side of the SQLite search index: SQL for adding, updating and removing documents.

Each function writes one index version (:class:`~veracity.index.sqlite.tables.IndexTables`).
Callers run these inside one catalog transaction (``SQLiteStore.transaction``)
and call :func:`bump_generation` in it, so readers see a batch whole or not at
all. Tokenizing and embedding happen before the transaction, never under the
write lock.

:func:`record_model` and :func:`replace_governance` serve PostgreSQL's writer too
(:mod:`veracity.index.postgres.writer`): what the engines do differently inside them
(vector tables, role rows, vector statuses) comes in as a :class:`WriteDialect`, so a
fix to either lands once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import apsw
import numpy as np
import numpy.typing as npt

from ...catalog.sql import all_rows, scalar
from ...model.contracts import Chunk, Document, Status, Visibility
from ...model.errors import EmbedderMismatchError
from .fts import check_fts_name, create_fts_table, fts_table_name
from .records import chunk_to_json, document_to_json, moment_text, version_key
from .tables import IndexTables
from .vectors import (
    check_vector_name,
    create_vector_table,
    delete_vectors,
    insert_vectors,
    set_status,
    vector_table_name,
)
from .versions import bump_generation

__all__ = [
    "DISTANCE",
    "NORMALIZATION",
    "SQLITE_WRITES",
    "PreparedDocument",
    "VectorModel",
    "WriteDialect",
    "bump_generation",
    "delete_documents",
    "ensure_tenant",
    "ensure_vector_model",
    "insert_documents",
    "read_vector_model",
    "record_model",
    "replace_governance",
    "update_documents",
]

NORMALIZATION = "l2"
DISTANCE = "cosine"


@dataclass(frozen=True, slots=True)
class VectorModel:
    """The embedding model whose vectors an index holds, and its vec0 table."""

    model_id: str
    dim: int
    table: str


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """A document ready to write: its chunks, their tokens, and their vectors (or ``None``)."""

    document: Document
    chunks: tuple[Chunk, ...]
    tokens: tuple[tuple[str, ...], ...]
    vectors: npt.NDArray[np.float32] | None


def read_vector_model(connection: apsw.Connection, tables: IndexTables) -> VectorModel | None:
    """The model recorded for this index version, or ``None`` while it holds no vectors."""
    sql = f"SELECT key, value FROM {tables.meta} WHERE key IN ('model_id', 'dim', 'vector_table')"
    rows: dict[str, Any] = dict(all_rows(connection, sql))
    if "model_id" not in rows:
        return None
    return VectorModel(str(rows["model_id"]), int(rows["dim"]), check_vector_name(str(rows["vector_table"])))


def _create_vector_table(connection: apsw.Connection, tables: IndexTables, table: str, dim: int) -> None:
    create_vector_table(connection, table, dim)


def _insert_roles(connection: apsw.Connection, tables: IndexTables, doc_key: int, document: Document) -> None:
    connection.executemany(
        f"INSERT OR IGNORE INTO {tables.document_roles} (doc_key, role) VALUES (?, ?)",
        [(doc_key, role) for role in document.allowed_roles],
    )


def _restatus_vectors(
    connection: apsw.Connection, tables: IndexTables, model: VectorModel, doc_key: int, status: str
) -> None:
    keys = [int(r[0]) for r in connection.execute(
        f"SELECT chunk_key FROM {tables.chunks} WHERE doc_key = ?", (doc_key,)
    )]  # fmt: skip
    set_status(connection, model.table, keys, status)  # vec0 metadata is set row by row


@dataclass(frozen=True, slots=True)
class WriteDialect:
    """What an engine does its own way inside the writes both engines share (below)."""

    create_vector_table: Callable[[Any, IndexTables, str, int], None]
    """Create the version's vector table ``(connection, tables, name, dim)``."""
    insert_roles: Callable[[Any, IndexTables, int, Document], None]
    """Index a document's allowed roles under its key ``(connection, tables, doc_key, document)``."""
    restatus_vectors: Callable[[Any, IndexTables, VectorModel, int, str], None]
    """Give a document's vectors its new status ``(connection, tables, model, doc_key, status)``."""


SQLITE_WRITES: Final = WriteDialect(_create_vector_table, _insert_roles, _restatus_vectors)
"""SQLite's: vec0 tables, whose metadata columns are set row by row."""


def ensure_vector_model(
    connection: apsw.Connection, tables: IndexTables, model_id: str, dim: int
) -> VectorModel:
    """Record ``model_id`` as the version's model (first time) or check it is the recorded one."""
    return record_model(connection, tables, model_id, dim, SQLITE_WRITES)


def record_model(
    connection: Any, tables: IndexTables, model_id: str, dim: int, dialect: WriteDialect
) -> VectorModel:
    """:func:`ensure_vector_model` for either engine (``dialect`` creates its vector table)."""
    current = read_vector_model(connection, tables)
    if current is not None:
        if current.model_id != model_id or current.dim != dim:
            raise EmbedderMismatchError(
                f"the index holds vectors of {current.model_id!r} (dim {current.dim}); "
                f"the embedder is {model_id!r} (dim {dim}); use the index's model, "
                "or build a new index for the new model"
            )
        return current
    table = vector_table_name(model_id, dim, tables.version)
    dialect.create_vector_table(connection, tables, table, dim)
    connection.execute(
        f"INSERT INTO {tables.vector_tables} "
        "(model_id, dim, table_name, normalization, distance, created_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (model_id, dim, table, NORMALIZATION, DISTANCE, moment_text(datetime.now(UTC))),
    )
    connection.executemany(
        f"INSERT INTO {tables.meta} (key, value) VALUES (?, ?)",
        [("model_id", model_id), ("dim", str(dim)), ("vector_table", table)],
    )
    return VectorModel(model_id, dim, table)


def ensure_tenant(connection: apsw.Connection, tables: IndexTables, tenant: str) -> tuple[int, str]:
    """``(tenant_key, fts_table)`` of ``tenant``, registering it and its FTS5 table if new."""
    row = connection.execute(
        f"SELECT tenant_key, fts_table FROM {tables.tenants} WHERE tenant = ?", (tenant,)
    ).fetchone()
    if row is not None:
        return int(row[0]), check_fts_name(str(row[1]))
    table = fts_table_name(tenant, tables.version)
    create_fts_table(connection, table)
    connection.execute(f"INSERT INTO {tables.tenants} (tenant, fts_table) VALUES (?, ?)", (tenant, table))
    return int(connection.last_insert_rowid()), table


def _next_key(connection: apsw.Connection, column: str, table: str) -> int:
    return int(scalar(connection, f"SELECT coalesce(max({column}), 0) + 1 FROM {table}"))


def insert_documents(
    connection: apsw.Connection,
    tables: IndexTables,
    prepared: Sequence[PreparedDocument],
    model: VectorModel | None,
) -> int:
    """Insert documents, chunks, FTS rows and vectors; return the number of chunks written."""
    doc_key = _next_key(connection, "doc_key", tables.documents)
    chunk_key = _next_key(connection, "chunk_key", tables.chunks)
    written = 0
    fts_rows: dict[str, list[tuple[int, str]]] = {}
    vector_rows: list[tuple[int, str, str, int, npt.NDArray[np.float32]]] = []
    chunk_rows: list[tuple[int, str, int, int, int, int, str]] = []
    for item in prepared:
        document = item.document
        tenant_key, fts_table = ensure_tenant(connection, tables, document.tenant)
        status = Status(document.status).value
        connection.execute(
            f"INSERT INTO {tables.documents} (doc_key, document_id, tenant, status, visibility, valid_from, "
            "valid_until, version_min_key, version_max_key, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                doc_key, document.document_id, document.tenant, status,
                Visibility(document.visibility).value, moment_text(document.valid_from),
                moment_text(document.valid_until) if document.valid_until is not None else None,
                version_key(document.version_min), version_key(document.version_max),
                document_to_json(document),
            ),
        )  # fmt: skip
        _insert_roles(connection, tables, doc_key, document)
        rows = fts_rows.setdefault(fts_table, [])
        for position, (chunk, tokens) in enumerate(zip(item.chunks, item.tokens, strict=True)):
            chunk_rows.append(
                (
                    chunk_key,
                    chunk.chunk_id,
                    doc_key,
                    tenant_key,
                    chunk.ordinal,
                    len(tokens),
                    chunk_to_json(chunk),
                )
            )
            rows.append((chunk_key, " ".join(tokens)))
            if model is not None and item.vectors is not None:
                vector_rows.append((chunk_key, document.tenant, status, doc_key, item.vectors[position]))
            chunk_key += 1
            written += 1
        doc_key += 1
    connection.executemany(
        f"INSERT INTO {tables.chunks} (chunk_key, chunk_id, doc_key, tenant_key, ordinal, n_tokens, record) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        chunk_rows,
    )
    for fts_table, rows in fts_rows.items():
        connection.executemany(f"INSERT INTO {fts_table} (rowid, body) VALUES (?, ?)", rows)
    if model is not None and vector_rows:
        insert_vectors(connection, model.table, vector_rows)
    return written


def update_documents(
    connection: apsw.Connection, tables: IndexTables, documents: Sequence[Document], model: VectorModel | None
) -> None:
    """Replace the indexed governance snapshot of already indexed documents (status, ...)."""
    replace_governance(connection, tables, documents, model, SQLITE_WRITES)


def replace_governance(
    connection: Any,
    tables: IndexTables,
    documents: Sequence[Document],
    model: VectorModel | None,
    dialect: WriteDialect,
) -> None:
    """:func:`update_documents` for either engine (``dialect`` writes roles and vector statuses)."""
    for document in documents:
        row = connection.execute(
            f"SELECT doc_key FROM {tables.documents} WHERE document_id = ?", (document.document_id,)
        ).fetchone()
        if row is None:
            continue
        doc_key, status = int(row[0]), Status(document.status).value
        connection.execute(
            f"UPDATE {tables.documents} SET status = ?, visibility = ?, valid_from = ?, valid_until = ?, "
            "version_min_key = ?, version_max_key = ?, record = ? WHERE doc_key = ?",
            (
                status, Visibility(document.visibility).value, moment_text(document.valid_from),
                moment_text(document.valid_until) if document.valid_until is not None else None,
                version_key(document.version_min), version_key(document.version_max),
                document_to_json(document), doc_key,
            ),
        )  # fmt: skip
        connection.execute(f"DELETE FROM {tables.document_roles} WHERE doc_key = ?", (doc_key,))
        dialect.insert_roles(connection, tables, doc_key, document)
        if model is not None:
            dialect.restatus_vectors(connection, tables, model, doc_key, status)


def delete_documents(
    connection: apsw.Connection,
    tables: IndexTables,
    document_ids: Sequence[str],
    model: VectorModel | None,
) -> int:
    """Remove documents, their chunks, FTS rows and vectors; return the number of chunks removed."""
    removed = 0
    for document_id in document_ids:
        row = connection.execute(
            f"SELECT doc_key FROM {tables.documents} WHERE document_id = ?", (document_id,)
        ).fetchone()
        if row is None:
            continue
        doc_key = int(row[0])
        chunks = all_rows(
            connection,
            f"SELECT c.chunk_key, t.fts_table FROM {tables.chunks} AS c "
            f"JOIN {tables.tenants} AS t USING (tenant_key) WHERE c.doc_key = ?",
            (doc_key,),
        )
        for chunk_key, fts_table in chunks:
            connection.execute(f"DELETE FROM {check_fts_name(fts_table)} WHERE rowid = ?", (int(chunk_key),))
        if model is not None:
            delete_vectors(connection, model.table, [int(c[0]) for c in chunks])
        connection.execute(f"DELETE FROM {tables.chunks} WHERE doc_key = ?", (doc_key,))
        connection.execute(f"DELETE FROM {tables.documents} WHERE doc_key = ?", (doc_key,))
        removed += len(chunks)
    return removed
