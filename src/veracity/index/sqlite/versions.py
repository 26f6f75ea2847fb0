"""The registry of index versions and the pointer readers follow.

A version moves through these states::

    building ─► verified ─► published ─► retired ──► (published again by rollback/publish)
        │           │            └──────► rolled-back
        └───────────┴─► failed (tables dropped)       retired / rolled-back / verified ─► dropped

Exactly one version is ``published``: the one ``index_pointer.current`` names.
Switching is :func:`switch_to`, a few row updates the caller runs inside one
transaction together with its last verification, so readers see the old
version or the new one, never a half-built one. Every index write also bumps
``index_pointer.generation`` so readers drop what they cached.

This module is SQL only; building and verifying live in :mod:`veracity.kb.reindex`.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import apsw

from ...catalog.sql import all_rows, one_row
from ...model.errors import SearchIndexError
from .tables import IndexTables, create_index_tables, drop_index_tables

__all__ = [
    "LIVE_STATES",
    "IndexVersion",
    "begin_version",
    "bump_generation",
    "current_tables",
    "end_version",
    "get_version",
    "list_versions",
    "live_versions",
    "owner_is_gone",
    "read_pointer",
    "record_manifest",
    "rollback_target",
    "set_embedder",
    "switch_to",
    "this_owner",
]

LIVE_STATES: Final = ("building", "verified", "published", "retired", "rolled-back")
"""States whose tables exist: lifecycle changes (status, deletion) are applied to all of them."""

PUBLISHABLE_STATES: Final = ("verified", "retired", "rolled-back")


@dataclass(frozen=True, slots=True)
class IndexVersion:
    """One row of the registry."""

    version: int
    state: str
    created_at: str
    verified_at: str | None
    published_at: str | None
    ended_at: str | None
    owner: str | None
    reason: str | None
    embedder: str | None
    manifest: dict[str, Any] | None

    @property
    def tables(self) -> IndexTables:
        """The version's table names."""
        return IndexTables(self.version)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def this_owner() -> str:
    """``host:pid`` of this process (who is building a version)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_gone(owner: str | None) -> bool:
    """True when ``owner`` is a process of this host that no longer runs (its build was abandoned)."""
    if not owner:
        return True
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's process: it cannot be checked from here
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _schema(connection: apsw.Connection) -> tuple[Callable[..., None], Callable[..., None]]:
    """How to create and drop a version's tables on this connection's database engine."""
    if getattr(connection, "dialect", "sqlite") == "postgresql":
        from ..postgres import tables as postgres

        return postgres.create_index_tables, postgres.drop_index_tables
    return create_index_tables, drop_index_tables


def bump_generation(connection: apsw.Connection) -> None:
    """Advance the index write counter (readers drop what they cached)."""
    connection.execute("UPDATE index_pointer SET generation = generation + 1 WHERE id = 1")


def read_pointer(connection: apsw.Connection) -> tuple[int, int]:
    """``(current version, generation)``."""
    row = one_row(connection, "SELECT current, generation FROM index_pointer WHERE id = 1")
    if row is None:
        raise SearchIndexError("the index pointer is missing; the database was not migrated")
    return int(row[0]), int(row[1])


def current_tables(connection: apsw.Connection) -> IndexTables:
    """Table names of the published version."""
    return IndexTables(read_pointer(connection)[0])


_COLUMNS = (
    "version, state, created_at, verified_at, published_at, ended_at, owner, reason, embedder, manifest"
)


def _row(row: Any) -> IndexVersion:
    values = list(row)
    values[-1] = json.loads(values[-1]) if values[-1] else None
    return IndexVersion(*values)


def list_versions(connection: apsw.Connection) -> list[IndexVersion]:
    """Every version ever registered, oldest first."""
    return [_row(r) for r in all_rows(connection, f"SELECT {_COLUMNS} FROM index_versions ORDER BY version")]


def get_version(connection: apsw.Connection, version: int) -> IndexVersion:
    """One version; ``SearchIndexError`` naming the known ones when it does not exist."""
    row = one_row(connection, f"SELECT {_COLUMNS} FROM index_versions WHERE version = ?", (int(version),))
    if row is None:
        known = [v.version for v in list_versions(connection)]
        raise SearchIndexError(f"no index version {version}; known versions: {known}")
    return _row(row)


def live_versions(connection: apsw.Connection) -> list[IndexTables]:
    """Tables of every version that has them (see :data:`LIVE_STATES`), oldest first."""
    marks = ", ".join("?" for _ in LIVE_STATES)
    rows = all_rows(
        connection,
        f"SELECT version FROM index_versions WHERE state IN ({marks}) ORDER BY version",
        LIVE_STATES,
    )
    return [IndexTables(int(r[0])) for r in rows]


def begin_version(
    connection: apsw.Connection, *, embedder: str | None, owner: str | None = None
) -> IndexTables:
    """Register a new ``building`` version and create its empty tables; run inside a transaction."""
    row = one_row(connection, "SELECT coalesce(max(version), 0) + 1 FROM index_versions")
    version = int(row[0])
    tables = IndexTables(version)
    create, drop = _schema(connection)
    drop(connection, tables)  # leftovers of a version whose registration rolled back
    create(connection, tables)
    connection.execute(
        "INSERT INTO index_versions (version, state, created_at, owner, embedder) "
        "VALUES (?, 'building', ?, ?, ?)",
        (version, _now(), owner or this_owner(), embedder),
    )
    return tables


def record_manifest(
    connection: apsw.Connection, version: int, manifest: dict[str, Any], *, verified: bool = False
) -> None:
    """Store the version's manifest; ``verified=True`` also moves ``building`` to ``verified``."""
    text = json.dumps(manifest, ensure_ascii=False, sort_keys=True)
    connection.execute("UPDATE index_versions SET manifest = ? WHERE version = ?", (text, int(version)))
    if verified:
        connection.execute(
            "UPDATE index_versions SET verified_at = ?, owner = NULL, "
            "state = CASE state WHEN 'building' THEN 'verified' ELSE state END WHERE version = ?",
            (_now(), int(version)),
        )


