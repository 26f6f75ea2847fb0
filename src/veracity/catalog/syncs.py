"""What ``veracity sync`` remembers about each source: its last sync and its files' fingerprints.

``sync_sources``: one row per source name of the sources file: its kind and location, the folder
its files are ingested from (``source_files.root``), what the last successful sync reached
(``state``: a git source's commit), when it last ran and succeeded, its last error, and the
counts of its last run. ``sync_files``: per source and path, the fingerprint of the file as last
ingested (a git blob id, a page's digest, a file's digest) and what a re-fetch needs (a page's
URL and validators). A file whose fingerprint is unchanged is not read again. The SQL is
portable (SQLite and PostgreSQL alike).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

__all__ = [
    "SYNC_TABLES",
    "SyncSourceRow",
    "documents_per_state",
    "forget_sync_source",
    "read_sync_files",
    "read_sync_source",
    "read_sync_sources",
    "record_sync_run",
    "write_sync_files",
]

SYNC_TABLES: Final = """
CREATE TABLE sync_sources (
    name         TEXT PRIMARY KEY,      -- the source's name in the sources file
    kind         TEXT NOT NULL,         -- folder | git | site
    location     TEXT NOT NULL,         -- its folder, repository or first start URL
    root         TEXT NOT NULL,         -- the folder its files are ingested from (source_files.root)
    schedule     TEXT,                  -- the sources file's hint
    state        TEXT NOT NULL,         -- JSON: what the last successful sync reached (commit, ...)
    last_attempt TEXT,
    last_success TEXT,
    last_error   TEXT,                  -- NULL when the last run succeeded
    summary      TEXT NOT NULL          -- JSON counts of the last run
);
CREATE TABLE sync_files (
    name        TEXT NOT NULL,
    path        TEXT NOT NULL,          -- relative to the source's root (POSIX)
    fingerprint TEXT NOT NULL,          -- the file as last ingested: unchanged means not read again
    state       TEXT NOT NULL,          -- JSON: a page's URL and validators
    PRIMARY KEY (name, path)
);
"""


@dataclass(frozen=True, slots=True)
class SyncSourceRow:
    """One ``sync_sources`` row, JSON decoded."""

    name: str
    kind: str
    location: str
    root: str
    schedule: str | None = None
    state: Mapping[str, Any] = field(default_factory=dict)
    last_attempt: str | None = None
    last_success: str | None = None
    last_error: str | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)


_COLUMNS: Final = (
    "name, kind, location, root, schedule, state, last_attempt, last_success, last_error, summary"
)


def _row(values: Sequence[Any]) -> SyncSourceRow:
    name, kind, location, root, schedule, state, attempt, success, error, summary = values
    return SyncSourceRow(
        str(name), str(kind), str(location), str(root), schedule, json.loads(state), attempt, success, error,
        json.loads(summary),
    )  # fmt: skip


def read_sync_source(connection: Any, name: str) -> SyncSourceRow | None:
    """The row of source ``name``, or ``None`` before its first sync."""
    row = connection.execute(f"SELECT {_COLUMNS} FROM sync_sources WHERE name = ?", (name,)).fetchone()
    return None if row is None else _row(row)


def read_sync_sources(connection: Any) -> list[SyncSourceRow]:
    """Every source synced at least once, by name."""
    return [
        _row(r) for r in connection.execute(f"SELECT {_COLUMNS} FROM sync_sources ORDER BY name").fetchall()
    ]


def record_sync_run(
    connection: Any, row: SyncSourceRow, *, succeeded: bool, at: datetime | None = None
) -> None:
    """Record a run of ``row.name``: its attempt time, and on success its state and success time.

    A failed run keeps everything the last good one recorded (its state, so the next run starts
    from what was really ingested; its root, counts and success time) and records its error.
    """
    stamp = (at or datetime.now(UTC)).isoformat(timespec="seconds")
    state = json.dumps(dict(row.state), sort_keys=True)
    summary = json.dumps(dict(row.summary), sort_keys=True)
    updated = (
        "kind = excluded.kind, location = excluded.location, root = excluded.root, "
        "schedule = excluded.schedule, state = excluded.state, last_success = excluded.last_success, "
        "summary = excluded.summary, "
        if succeeded else ""
    )  # fmt: skip
    connection.execute(
        f"INSERT INTO sync_sources ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        f"ON CONFLICT (name) DO UPDATE SET {updated}last_attempt = excluded.last_attempt, "
        "last_error = excluded.last_error",
        (
            row.name, row.kind, row.location, row.root, row.schedule, state, stamp,
            stamp if succeeded else None, None if succeeded else (row.last_error or "failed"), summary,
        ),
    )  # fmt: skip


def read_sync_files(connection: Any, name: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """``path → (fingerprint, state)`` of every file of source ``name`` as last ingested."""
    rows = connection.execute(
        "SELECT path, fingerprint, state FROM sync_files WHERE name = ? ORDER BY path", (name,)
    ).fetchall()
    return {str(p): (str(f), json.loads(s)) for p, f, s in rows}


def write_sync_files(
    connection: Any,
    name: str,
    files: Sequence[tuple[str, str, Mapping[str, Any]]],
    removed: Sequence[str] = (),
) -> None:
    """Remember ``(path, fingerprint, state)`` of each file ingested now; forget ``removed`` paths."""
    if removed:
        connection.executemany(
            "DELETE FROM sync_files WHERE name = ? AND path = ?", [(name, path) for path in removed]
        )
    if files:
        connection.executemany(
            "INSERT INTO sync_files (name, path, fingerprint, state) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (name, path) DO UPDATE SET fingerprint = excluded.fingerprint, "
            "state = excluded.state",
            [
                (name, path, fingerprint, json.dumps(dict(state), sort_keys=True))
                for path, fingerprint, state in files
            ],
        )


def forget_sync_source(connection: Any, name: str) -> None:
    """Drop what is remembered about source ``name`` (its files' fingerprints and its runs)."""
    connection.execute("DELETE FROM sync_files WHERE name = ?", (name,))
    connection.execute("DELETE FROM sync_sources WHERE name = ?", (name,))


def documents_per_state(connection: Any, root: str) -> dict[str, int]:
    """Sources ingested from the folder ``root`` per status of their revisions (a source with an
    active revision and a retired one counts once in each)."""
    rows = connection.execute(
        "SELECT d.status, COUNT(DISTINCT d.tenant || '/' || d.source_id) FROM source_files s "
        "JOIN documents d ON d.tenant = s.tenant AND d.source_id = s.source_id "
        "WHERE s.root = ? GROUP BY d.status ORDER BY d.status",
        (root,),
    ).fetchall()
    return {str(status): int(n) for status, n in rows}
