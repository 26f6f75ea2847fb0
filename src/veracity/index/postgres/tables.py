"""The tables of one index version in PostgreSQL, with row-level security from the start.

Names are those of :class:`~veracity.index.sqlite.tables.IndexTables` (``ix<v>_…``),
so the registry and the views shared with SQLite read either. Instead of
FTS5 and vec0, a version has ``ix<v>_postings`` (tenant, term, chunk, term
frequency: BM25 is computed from it in SQL) and one ``vec<v>_<dim>_<hash>``
table of ``vector(dim)`` with an HNSW index (cosine). Every table carries the
tenant of its rows and a policy on ``veracity.tenant``; the reader role may
``SELECT`` them.
"""

from __future__ import annotations

from typing import Any

from ...catalog.postgres.migrations import READER_ROLE, TENANT_SETTING
from ..sqlite.tables import IndexTables
from ..sqlite.vectors import check_vector_name

__all__ = [
    "create_index_tables",
    "create_vector_table",
    "drop_index_tables",
    "ensure_index_tables",
    "postings_table",
    "secure",
]


def postings_table(tables: IndexTables) -> str:
    """``ix<v>_postings``: one row per (tenant, term, chunk) with the term's frequency in the chunk."""
    return f"{tables.prefix}postings"


def secure(connection: Any, table: str, column: str) -> None:
    """Row-level security on ``table`` by ``column``, and ``SELECT`` for the reader role."""
    connection.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    connection.execute(
        f"CREATE POLICY tenant_rows ON {table} USING ({column} = current_setting('{TENANT_SETTING}', true))"
    )
    connection.execute(f"GRANT SELECT ON {table} TO {READER_ROLE}")


def create_index_tables(connection: Any, tables: IndexTables) -> None:
    """Create the (empty) tables of ``tables``; the vector table comes with the model."""
    t, p, postings = tables, tables.prefix, postings_table(tables)
    for statement in (
        f"""CREATE TABLE {t.documents} (
            doc_key BIGINT PRIMARY KEY, document_id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL,
            status TEXT NOT NULL, visibility TEXT NOT NULL, valid_from TEXT NOT NULL, valid_until TEXT,
            version_min_key TEXT, version_max_key TEXT, record TEXT NOT NULL)""",
        f"""CREATE INDEX {p}documents_filter ON {t.documents} (tenant, status, valid_from, valid_until,
            version_min_key, version_max_key, visibility, document_id)""",
        f"""CREATE TABLE {t.document_roles} (
            doc_key BIGINT NOT NULL REFERENCES {t.documents} (doc_key) ON DELETE CASCADE,
            role TEXT NOT NULL, doc_tenant TEXT NOT NULL, PRIMARY KEY (doc_key, role))""",
        f"""CREATE TABLE {t.chunks} (
            chunk_key BIGINT PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE,
            doc_key BIGINT NOT NULL REFERENCES {t.documents} (doc_key) ON DELETE CASCADE,
            tenant_key INTEGER NOT NULL, ordinal INTEGER NOT NULL, n_tokens INTEGER NOT NULL,
            record TEXT NOT NULL, doc_tenant TEXT NOT NULL)""",
        f"CREATE INDEX {p}chunks_by_document ON {t.chunks} (doc_key, ordinal)",
        f"""CREATE TABLE {t.tenants} (
            tenant_key INTEGER PRIMARY KEY, tenant TEXT NOT NULL UNIQUE,
            fts_table TEXT NOT NULL DEFAULT '')""",
        f"""CREATE TABLE {t.vector_tables} (
            model_id TEXT PRIMARY KEY, dim INTEGER NOT NULL, table_name TEXT NOT NULL UNIQUE,
            normalization TEXT NOT NULL, distance TEXT NOT NULL, created_at TEXT NOT NULL)""",
        f"CREATE TABLE {t.meta} (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        f"""CREATE TABLE {postings} (
            doc_tenant TEXT NOT NULL, term TEXT NOT NULL,
            chunk_key BIGINT NOT NULL REFERENCES {t.chunks} (chunk_key) ON DELETE CASCADE,
            tf INTEGER NOT NULL, PRIMARY KEY (doc_tenant, term, chunk_key))""",
        f"CREATE INDEX {p}postings_by_chunk ON {postings} (chunk_key)",
    ):
        connection.execute(statement)
    for table, column in (
        (t.documents, "tenant"), (t.document_roles, "doc_tenant"), (t.chunks, "doc_tenant"),
        (t.tenants, "tenant"), (postings, "doc_tenant"),
    ):  # fmt: skip
        secure(connection, table, column)
    for table in (t.vector_tables, t.meta):
        connection.execute(f"GRANT SELECT ON {table} TO {READER_ROLE}")


def create_vector_table(connection: Any, tables: IndexTables, table: str, dim: int) -> None:
    """The version's ``vector(dim)`` table with its HNSW (cosine) index."""
    check_vector_name(table)
    connection.execute(
        f"""CREATE TABLE {table} (
            chunk_key BIGINT PRIMARY KEY REFERENCES {tables.chunks} (chunk_key) ON DELETE CASCADE,
            doc_tenant TEXT NOT NULL, doc_key BIGINT NOT NULL, status TEXT NOT NULL,
            embedding vector({int(dim)}) NOT NULL)"""
    )
    connection.execute(f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops)")
    connection.execute(f"CREATE INDEX {table}_by_document ON {table} (doc_key)")
    secure(connection, table, "doc_tenant")


def drop_index_tables(connection: Any, tables: IndexTables) -> None:
    """Drop every table of the version (its vector table too); absent tables are fine."""
    if connection.execute("SELECT to_regclass(?) IS NOT NULL", (tables.vector_tables,)).fetchall()[0][0]:
        for (table,) in connection.execute(f"SELECT table_name FROM {tables.vector_tables}").fetchall():
            connection.execute(f"DROP TABLE IF EXISTS {check_vector_name(str(table))} CASCADE")
    for name in (postings_table(tables), tables.document_roles, tables.chunks, tables.documents,
                 tables.tenants, tables.vector_tables, tables.meta):  # fmt: skip
        connection.execute(f"DROP TABLE IF EXISTS {name} CASCADE")


def ensure_index_tables(connection: Any, tables: IndexTables) -> bool:
    """Create the version's tables unless they exist (a new database's version 1); True if created."""
    if connection.execute("SELECT to_regclass(?) IS NULL", (tables.documents,)).fetchall()[0][0]:
        create_index_tables(connection, tables)
        return True
    return False
