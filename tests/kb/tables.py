"""What the knowledge-base tests read from either backend's database (table names, raw contents)."""

from __future__ import annotations

from typing import Any

from veracity.index.sqlite.tables import IndexTables


def is_postgres(kb: Any) -> bool:
    """True when ``kb``'s catalog lives in PostgreSQL."""
    return getattr(kb.catalog.store.connection, "dialect", "sqlite") == "postgresql"


def table_names(kb: Any) -> list[str]:
    """Every table of the knowledge base's database, sorted."""
    sql = (
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        if is_postgres(kb)
        else "SELECT name FROM sqlite_master WHERE type = 'table'"
    )
    return sorted(str(row[0]) for row in kb.catalog.store.connection.execute(sql))


def tables_of(kb: Any, version: int) -> set[str]:
    """The tables of one index version (documents, chunks, postings or FTS5, vectors)."""
    prefixes = (IndexTables(version).prefix, f"fts{version}_", f"vec{version}_")
    return {name for name in table_names(kb) if name.startswith(prefixes)}


def indexed_ids(kb: Any, version: int) -> set[str]:
    """Document ids indexed in ``version``."""
    rows = kb.catalog.store.connection.execute(f"SELECT document_id FROM ix{version}_documents")
    return {str(row[0]) for row in rows}


def every_row_text(kb: Any) -> dict[str, str]:
    """``repr`` of every row of every table, per table (to prove a value is gone everywhere)."""
    connection = kb.catalog.store.connection
    return {
        table: "\n".join(repr(row) for row in connection.execute(f'SELECT * FROM "{table}"'))
        for table in table_names(kb)
    }