def set_embedder(connection: apsw.Connection, version: int, embedder: str | None) -> None:
    """Record the :data:`veracity.index.embedders.EMBEDDERS` name that builds the version's model."""
    connection.execute("UPDATE index_versions SET embedder = ? WHERE version = ?", (embedder, int(version)))


def end_version(connection: apsw.Connection, version: int, state: str, reason: str) -> None:
    """Drop a version's tables and mark it ``failed`` or ``dropped`` with ``reason``; never the current."""
    if state not in ("failed", "dropped"):
        raise ValueError(f"a version ends failed or dropped, not {state!r}")
    if read_pointer(connection)[0] == int(version):
        raise SearchIndexError(f"index version {version} is the published one; publish another version first")
    _schema(connection)[1](connection, IndexTables(int(version)))
    connection.execute(
        "UPDATE index_versions SET state = ?, reason = ?, ended_at = ?, owner = NULL WHERE version = ?",
        (state, reason, _now(), int(version)),
    )


def switch_to(connection: apsw.Connection, version: int, *, rollback: bool = False) -> int:
    """Make ``version`` the published one; return the version it replaced. Run inside a transaction.

    The replaced version becomes ``retired`` (``rolled-back`` when ``rollback``).
    """
    target = get_version(connection, version)
    if target.state not in PUBLISHABLE_STATES:
        raise SearchIndexError(
            f"index version {version} is {target.state}; only a verified, retired or rolled-back "
            "version can be published"
        )
    current = read_pointer(connection)[0]
    now = _now()
    connection.execute(
        "UPDATE index_versions SET state = ?, ended_at = ? WHERE version = ?",
        ("rolled-back" if rollback else "retired", now, current),
    )
    connection.execute(
        "UPDATE index_versions SET state = 'published', published_at = ?, ended_at = NULL WHERE version = ?",
        (now, int(version)),
    )
    connection.execute("UPDATE index_pointer SET current = ? WHERE id = 1", (int(version),))
    bump_generation(connection)
    return current


def rollback_target(connection: apsw.Connection) -> IndexVersion | None:
    """The version published just before the current one (the latest to be retired), if it still exists."""
    row = one_row(
        connection,
        f"SELECT {_COLUMNS} FROM index_versions WHERE state = 'retired' "
        "ORDER BY ended_at DESC, version DESC LIMIT 1",
    )
    return _row(row) if row is not None else None
