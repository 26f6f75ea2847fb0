"""Reading a published index's stored vectors back, so a copy of the knowledge base reuses them.

:func:`chunk_keys_by_text` finds each chunk by the digest of the text the
embedder saw (its record); :func:`stored_vectors` fetches the vectors of
chunk keys from the version's vector table, on either backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..catalog.sql import dialect_of
from .sqlite.records import record_text_digest
from .sqlite.tables import IndexTables
from .sqlite.writer import VectorModel
from .versioned import VersionedIndex

__all__ = ["chunk_keys_by_text", "stored_vectors"]


def chunk_keys_by_text(index: VersionedIndex) -> dict[str, int]:
    """The digest of each chunk's embedded text → its chunk key in ``index``'s version (first wins)."""
    keys: dict[str, int] = {}
    tables = IndexTables(index.version)
    for key, record in index.store.connection.execute(f"SELECT chunk_key, record FROM {tables.chunks}"):
        keys.setdefault(record_text_digest(str(record)), int(key))
    return keys


def stored_vectors(index: VersionedIndex, model: VectorModel, keys: Sequence[int]) -> dict[int, Any]:
    """The stored vectors of the chunk ``keys`` in ``index`` (keys without one are left out)."""
    connection = index.store.connection
    if dialect_of(connection) == "postgresql":
        from .postgres.vectors import fetch_vectors as fetch_pg

        with connection.raw() as raw:
            rows, matrix = fetch_pg(
                raw, f"SELECT chunk_key, embedding FROM {model.table} WHERE chunk_key = ANY(%s)",
                (list(keys),), model.dim,
            )  # fmt: skip
        return {int(row[0]): matrix[i] for i, row in enumerate(rows)}
    from .sqlite.vectors import fetch_vectors as fetch_sqlite

    found, matrix = fetch_sqlite(connection, model.table, keys, model.dim)
    return {int(key): matrix[i] for i, key in enumerate(found.tolist())}
