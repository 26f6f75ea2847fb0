"""Names and schema of one version of the derived search index.

The catalog database holds any number of index versions side by side. Version
``v`` owns the tables ``ix<v>_documents``, ``ix<v>_document_roles``,
``ix<v>_chunks``, ``ix<v>_tenants``, ``ix<v>_vector_tables`` and ``ix<v>_meta``,
plus the FTS5 and vec0 tables registered in them (``fts<v>_<hash>``,
``vec<v>_<dim>_<hash>``). Which version readers use is one row in
``index_pointer`` (:mod:`veracity.index.sqlite.versions`), so switching versions
is a single-row update inside a transaction.

Every name spliced into SQL comes from an integer version or passes a name check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import apsw

from ...catalog.sql import all_rows, scalar

__all__ = [
    "IndexTables",
    "create_index_tables",
    "drop_index_tables",
    "index_schema",
    "indexed_counts",
    "indexed_statuses",
]


@dataclass(frozen=True, slots=True)
class IndexTables:
    """The table names of index version ``version``."""

    version: int

    def __post_init__(self) -> None:
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise ValueError(f"an index version is an integer >= 1, got {self.version!r}")

    @property
    def prefix(self) -> str:
        """``ix<version>_``: every regular table of this version starts with it."""
        return f"ix{self.version}_"

    @property
    def documents(self) -> str:
        """Indexed documents as of indexing (the governance snapshot)."""
        return f"{self.prefix}documents"

    @property
    def document_roles(self) -> str:
        """Roles allowed per indexed document."""
        return f"{self.prefix}document_roles"

    @property
    def chunks(self) -> str:
        """Indexed chunks; ``chunk_key`` is the rowid in the FTS5 and vec0 tables."""
        return f"{self.prefix}chunks"

    @property
    def tenants(self) -> str:
        """One FTS5 table per tenant."""
        return f"{self.prefix}tenants"

    @property
    def vector_tables(self) -> str:
        """The vec0 table of the version's embedding model."""
        return f"{self.prefix}vector_tables"

    @property
    def meta(self) -> str:
        """Key/value facts about the version (model id, dimension, vector table)."""
        return f"{self.prefix}meta"


def _ddl(t: IndexTables) -> str:
    p = t.prefix
    return f"""
    CREATE TABLE {t.documents} (
        doc_key         INTEGER PRIMARY KEY,
        document_id     TEXT NOT NULL UNIQUE,
        tenant          TEXT NOT NULL,
        status          TEXT NOT NULL,
        visibility      TEXT NOT NULL,
        valid_from      TEXT NOT NULL,
        valid_until     TEXT,
        version_min_key TEXT,
        version_max_key TEXT,
        record          TEXT NOT NULL
    );
    CREATE INDEX {p}documents_by_tenant ON {t.documents} (tenant, status);
    CREATE INDEX {p}documents_filter ON {t.documents} (
        tenant, status, valid_from, valid_until, version_min_key, version_max_key,
        visibility, document_id
    );
    CREATE TABLE {t.document_roles} (
        doc_key INTEGER NOT NULL REFERENCES {t.documents} (doc_key) ON DELETE CASCADE,
        role    TEXT NOT NULL,
        PRIMARY KEY (doc_key, role)
    ) WITHOUT ROWID;
    CREATE TABLE {t.chunks} (
        chunk_key  INTEGER PRIMARY KEY,
        chunk_id   TEXT NOT NULL UNIQUE,
        doc_key    INTEGER NOT NULL REFERENCES {t.documents} (doc_key) ON DELETE CASCADE,
        tenant_key INTEGER NOT NULL,
        ordinal    INTEGER NOT NULL,
        n_tokens   INTEGER NOT NULL,
        record     TEXT NOT NULL
    );
    CREATE INDEX {p}chunks_by_document ON {t.chunks} (doc_key, ordinal);
    CREATE INDEX {p}chunks_by_tenant ON {t.chunks} (tenant_key, chunk_key);
    CREATE TABLE {t.tenants} (
        tenant_key  INTEGER PRIMARY KEY,
        tenant      TEXT NOT NULL UNIQUE,
        fts_table   TEXT NOT NULL UNIQUE
    );
    CREATE TABLE {t.vector_tables} (
        model_id      TEXT PRIMARY KEY,
        dim           INTEGER NOT NULL,
        table_name    TEXT NOT NULL UNIQUE,
        normalization TEXT NOT NULL,
        distance      TEXT NOT NULL,
        created_at    TEXT NOT NULL
    );
    CREATE TABLE {t.meta} (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;
    """


def create_index_tables(connection: apsw.Connection, tables: IndexTables) -> None:
    """Create the (empty) regular tables of ``tables``; FTS5 / vec0 tables come with their data."""
    connection.execute(_ddl(tables))


def drop_index_tables(connection: apsw.Connection, tables: IndexTables) -> None:
    """Drop every table of the version: its FTS5 and vec0 tables first, then the regular ones."""
    from .fts import drop_fts_table
    from .vectors import check_vector_name, drop_vector_table

    existing = {str(row[0]) for row in all_rows(connection, "SELECT name FROM sqlite_master")}
    if tables.tenants in existing:
        for (fts_table,) in all_rows(connection, f"SELECT fts_table FROM {tables.tenants}"):
            drop_fts_table(connection, str(fts_table))
    if tables.vector_tables in existing:
        for (table,) in all_rows(connection, f"SELECT table_name FROM {tables.vector_tables}"):
            drop_vector_table(connection, check_vector_name(str(table)))
    for name in (tables.document_roles, tables.chunks, tables.documents, tables.tenants,
                 tables.vector_tables, tables.meta):  # fmt: skip
        connection.execute(f"DROP TABLE IF EXISTS {name}")


def indexed_counts(connection: apsw.Connection, tables: IndexTables) -> tuple[int, int]:
    """How many documents and chunks the version holds (portable SQL: either backend's connection)."""
    documents = scalar(connection, f"SELECT count(*) FROM {tables.documents}")
    chunks = scalar(connection, f"SELECT count(*) FROM {tables.chunks}")
    return int(documents), int(chunks)


def indexed_statuses(connection: apsw.Connection, tables: IndexTables) -> dict[str, str]:
    """Each document of the version: its id → the status it was indexed with."""
    rows = all_rows(connection, f"SELECT document_id, status FROM {tables.documents}")
    return {str(document_id): str(status) for document_id, status in rows}


def index_schema(connection: apsw.Connection, tables: IndexTables) -> list[tuple[str, str, str]]:
    """``(type, name, sql)`` of the version's regular tables and indexes, names without the prefix.

    Lets a test compare a migrated version with a freshly created one.
    """
    rows = all_rows(
        connection,
        "SELECT type, name, sql FROM sqlite_master WHERE name LIKE ? ESCAPE '\\' AND sql IS NOT NULL "
        "ORDER BY type, name",
        (tables.prefix.replace("_", "\\_") + "%",),
    )
    normalized = []
    for kind, name, sql in rows:
        without_comments = re.sub(r"--[^\n]*", "", str(sql))
        text = " ".join(without_comments.replace(tables.prefix, "ix_").replace('"', "").split())
        normalized.append((str(kind), str(name).removeprefix(tables.prefix), text))
    return normalized
