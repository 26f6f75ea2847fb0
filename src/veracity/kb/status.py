"""``veracity status``: what a knowledge base holds, read without loading a model or the engine.

The writer at work, if any (pid, command, since when); documents per tenant
and status, deleted sources remembered, the latest
ingestion state per file, quarantined files, the published index version
(counts, generation, last publish and verification), every kept version and
the manifest's summary; each source ``veracity sync`` keeps in step (its last sync, its last
error, its documents per state). Everything comes from one read snapshot of
``catalog.sqlite`` (it never waits for a writer) and from ``manifest.json``,
so the command starts in a fraction of a second. ``check`` runs SQLite's
integrity check first (:func:`check_file`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..catalog.ledger import latest_states, parse_diagnostics, quarantined
from ..catalog.state import status_counts
from ..catalog.store import DatabaseStore
from ..catalog.syncs import documents_per_state, read_sync_sources
from ..catalog.tombstones import count_tombstones
from ..index.sqlite.tables import IndexTables, indexed_counts
from ..index.sqlite.versions import list_versions, read_pointer
from ..model.errors import CorruptStorageError
from .backends import open_store
from .manifest import read_manifest

__all__ = ["check_file", "folder_status", "status_of_store"]


def check_file(store: DatabaseStore) -> None:
    """``CorruptStorageError`` naming the problems when SQLite's integrity check fails on the file."""
    problems = store.check_integrity()
    if problems:
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise CorruptStorageError(
            f"{store.path!r} failed its integrity check ({shown}); restore it from a backup, or "
            "ingest the documents into a new knowledge base",
            path=store.path,
        )


def folder_status(folder: str | os.PathLike[str], *, check: bool = False) -> dict[str, Any]:
    """The status report of the knowledge base in ``folder`` (see the module docstring)."""
    manifest = read_manifest(folder)  # a clear error when the folder is not a knowledge base
    store = open_store(folder)
    try:
        if check:
            check_file(store)  # raises on damage; a report says it passed, so a clean run is visible
        report = status_of_store(store, manifest)
        if check:
            report["integrity_check"] = "ok"
        return report
    finally:
        store.close()


def _writer(store: DatabaseStore) -> str | None:
    holder = store.current_writer()
    return holder.describe() if holder is not None else None


_SUMMED = (
    "bytes", "characters", "pages_total", "pages_parsed", "empty_pages", "ocr_pages", "ocr_characters",
    "pages_needing_ocr", "tables", "header_footer_lines_removed", "illegal_characters",
)  # fmt: skip


def parse_totals(files: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Parse diagnostics summed over files; ``ocr_confidence`` is the mean over OCR'd characters
    (``None`` when nothing was OCR'd)."""
    rows = list(files)
    totals: dict[str, Any] = {"files": len(rows)}
    for key in _SUMMED:
        totals[key] = sum(int(row.get(key) or 0) for row in rows)
    weighted = [(row["ocr_confidence"], row.get("ocr_characters") or 0) for row in rows
                if row.get("ocr_confidence") is not None]  # fmt: skip
    characters = sum(n for _, n in weighted)
    totals["ocr_confidence"] = round(sum(c * n for c, n in weighted) / characters, 4) if characters else None
    return totals


def status_of_store(store: DatabaseStore, manifest: dict[str, Any]) -> dict[str, Any]:
    """The status report from an open catalog store and its checked manifest."""
    connection = store.connection
    with store.read():
        counts = status_counts(connection)
        current, generation = read_pointer(connection)
        documents, chunks = indexed_counts(connection, IndexTables(current))
        versions = list_versions(connection)
        tombstones = count_tombstones(connection)
        ingestion = latest_states(connection)
        quarantine = [{"source": s, "reason": r} for s, r in quarantined(connection)]
        parsing = parse_diagnostics(connection)
        sources = [
            {
                "name": row.name, "kind": row.kind, "location": row.location, "schedule": row.schedule,
                "last_attempt": row.last_attempt, "last_success": row.last_success,
                "last_error": row.last_error,
                "state": dict(row.state), "last_run": dict(row.summary),
                "documents": documents_per_state(connection, row.root) if row.root else {},
            }
            for row in read_sync_sources(connection)
        ]  # fmt: skip
    published = next(v for v in versions if v.version == current)
    verification = (published.manifest or {}).get("verification") or {}
    return {
        "writer": _writer(store),
        "documents": {tenant: dict(sorted(c.items())) for tenant, c in sorted(counts.items())},
        "tombstones": tombstones,
        "ingestion": ingestion,
        "quarantine": quarantine,
        "sources": sources,
        "parsing": {"files": parsing, "totals": parse_totals(parsing.values())},
        "index": {
            "version": current,
            "documents": documents,
            "catalog_documents": sum(sum(c.values()) for c in counts.values()),
            "chunks": chunks,
            "generation": generation,
            "last_publish": published.published_at,
            "verified_at": published.verified_at,
            "verification_passed": verification.get("passed"),
        },
        "versions": [
            {
                "version": v.version,
                "state": v.state,
                "embedder": v.embedder,
                "created_at": v.created_at,
                "published_at": v.published_at,
                "reason": v.reason,
            }
            for v in versions
        ],
        "manifest": {
            "embedding": manifest.get("embedding"),
            "digest": manifest.get("digest"),
            "written_at_generation": manifest.get("index", {}).get("generation"),
        },
    }
