"""``veracity sync``: bring every source of a sources file up to date, reading only what changed.

Per source (:mod:`veracity.sync.materialize` gives its files and their fingerprints):

1. each file's fingerprint is combined with its sidecar's and the source's governance, and
   compared with the one remembered from the last sync (:mod:`veracity.catalog.syncs`);
2. the files whose fingerprint changed are ingested (:func:`veracity.ingest.run.ingest_paths`
   with a :class:`~veracity.ingest.run.Selection`): new and changed files become documents or
   revisions; unchanged files are neither parsed nor embedded;
3. documents whose files left the source are withdrawn (or, with ``on_remove: delete``,
   deleted) through the ingest's prune; a withdrawn file that comes back is served again;
4. the new fingerprints and the run (its time, counts, commit, or its error) are recorded.

A source that cannot be read (a failed clone, an unreachable site, a missing folder) changes
nothing: no document of it is withdrawn, and its error is recorded for ``veracity status``.
A file the ingest rejects keeps no fingerprint, so the next sync reads it again.
"""

from __future__ import annotations

import fcntl
import fnmatch
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..catalog.syncs import (
    SyncSourceRow,
    read_sync_files,
    read_sync_sources,
    record_sync_run,
    write_sync_files,
)
from ..ingest.run import IngestReport, Selection, ingest_paths
from ..model.contracts import sha256_hex
from ..model.errors import ValidationError
from ..parse.metadata import MetadataMap
from ..pipeline.engine import Engine
from .config import SourceSpec
from .materialize import Materialized, SourceError, materialize

__all__ = ["SourceOutcome", "selected", "sync_sources"]

Progress = Callable[[str, str, int, int], None]
"""``progress(source, stage, done, total)``: stage ``fetch`` (pages), ``parse`` or ``index``."""


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What one sync did to one source (or why it did nothing: ``error``)."""

    name: str
    kind: str
    error: str | None = None
    files: int = 0
    read: int = 0
    unchanged: int = 0
    added: tuple[str, ...] = ()
    revised: tuple[str, ...] = ()
    withdrawn: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    rejected: tuple[tuple[str, str], ...] = ()
    restored: tuple[str, ...] = ()
    """Documents served again: their files came back unchanged after a sync withdrew them."""
    chunks_embedded: int = 0
    notes: tuple[tuple[str, str], ...] = ()
    undefined_roles: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Documents whose ``allowed_roles`` the tenant does not define (nobody can use them; the
    source's ``roles:`` defines them)."""
    kept_withdrawn: tuple[str, ...] = ()
    """Documents a command withdrew whose changed file was stored withdrawn too (see ``ingest``)."""
    state: Mapping[str, Any] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def changes(self) -> int:
        """Documents added, revised, withdrawn, deleted or restored."""
        moved = (self.added, self.revised, self.withdrawn, self.deleted, self.restored)
        return sum(map(len, moved))


def _matches(path: str, pattern: str) -> bool:
    # '**/x' also matches 'x' at the top, as people who write it expect
    return fnmatch.fnmatchcase(path, pattern) or (pattern.startswith("**/") and _matches(path, pattern[3:]))


def selected(spec: SourceSpec, path: str) -> bool:
    """Whether ``path`` is part of ``spec``: it matches an include glob (if any) and no exclude glob."""
    included = not spec.include or any(_matches(path, p) for p in spec.include)
    return included and not any(_matches(path, p) for p in spec.exclude)


def _sidecars(path: str) -> tuple[str, ...]:
    pure = PurePosixPath(path)
    return (f"{path}.meta.yaml", (pure.parent / f"{pure.stem}.meta.yaml").as_posix())


def _fingerprints(spec: SourceSpec, found: Materialized) -> dict[str, str]:
    """Each selected file's fingerprint: its own, its sidecar's, the source's governance."""
    prints = found.fingerprints
    governance = spec.governance_digest
    return {
        path: sha256_hex("\n".join([fingerprint, governance, *(prints.get(s, "") for s in _sidecars(path))]))
        for path, fingerprint in prints.items()
        if selected(spec, path) and not path.endswith(".meta.yaml")
    }


def _metadata(spec: SourceSpec, found: Materialized, read: set[str]) -> MetadataMap:
    entries: list[tuple[str, Mapping[str, Any]]] = []
    if spec.governance:
        entries.append(("*", dict(spec.governance)))
    entries.extend((path, found.metadata[path]) for path in sorted(read) if path in found.metadata)
    return MetadataMap(tuple(entries), source=f"sources file: {spec.name}")


