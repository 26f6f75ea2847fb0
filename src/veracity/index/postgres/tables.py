"""The tables of one index version in PostgreSQL, with row-level security from the start.

Names are those of :class:`~veracity.index.sqlite.tables.IndexTables` (``ix<v>_…``),
so the registry and the views shared with SQLite read either. Instead of
FTS5 and vec0, a version has ``ix<v>_postings`` (per tenant and term, a few
segment rows of chunk keys and term frequencies, see :func:`create_postings`;
BM25 is the plan SQLite runs, :mod:`~veracity.index.sqlite.bm25_plan`) and one
``vec<v>_<dim>_<hash>`` table of ``vector(dim)`` with each
vector's sign bits beside it (``bit(dim)``, pgvector's ``binary_quantize``: 64
bytes a 512-dim vector). The floats are stored out of line, so a scan of the
bits reads narrow rows; a dense search ranks the eligible rows by Hamming
distance and rescores the best with the floats, as SQLite's quantized plan
does. No approximate-neighbour index: an HNSW graph cost 1–3 ms a vector to
build or insert on two cores (ingest was bound by it), and a filtered
brute-force Hamming scan over the eligible rows is exact. Each document row
keeps its chunk and token counts, so the size of an eligible set is a sum over
documents, not a scan of their chunks.

No foreign keys between the version's tables: every row of a document is
written by one ``COPY`` per table and removed by ``writer.delete_rows`` in the same
transaction, and a per-row key check would cost more than the rows' own writes.
Every table carries the tenant of its rows and a policy on
``veracity.tenant``; the reader role may ``SELECT`` them.
"""

from __future__ import annotations

from typing import Any

from ...catalog.postgres.migrations import READER_ROLE, TENANT_SETTING
from ..sqlite.tables import IndexTables
from ..sqlite.vectors import check_vector_name

__all__ = [
    "create_index_tables",
    "create_postings",
    "create_vector_table",
    "drop_index_tables",
    "ensure_index_tables",
    "postings_table",
    "secure",
    "segments_table",
    "sign_bits_sql",
]


def postings_table(tables: IndexTables) -> str:
    """``ix<v>_postings``: one row per (tenant, term, segment) with the term's chunks and frequencies."""
    return f"{tables.prefix}postings"


def segments_table(tables: IndexTables) -> str:
    """``ix<v>_segments``: each postings segment's tenant, chunk count and chunk key range."""
    return f"{tables.prefix}segments"


def secure(connection: Any, table: str, column: str) -> None:
    """Row-level security on ``table`` by ``column``, and ``SELECT`` for the reader role."""
    connection.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    connection.execute(
        f"CREATE POLICY tenant_rows ON {table} USING ({column} = current_setting('{TENANT_SETTING}', true))"
    )
    connection.execute(f"GRANT SELECT ON {table} TO {READER_ROLE}")


