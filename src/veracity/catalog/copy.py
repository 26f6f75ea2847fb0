"""Copying a knowledge base's catalog rows from one database to another, on either backend.

The two backends share the catalog tables' columns, so a copy is row for row:
each table's columns that both sides have, in the source's order (``seq`` where
the table has one, else every column). What differs by dialect is only how a
table's columns are listed and that PostgreSQL's serial counters must be moved
past the copied numbers; both are chosen from the connection, in one function.
"""

from __future__ import annotations

from typing import Any, Final

from .sql import dialect_of

__all__ = ["CATALOG_TABLES", "copy_catalog_rows", "table_columns"]

CATALOG_TABLES: Final = (
    "documents", "document_roles", "document_facts", "chunks", "tenant_roles", "kb_settings",
    "source_files", "tombstones", "api_keys", "ingestion_steps", "quarantine",
    "sync_sources", "sync_files",
)  # fmt: skip
"""What is copied, parents before children (foreign keys); with the sync state, so a sync of the
copy reads only what changed since the original's last one."""

_SERIALS: Final = (("documents", "seq"), ("chunks", "seq"), ("ingestion_steps", "seq"))


def table_columns(connection: Any, table: str) -> list[str]:
    """The columns of ``table``, in their declared order."""
    if dialect_of(connection) == "postgresql":
        sql = (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? ORDER BY ordinal_position"
        )
        return [str(row[0]) for row in connection.execute(sql, (table,))]
    return [str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})")]


def copy_catalog_rows(source: Any, destination: Any) -> dict[str, int]:
    """Every catalog row of the ``source`` connection into ``destination``'s; rows per table.

    Call inside a transaction of the destination (and a read of the source): the
    destination's own catalog rows (a new knowledge base's) are deleted first.
    """
    counts: dict[str, int] = {}
    for table in reversed(CATALOG_TABLES):  # children first
        destination.execute(f"DELETE FROM {table}")
    for table in CATALOG_TABLES:
        wanted = set(table_columns(source, table))
        columns = [c for c in table_columns(destination, table) if c in wanted]
        names = ", ".join(f'"{c}"' for c in columns)
        order = "seq" if "seq" in columns else names
        selected = ", ".join(f't."{c}"' for c in columns)
        if "doc_tenant" in table_columns(destination, table) and "doc_tenant" not in wanted:
            # SQLite's rows of a document do not name its tenant; PostgreSQL's must (pg0010)
            columns.append("doc_tenant")
            names += ', "doc_tenant"'
            selected += ", (SELECT d.tenant FROM documents AS d WHERE d.document_id = t.document_id)"
        rows = source.execute(f"SELECT {selected} FROM {table} AS t ORDER BY {order}").fetchall()
        marks = ", ".join("?" for _ in columns)
        destination.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
        counts[table] = len(rows)
    if dialect_of(destination) == "postgresql":  # the next serial numbers follow the copied ones
        for table, column in _SERIALS:
            destination.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)"
            )
    return counts
