"""The ``source_files`` table: where each source was ingested from.

One row per ``(tenant, source_id)``: the folder it was found in (``root``, empty
for a file given by itself) and its path (relative to ``root`` when there is one,
absolute otherwise). ``prune`` finds a folder's sources here; answers name the
file a citation came from. The SQL is portable (SQLite and PostgreSQL alike).

A row also keeps what the file was when it was last ingested
(:mod:`veracity.ingest.fingerprints`): the fingerprint of its bytes and the ingest's
options, the document it came to and its parse diagnostics (JSON; no text). Deleting
a document blanks them (:func:`forget_fingerprints`), as the ledger blanks its ids.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from .rows import now_text

__all__ = [
    "SOURCE_FINGERPRINTS",
    "RecordedFile",
    "forget_fingerprints",
    "forget_source",
    "record_source_path",
    "record_source_paths",
    "recorded_files",
    "source_file",
    "source_path",
    "source_paths",
    "sources_under",
]

SOURCE_FINGERPRINTS: Final = """
ALTER TABLE source_files ADD COLUMN fingerprint TEXT;   -- sha256 of the bytes and the ingest's options
ALTER TABLE source_files ADD COLUMN document_id TEXT;   -- the document the file came to then
ALTER TABLE source_files ADD COLUMN diagnostics TEXT;   -- JSON: what parsing it found then
"""


@dataclass(frozen=True, slots=True)
class RecordedFile:
    """What a file was when last ingested: its fingerprint, its document, its parse diagnostics."""

    fingerprint: str
    document_id: str
    diagnostics: dict[str, Any]


_RECORD_SQL: Final = (
    "INSERT INTO source_files (tenant, source_id, root, path, updated_at, fingerprint, document_id, "
    "diagnostics) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, source_id) DO UPDATE SET "
    "root = excluded.root, path = excluded.path, updated_at = excluded.updated_at, "
    "fingerprint = excluded.fingerprint, document_id = excluded.document_id, "
    "diagnostics = excluded.diagnostics"
)


def record_source_path(connection: Any, tenant: str, source_id: str, root: str, path: str) -> None:
    """Remember that ``source_id`` was ingested from ``path`` under ``root`` (call inside a transaction)."""
    record_source_paths(connection, [(tenant, source_id, root, path)])


def record_source_paths(
    connection: Any,
    sources: Sequence[tuple[str, str, str, str]],
    files: Sequence[RecordedFile | None] | None = None,
) -> None:
    """:func:`record_source_path` of each ``(tenant, source_id, root, path)``, in order (one
    ``executemany``: pipelined on PostgreSQL), with what each file was (``files``, in the same
    order; ``None`` forgets it)."""
    now = now_text()
    rows = [
        (*source, now, *(_recorded_columns(found) if found else (None, None, None)))
        for source, found in zip(sources, files or [None] * len(sources), strict=True)
    ]
    if len(rows) == 1:
        connection.execute(_RECORD_SQL, rows[0])
    elif rows:
        connection.executemany(_RECORD_SQL, rows)


def _recorded_columns(found: RecordedFile) -> tuple[str, str, str]:
    return found.fingerprint, found.document_id, json.dumps(found.diagnostics, sort_keys=True)


def forget_source(connection: Any, tenant: str, source_id: str) -> None:
    """Drop what is remembered about where ``source_id`` came from."""
    connection.execute("DELETE FROM source_files WHERE tenant = ? AND source_id = ?", (tenant, source_id))


def sources_under(connection: Any, root: str) -> list[tuple[str, str, str]]:
    """``(tenant, source_id, path)`` of every source ingested from the folder ``root``, by path."""
    rows = connection.execute(
        "SELECT tenant, source_id, path FROM source_files WHERE root = ? ORDER BY path, tenant, source_id",
        (root,),
    ).fetchall()
    return [(str(t), str(s), str(p)) for t, s, p in rows]


def source_paths(connection: Any, tenant: str | None = None) -> dict[tuple[str, str], str]:
    """``(tenant, source_id)`` → the path it was ingested from (relative to its folder when it had one)."""
    sql = "SELECT tenant, source_id, path FROM source_files"
    rows = connection.execute(sql + (" WHERE tenant = ?" if tenant else ""), (tenant,) if tenant else ())
    return {(str(t), str(s)): str(p) for t, s, p in rows}


def _recorded_place(connection: Any, tenant: str, source_id: str) -> tuple[str, str] | None:
    """``(root, path)`` of the file ``source_id`` of ``tenant`` was last ingested from, or ``None``."""
    row = connection.execute(
        "SELECT root, path FROM source_files WHERE tenant = ? AND source_id = ?", (tenant, source_id)
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def source_file(connection: Any, tenant: str, source_id: str) -> str | None:
    """The absolute path of the file ``source_id`` of ``tenant`` was ingested from, or ``None``."""
    if (place := _recorded_place(connection, tenant, source_id)) is None:
        return None
    root, path = place
    return f"{root.rstrip('/')}/{path}" if root else path


def source_root(connection: Any, tenant: str, source_id: str) -> str | None:
    """The folder ``source_id`` of ``tenant`` was last ingested from (``""``: a file given by
    itself), or ``None`` when it is not known."""
    place = _recorded_place(connection, tenant, source_id)
    return None if place is None else place[0]


def source_path(connection: Any, tenant: str, source_id: str) -> str | None:
    """The path ``source_id`` of ``tenant`` was ingested from, or ``None`` when it is not known."""
    place = _recorded_place(connection, tenant, source_id)
    return None if place is None else place[1]


def recorded_files(connection: Any, roots: Sequence[str]) -> dict[tuple[str, str], RecordedFile]:
    """``(root, path)`` → what the file there was when last ingested, for the files under ``roots``
    (``""``: files given by themselves). A path two sources were ingested from (its front matter
    changed the id) keeps the newer one."""
    rows = connection.execute(
        "SELECT root, path, fingerprint, document_id, diagnostics FROM source_files "
        "WHERE fingerprint IS NOT NULL ORDER BY updated_at, tenant, source_id"
    ).fetchall()
    wanted = set(roots)
    return {
        (str(root), str(path)): RecordedFile(str(fingerprint), str(document_id), json.loads(str(diagnostics)))
        for root, path, fingerprint, document_id, diagnostics in rows
        if root in wanted
    }


def forget_fingerprints(connection: Any, document_ids: Sequence[str]) -> None:
    """Blank what is remembered of the files that came to ``document_ids`` (they are deleted)."""
    if document_ids:
        connection.executemany(
            "UPDATE source_files SET fingerprint = NULL, document_id = NULL, diagnostics = NULL "
            "WHERE document_id = ?",
            [(document_id,) for document_id in document_ids],
        )
