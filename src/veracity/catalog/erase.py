"""Making deleted rows' bytes leave the storage, not only the queries.

After a delete, SQLite's freed pages still hold the old bytes until they are
reused, and old pages live on in the write-ahead log; PostgreSQL keeps dead
tuples until ``VACUUM`` reclaims them. :func:`erase_freed_storage` does what each
engine allows, one function with the dialect read from the connection.
"""

from __future__ import annotations

from typing import Any, Final

from .faults import storage_faults
from .sql import dialect_of

__all__ = ["ERASED_TABLES", "erase_freed_storage"]

ERASED_TABLES: Final = ("documents", "chunks", "document_roles", "document_facts")
"""The catalog tables a PostgreSQL delete vacuums (the ones holding a document's text and ids)."""


def erase_freed_storage(connection: Any, path: str) -> None:
    """Rewrite the storage at ``path`` so deleted rows' bytes are gone (outside a transaction).

    SQLite: ``VACUUM`` with ``secure_delete`` writes the whole file through the
    WAL (readers keep their snapshots meanwhile), then the WAL is truncated.
    PostgreSQL has no ``secure_delete``: ``VACUUM`` frees dead tuples, whose bytes
    may stay in the data files until overwritten, so there it is best effort.
    """
    if dialect_of(connection) == "postgresql":
        for table in ERASED_TABLES:
            connection.execute(f"VACUUM {table}")
        return
    with storage_faults(path, connection):
        connection.execute("PRAGMA secure_delete = ON")
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
