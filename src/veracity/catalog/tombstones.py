"""Tombstones: a deleted source stays deleted when its folder is ingested again.

``veracity delete`` removes a document's bytes everywhere, but the source file
usually still sits in the folder that is ingested again and again. A tombstone
makes the next ingest report the file as "deleted earlier, skipped" instead of
adding it back; ``ingest --restore`` removes the tombstone and ingests it.

A tombstone names nothing in clear, so a deleted document's ids and text stay
gone from the file: it holds a hash of the tenant and source id, the deleted
revision's content digest, and when.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import apsw

from ..model.contracts import Document, sha256_hex
from .sql import in_values

__all__ = [
    "Tombstone",
    "add_tombstone",
    "count_tombstones",
    "find_tombstone",
    "find_tombstones",
    "remove_tombstone",
    "remove_tombstones",
]


def _key(tenant: str, source_id: str) -> str:
    return sha256_hex(f"tombstone\x1f{tenant}\x1f{source_id}")


@dataclass(frozen=True, slots=True)
class Tombstone:
    """A deleted source: the deleted revision's content digest, and when it was deleted."""

    content_digest: str
    deleted_at: str


def add_tombstone(connection: apsw.Connection, document: Document) -> None:
    """Record that ``document``'s source was deleted (call inside the delete's transaction)."""
    connection.execute(
        "INSERT INTO tombstones (source_key, content_digest, deleted_at) VALUES (?, ?, ?) "
        "ON CONFLICT (source_key) DO UPDATE SET content_digest = excluded.content_digest, "
        "deleted_at = excluded.deleted_at",
        (
            _key(document.tenant, document.source_id),
            document.content_digest,
            datetime.now(UTC).isoformat(timespec="seconds"),
        ),
    )


def find_tombstone(connection: apsw.Connection, tenant: str, source_id: str) -> Tombstone | None:
    """The tombstone of ``source_id`` in ``tenant``, if it was deleted."""
    row = connection.execute(
        "SELECT content_digest, deleted_at FROM tombstones WHERE source_key = ?", (_key(tenant, source_id),)
    ).fetchone()
    return None if row is None else Tombstone(str(row[0]), str(row[1]))


def find_tombstones(
    connection: apsw.Connection, sources: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], Tombstone]:
    """The tombstones of those ``(tenant, source_id)`` that were deleted (one statement)."""
    keys = {_key(tenant, source_id): (tenant, source_id) for tenant, source_id in sources}
    if not keys:
        return {}
    where, bound = in_values(connection, "source_key", sorted(keys))
    rows = connection.execute(
        f"SELECT source_key, content_digest, deleted_at FROM tombstones WHERE {where}", (bound,)
    ).fetchall()
    return {keys[str(row[0])]: Tombstone(str(row[1]), str(row[2])) for row in rows}


def remove_tombstone(connection: apsw.Connection, tenant: str, source_id: str) -> None:
    """Forget that ``source_id`` was deleted (``ingest --restore``)."""
    connection.execute("DELETE FROM tombstones WHERE source_key = ?", (_key(tenant, source_id),))


def remove_tombstones(connection: apsw.Connection, sources: Sequence[tuple[str, str]]) -> None:
    """:func:`remove_tombstone` of each ``(tenant, source_id)`` (one statement)."""
    if sources:
        where, bound = in_values(connection, "source_key", sorted({_key(t, s) for t, s in sources}))
        connection.execute(f"DELETE FROM tombstones WHERE {where}", (bound,))


def count_tombstones(connection: apsw.Connection) -> int:
    """How many deleted sources are remembered."""
    row = connection.execute("SELECT count(*) FROM tombstones").fetchone()
    return int(row[0]) if row else 0