def create_index_tables(connection: Any, tables: IndexTables) -> None:
    """Create the (empty) tables of ``tables``; the vector table comes with the model."""
    t, p = tables, tables.prefix
    for statement in (
        f"""CREATE TABLE {t.documents} (
            doc_key BIGINT PRIMARY KEY, document_id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL,
            status TEXT NOT NULL, visibility TEXT NOT NULL, valid_from TEXT NOT NULL, valid_until TEXT,
            version_min_key TEXT, version_max_key TEXT, record TEXT NOT NULL,
            n_chunks INTEGER NOT NULL DEFAULT 0, n_tokens BIGINT NOT NULL DEFAULT 0)""",
        # doc_key included: the governance filter reads the index alone (an index-only scan), never
        # the heap; at 1M chunks that is 25 ms a query instead of 55 (docs/postgresql.md)
        f"""CREATE INDEX {p}documents_filter ON {t.documents} (tenant, status, valid_from, valid_until,
            version_min_key, version_max_key, visibility, document_id) INCLUDE (doc_key)""",
        f"""CREATE TABLE {t.document_roles} (
            doc_key BIGINT NOT NULL, role TEXT NOT NULL, doc_tenant TEXT NOT NULL,
            PRIMARY KEY (doc_key, role))""",
        f"""CREATE TABLE {t.chunks} (
            chunk_key BIGINT PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE,
            doc_key BIGINT NOT NULL, tenant_key INTEGER NOT NULL, ordinal INTEGER NOT NULL,
            n_tokens INTEGER NOT NULL, record TEXT NOT NULL, doc_tenant TEXT NOT NULL)""",
        f"CREATE INDEX {p}chunks_by_document ON {t.chunks} (doc_key, ordinal)",
        f"""CREATE TABLE {t.tenants} (
            tenant_key INTEGER PRIMARY KEY, tenant TEXT NOT NULL UNIQUE,
            fts_table TEXT NOT NULL DEFAULT '')""",
        f"""CREATE TABLE {t.vector_tables} (
            model_id TEXT PRIMARY KEY, dim INTEGER NOT NULL, table_name TEXT NOT NULL UNIQUE,
            normalization TEXT NOT NULL, distance TEXT NOT NULL, created_at TEXT NOT NULL)""",
        f"CREATE TABLE {t.meta} (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ):
        connection.execute(statement)
    create_postings(connection, tables)
    for table, column in (
        (t.documents, "tenant"), (t.document_roles, "doc_tenant"), (t.chunks, "doc_tenant"),
        (t.tenants, "tenant"), (postings_table(t), "doc_tenant"), (segments_table(t), "doc_tenant"),
    ):  # fmt: skip
        secure(connection, table, column)
    for table in (t.vector_tables, t.meta):
        connection.execute(f"GRANT SELECT ON {table} TO {READER_ROLE}")


def create_postings(connection: Any, tables: IndexTables) -> None:
    """The postings in segments: one row per (tenant, term, segment) holding arrays.

    A segment is the postings of one write batch of one tenant, or the merge of
    several (:mod:`.segments`): ``keys`` the ascending chunk keys that hold the
    term, ``tfs`` its frequency in each. A query reads a term's few rows by the
    primary key; a removed chunk's postings stay until its segment is merged
    (readers keep only keys of chunks the index holds, and keys are never reused).
    """
    postings, segments = postings_table(tables), segments_table(tables)
    connection.execute(
        f"""CREATE TABLE {postings} (
            doc_tenant TEXT NOT NULL, term TEXT NOT NULL, segment BIGINT NOT NULL,
            keys BIGINT[] NOT NULL, tfs INTEGER[] NOT NULL,
            PRIMARY KEY (doc_tenant, term, segment))"""
    )
    connection.execute(f"CREATE INDEX {postings}_by_segment ON {postings} (segment)")
    connection.execute(
        f"""CREATE TABLE {segments} (
            segment BIGINT PRIMARY KEY, doc_tenant TEXT NOT NULL, n_chunks INTEGER NOT NULL,
            first_key BIGINT NOT NULL, last_key BIGINT NOT NULL)"""
    )


def sign_bits_sql(column: str, dim: int) -> str:
    """The SQL expression of a vector's sign bits, as the ``bits`` column stores them."""
    return f"(binary_quantize({column})::bit({int(dim)}))"


def create_vector_table(connection: Any, tables: IndexTables, table: str, dim: int) -> None:
    """The version's ``vector(dim)`` table, with the sign bits of each vector and the floats out of line."""
    check_vector_name(table)
    connection.execute(
        f"""CREATE TABLE {table} (
            chunk_key BIGINT PRIMARY KEY, doc_tenant TEXT NOT NULL, doc_key BIGINT NOT NULL,
            status TEXT NOT NULL, bits bit({int(dim)}) NOT NULL, embedding vector({int(dim)}) NOT NULL)"""
    )
    connection.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL")
    connection.execute(f"CREATE INDEX {table}_by_document ON {table} (doc_key)")
    secure(connection, table, "doc_tenant")


def drop_index_tables(connection: Any, tables: IndexTables) -> None:
    """Drop every table of the version (its vector table too); absent tables are fine."""
    if connection.execute("SELECT to_regclass(?) IS NOT NULL", (tables.vector_tables,)).fetchall()[0][0]:
        for (table,) in connection.execute(f"SELECT table_name FROM {tables.vector_tables}").fetchall():
            connection.execute(f"DROP TABLE IF EXISTS {check_vector_name(str(table))} CASCADE")
    for name in (postings_table(tables), segments_table(tables), tables.document_roles, tables.chunks,
                 tables.documents, tables.tenants, tables.vector_tables, tables.meta):  # fmt: skip
        connection.execute(f"DROP TABLE IF EXISTS {name} CASCADE")


def ensure_index_tables(connection: Any, tables: IndexTables) -> bool:
    """Create the version's tables unless they exist (a new database's version 1); True if created."""
    if connection.execute("SELECT to_regclass(?) IS NULL", (tables.documents,)).fetchall()[0][0]:
        create_index_tables(connection, tables)
        return True
    return False
