"""The ingestion ledger: every file's way through the states, and the quarantine.

States: discovered → parsed → chunked → embedded → indexed → active, or
``unchanged`` (same source and content: no work), ``skipped`` (on purpose,
with the reason: deleted earlier, a page template, no text), or ``failed``
with a reason. Later lifecycle changes append ``withdrawn``, ``retired`` or
``deleted``, so a file's latest state is its real one; deleting a document
also blanks its ids in earlier rows (its name leaves the file with its text).
A ``parsed`` step (and the ``failed`` step of a file that parsed to no text)
carries the file's parse diagnostics as a JSON object
(:class:`~veracity.parse.diagnostics.ParseDiagnostics`): pages, OCR,
tables, header and footer lines removed, illegal characters, time, bytes.
A failed file also gets a quarantine row (replaced when it fails again,
removed when it later succeeds), so nothing rejected is silently forgotten.
Rows are written inside the caller's transactions; they are ids and reasons,
never document text.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from itertools import groupby
from typing import Any, Final

import apsw

from .rows import insert_rows, now_text
from .sql import in_values

STATES: Final = (
    "discovered", "parsed", "chunked", "embedded", "indexed", "active", "unchanged", "failed",
    "skipped", "withdrawn", "retired", "deleted",
)  # fmt: skip


def _json(diagnostics: Mapping[str, Any] | None) -> str | None:
    return None if diagnostics is None else json.dumps(dict(diagnostics), sort_keys=True, ensure_ascii=False)


_STEP_COLUMNS: Final = (
    "run_id", "source", "source_id", "document_id", "state", "reason", "at", "diagnostics",
)  # fmt: skip
_STEP_SQL: Final = f"INSERT INTO ingestion_steps ({', '.join(_STEP_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_QUARANTINE_SQL: Final = (
    "INSERT INTO quarantine (source, reason, run_id, at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (source) DO UPDATE SET reason = excluded.reason, run_id = excluded.run_id, at = excluded.at"
)
_RELEASE_SQL: Final = "DELETE FROM quarantine WHERE source = ?"


class Ledger:
    """Writes and reads the ingestion ledger of one catalog.

    Inside :meth:`held` the rows are kept in memory and written when the block ends, in one
    statement per kind of row (the steps by :func:`~veracity.catalog.rows.insert_rows`, a
    ``COPY`` on PostgreSQL; quarantine releases one ``DELETE`` per run of them): an ingest
    writes three or four steps per file, and on a database server each statement is a round trip.
    """

    def __init__(self, connection: apsw.Connection, run_id: str | None = None) -> None:
        """Record steps for one ingest run (a fresh id unless given)."""
        self._conn = connection
        self.run_id = run_id or uuid.uuid4().hex
        self._held: list[tuple[str, tuple[Any, ...]]] | None = None

    def step(
        self,
        source: str,
        state: str,
        *,
        source_id: str | None = None,
        document_id: str | None = None,
        reason: str | None = None,
        diagnostics: Mapping[str, Any] | None = None,
    ) -> None:
        """Record that ``source`` reached ``state``, with parse ``diagnostics``; ``failed`` quarantines it."""
        if state not in STATES:
            raise ValueError(f"unknown ingestion state {state!r}; valid: {', '.join(STATES)}")
        at = now_text()
        self._write(
            _STEP_SQL, (self.run_id, source, source_id, document_id, state, reason, at, _json(diagnostics))
        )
        if state == "failed":
            self._write(_QUARANTINE_SQL, (source, reason or "failed", self.run_id, at))
        elif state in ("active", "unchanged", "skipped"):
            self._write(_RELEASE_SQL, (source,))

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the rows recorded in the block and write them when it ends without an error
        (nested blocks write with the outermost; an error discards them: the caller's
        transaction is rolled back anyway)."""
        if self._held is not None:
            yield
            return
        self._held = []
        try:
            yield
            held, self._held = self._held, None
            # Steps and quarantine rows are in different tables: the steps go first, in their
            # order (it numbers them); the quarantine rows then, in theirs (an upsert and a
            # delete of one file must not swap).
            steps = [params for sql, params in held if sql == _STEP_SQL]
            insert_rows(self._conn, "ingestion_steps", _STEP_COLUMNS, steps)
            quarantine = [row for row in held if row[0] != _STEP_SQL]
            for sql, rows in groupby(quarantine, key=lambda row: row[0]):
                params = [p for _, p in rows]
                if sql == _RELEASE_SQL and len(params) > 1:  # one statement for the run of them
                    where, bound = in_values(self._conn, "source", sorted({p[0] for p in params}))
                    self._conn.execute(f"DELETE FROM quarantine WHERE {where}", (bound,))
                else:
                    self._conn.executemany(sql, params)
        finally:
            self._held = None

    def mark(self) -> int:
        """A point to :meth:`discard` back to (the rows held so far)."""
        return len(self._held) if self._held is not None else 0

    def discard(self, mark: int) -> None:
        """Forget the rows held since ``mark`` (their savepoint was rolled back)."""
        if self._held is not None:
            del self._held[mark:]

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        if self._held is not None:
            self._held.append((sql, params))
        else:
            self._conn.execute(sql, params)