def _sync_one(
    kb: Engine, spec: SourceSpec, work: Path, progress: Progress | None, fetch: Any
) -> SourceOutcome:
    start = time.perf_counter()
    connection = kb.catalog.store.connection  # type: ignore[attr-defined]
    previous = read_sync_files(connection, spec.name)
    row = SyncSourceRow(spec.name, spec.kind, spec.location, "", spec.schedule)
    fetching = (lambda done, total: progress(spec.name, "fetch", done, total)) if progress else None
    try:
        found = materialize(spec, work, previous, fetch=fetch, progress=fetching)
    except (SourceError, OSError) as exc:
        with kb.catalog.store.transaction():
            record_sync_run(
                connection, SyncSourceRow(**{**_fields(row), "last_error": str(exc)}), succeeded=False
            )
        return SourceOutcome(spec.name, spec.kind, error=str(exc), seconds=time.perf_counter() - start)
    prints = _fingerprints(spec, found)
    changed = {path for path, fingerprint in prints.items() if previous.get(path, ("",))[0] != fingerprint}
    report = ingest_paths(
        kb, [found.root], tenant=spec.tenant, roles=spec.roles, metadata=_metadata(spec, found, changed),
        selection=Selection(frozenset(prints), frozenset(changed), _other_roots(connection, spec.name)),
        prune=True,
        delete_pruned=spec.on_remove == "delete",
        progress=(lambda stage, done, total: progress(spec.name, stage, done, total)) if progress else None,
    )  # fmt: skip
    scanned = {f.source for f in report.scan.files}
    rejected = {path for path, _ in report.rejected}
    kept = sorted((changed & scanned) - rejected)
    removed = sorted(set(previous) - set(prints))
    outcome = _outcome(spec, found, report, prints, changed, scanned, time.perf_counter() - start)
    summary = {
        "files": outcome.files, "read": outcome.read, "unchanged": outcome.unchanged,
        "added": len(outcome.added), "revised": len(outcome.revised),
        "withdrawn": len(outcome.withdrawn), "deleted": len(outcome.deleted),
        "rejected": len(outcome.rejected), "notes": len(outcome.notes),
        "chunks_embedded": outcome.chunks_embedded,
    }  # fmt: skip
    done = SyncSourceRow(spec.name, spec.kind, spec.location, str(found.root.resolve()), spec.schedule,
                         dict(found.state), summary=summary)  # fmt: skip
    with kb.catalog.store.transaction():
        remembered = [(p, prints[p], {**found.states.get(p, {}), "content": found.fingerprints[p]})
                      for p in kept]  # fmt: skip
        write_sync_files(connection, spec.name, remembered, removed)
        record_sync_run(connection, done, succeeded=True)
    return outcome


def _other_roots(connection: Any, name: str) -> tuple[tuple[str, str], ...]:
    """``(root, name)`` of every other source synced into this knowledge base before."""
    rows = read_sync_sources(connection)
    return tuple((row.root, row.name) for row in rows if row.root and row.name != name)


def _fields(row: SyncSourceRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__slots__}


def _outcome(
    spec: SourceSpec, found: Materialized, report: IngestReport, prints: Mapping[str, str], changed: set[str],
    scanned: set[str], seconds: float,
) -> SourceOutcome:  # fmt: skip
    return SourceOutcome(
        name=spec.name, kind=spec.kind, files=len(prints), read=len(changed & scanned),
        unchanged=len(scanned - changed), added=report.added, revised=report.revised,
        withdrawn=report.pruned.withdrawn, deleted=report.pruned.deleted, rejected=report.rejected,
        restored=report.restored, chunks_embedded=report.index.embedded_chunks,
        undefined_roles=report.undefined_roles, kept_withdrawn=report.kept_withdrawn, notes=found.notes,
        state=dict(found.state), counts=dict(found.counts), seconds=seconds,
    )  # fmt: skip


@contextmanager
def _held(work: Path) -> Iterator[None]:
    """One sync at a time per sync folder (a second waits): the files written there are shared."""
    work.mkdir(parents=True, exist_ok=True)
    with (work / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def sync_sources(
    kb: Engine,
    specs: Sequence[SourceSpec],
    *,
    work: Path,
    only: Sequence[str] = (),
    progress: Progress | None = None,
    fetch: Any = None,
) -> tuple[SourceOutcome, ...]:
    """Sync each of ``specs`` (or those named in ``only``) into ``kb``, in the file's order.

    ``work`` is the sync folder: git mirrors and fetched pages live there between syncs.
    ``fetch`` replaces the website fetcher (tests). One failing source does not stop the others.
    """
    names = {spec.name for spec in specs}
    if unknown := sorted(set(only) - names):
        raise ValidationError(f"no source named {', '.join(unknown)} in the sources file", field="source")
    chosen = [spec for spec in specs if not only or spec.name in only]
    with _held(work):
        return tuple(_sync_one(kb, spec, work, progress, fetch) for spec in chosen)
