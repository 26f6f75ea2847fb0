"""The ingestion ledger: every file's way through the states, and the quarantine.

States: discovered → parsed → chunked → embedded → indexed → active, or
``unchanged`` (same source and content: no work), ``skipped`` (on purpose,
with the reason: deleted earlier, a page template, no text), or ``failed``
with a reason. Later lifecycle changes append ``withdrawn``, ``retired`` or
``deleted``, so a file's latest state is its real one; deleting a document
also blanks its ids in earlier rows (its name leaves the file with its text).
A ``parsed`` step (and the ``failed`` step of a file that parsed to no text)
carries the file's parse diagnostics as a JSON object
(:class:`~veracity.ingest.diagnostics.ParseDiagnostics`): pages, OCR,
tables, header and footer lines removed, illegal characters, time, bytes.
A failed file also gets a quarantine row (replaced when it fails again,
removed when it later succeeds), so nothing rejected is silently forgotten.
Rows are written inside the caller's transactions; they are ids and reasons,
never document text.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import apsw

STATES: Final = (
    "discovered", "parsed", "chunked", "embedded", "indexed", "active", "unchanged", "failed",
    "skipped", "withdrawn", "retired", "deleted",
)  # fmt: skip


def _json(diagnostics: Mapping[str, Any] | None) -> str | None:
    return None if diagnostics is None else json.dumps(dict(diagnostics), sort_keys=True, ensure_ascii=False)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Ledger:
    """Writes and reads the ingestion ledger of one ``catalog.sqlite``."""

    def __init__(self, connection: apsw.Connection, run_id: str | None = None) -> None:
        """Record steps for one ingest run (a fresh id unless given)."""
        self._conn = connection
        self.run_id = run_id or uuid.uuid4().hex

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
        self._conn.execute(
            "INSERT INTO ingestion_steps (run_id, source, source_id, document_id, state, reason, at, "
            "diagnostics) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (self.run_id, source, source_id, document_id, state, reason, _now(), _json(diagnostics)),
        )
        if state == "failed":
            self._conn.execute(
                "INSERT INTO quarantine (source, reason, run_id, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (source) DO UPDATE SET reason = excluded.reason, run_id = excluded.run_id, "
                "at = excluded.at",
                (source, reason or "failed", self.run_id, _now()),
            )
        elif state in ("active", "unchanged", "skipped"):
            self._conn.execute("DELETE FROM quarantine WHERE source = ?", (source,))

    def steps(self, states: Iterable[str], sources: Iterable[tuple[str, str, str]]) -> None:
        """Record several states for several ``(source, source_id, document_id)`` at once.

        One statement per kind of row for the whole set (an ingest of 15,000 files
        would otherwise pay 60,000 round trips to a database server here).
        """
        states, sources = tuple(states), tuple(sources)
        unknown = [state for state in states if state not in STATES]
        if unknown:
            raise ValueError(f"unknown ingestion state {unknown[0]!r}; valid: {', '.join(STATES)}")
        if "failed" in states:  # quarantine rows carry the reason: one at a time, as step() writes them
            for source, source_id, document_id in sources:
                for state in states:
                    self.step(source, state, source_id=source_id, document_id=document_id)
            return
        at = _now()
        self._conn.executemany(
            "INSERT INTO ingestion_steps (run_id, source, source_id, document_id, state, reason, at, "
            "diagnostics) VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)",
            [
                (self.run_id, source, source_id, document_id, state, at)
                for source, source_id, document_id in sources
                for state in states
            ],
        )
        if any(state in ("active", "unchanged", "skipped") for state in states):
            self._conn.executemany(
                "DELETE FROM quarantine WHERE source = ?", [(source,) for source, _, _ in sources]
            )


def source_of(connection: apsw.Connection, document_id: str) -> str | None:
    """The file a document was last ingested from (its ledger name), if the ledger knows it."""
    row = connection.execute(
        "SELECT source FROM ingestion_steps WHERE document_id = ? ORDER BY seq DESC LIMIT 1", (document_id,)
    ).fetchone()
    return None if row is None else str(row[0])


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


def quarantined(connection: apsw.Connection) -> list[tuple[str, str]]:
    """``(source, reason)`` of every file currently in quarantine."""
    return [(s, r) for s, r in connection.execute("SELECT source, reason FROM quarantine ORDER BY source")]