def source_of(connection: apsw.Connection, document_id: str) -> str | None:
    """The file a document was last ingested from (its ledger name), if the ledger knows it."""
    row = connection.execute(
        "SELECT source FROM ingestion_steps WHERE document_id = ? ORDER BY seq DESC LIMIT 1", (document_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def withdrawal_reason(connection: apsw.Connection, document_id: str) -> str | None:
    """The reason recorded with the latest ``withdrawn`` step of ``document_id`` (``None``: none)."""
    row = connection.execute(
        "SELECT reason FROM ingestion_steps WHERE document_id = ? AND state = 'withdrawn' "
        "ORDER BY seq DESC LIMIT 1",
        (document_id,),
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def latest_step(connection: apsw.Connection, document_id: str) -> tuple[str, str | None] | None:
    """``(state, reason)`` of the last step recorded for ``document_id``, if any."""
    row = connection.execute(
        "SELECT state, reason FROM ingestion_steps WHERE document_id = ? ORDER BY seq DESC LIMIT 1",
        (document_id,),
    ).fetchone()
    return None if row is None else (str(row[0]), None if row[1] is None else str(row[1]))


def forget_document(connection: apsw.Connection, document_id: str) -> None:
    """Blank a deleted document's ids in every ledger row (states and file names stay)."""
    connection.execute(
        "UPDATE ingestion_steps SET source_id = NULL, document_id = NULL WHERE document_id = ?",
        (document_id,),
    )


def latest_states(connection: apsw.Connection) -> dict[str, int]:
    """How many sources are in each state, by their latest recorded step."""
    rows = connection.execute(
        "SELECT state, COUNT(*) FROM ingestion_steps AS s "
        "WHERE seq = (SELECT MAX(seq) FROM ingestion_steps WHERE source = s.source) GROUP BY state"
    ).fetchall()
    return {str(state): int(str(count)) for state, count in sorted(rows)}


def history(connection: apsw.Connection, source: str) -> list[dict[str, Any]]:
    """Every step recorded for ``source``, oldest first."""
    rows = connection.execute(
        "SELECT run_id, state, source_id, document_id, reason, at, diagnostics FROM ingestion_steps "
        "WHERE source = ? ORDER BY seq",
        (source,),
    ).fetchall()
    keys = ("run_id", "state", "source_id", "document_id", "reason", "at", "diagnostics")
    steps = [dict(zip(keys, row, strict=True)) for row in rows]
    for step in steps:
        step["diagnostics"] = json.loads(str(step["diagnostics"])) if step["diagnostics"] else None
    return steps


def parse_diagnostics(connection: apsw.Connection) -> dict[str, dict[str, Any]]:
    """Each source's latest parse diagnostics (from its last step that recorded them), by source."""
    rows = connection.execute(
        "SELECT source, diagnostics FROM ingestion_steps AS s WHERE seq = (SELECT MAX(seq) FROM "
        "ingestion_steps WHERE source = s.source AND diagnostics IS NOT NULL) ORDER BY source"
    ).fetchall()
    return {str(source): json.loads(str(text)) for source, text in rows}


def parsed_file_digest(connection: apsw.Connection, document_id: str) -> str | None:
    """The sha256 of the bytes ``document_id`` was last parsed from (recorded for paged sources:
    :attr:`~veracity.parse.diagnostics.ParseDiagnostics.sha256`), or ``None``."""
    row = connection.execute(
        "SELECT diagnostics FROM ingestion_steps WHERE document_id = ? AND diagnostics IS NOT NULL "
        "ORDER BY seq DESC LIMIT 1",
        (document_id,),
    ).fetchone()
    found = json.loads(str(row[0])).get("sha256") if row is not None else None
    return str(found) if found else None


def quarantined(connection: apsw.Connection) -> list[tuple[str, str]]:
    """``(source, reason)`` of every file currently in quarantine."""
    return [(s, r) for s, r in connection.execute("SELECT source, reason FROM quarantine ORDER BY source")]
