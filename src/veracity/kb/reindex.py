"""Index versions end to end: build → verify → publish, and rollback.

``rebuild`` builds a new version from the catalog (the truth) next to the
published one, in batches that readers never see; catches it up with catalog
changes made meanwhile; verifies it (:mod:`veracity.index.sqlite.verify`); and only
then, in one transaction that repeats the catalog comparison, moves the pointer
to it. Approximate-index artefacts (files beside the catalog) are built by the
new version's ``sync`` and checked by its verification; those of versions that
no longer have tables are removed after each rebuild.

A crash at any point leaves the published version untouched; the half-built
version is marked ``failed`` and its tables dropped by the next ``rebuild``
(its builder process is gone).

``publish`` and ``rollback`` switch to a version that exists already. Rolling
back goes to the *index build* used before (its embedder, its tables), not to
an older catalog: the catalog stays the truth, so the target is first caught up
with catalog changes (new documents embedded with its own model; removals and
status changes reached it already, as they reach every kept version) and
verified again.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Final

from ..catalog.store import DatabaseStore
from ..index.dense import Embedder
from ..index.embedders import make_embedder
from ..index.sqlite.artefacts import ann_folder, sweep_artefacts
from ..index.sqlite.sync import Progress, SyncReport
from ..index.sqlite.tables import IndexTables
from ..index.sqlite.verify import Verification, catalog_matches, verify_version
from ..index.sqlite.versions import (
    IndexVersion,
    begin_version,
    end_version,
    get_version,
    list_versions,
    live_versions,
    owner_is_gone,
    read_pointer,
    record_manifest,
    rollback_target,
    switch_to,
)
from ..index.sqlite.writer import DISTANCE, NORMALIZATION, read_vector_model
from ..index.versioned import VersionedIndex, index_for, is_versioned
from ..ingest.verdicts import judge_missing
from ..ingest.writing import writing
from ..model.errors import ConfigError, IndexVerificationError, SearchIndexError
from ..pipeline.engine import Engine
from .directory import (
    CHUNKER,
    catalog_state,
    embedder_name,
    parser_versions,
    tokenizer_version,
    write_manifest,
)

__all__ = [
    "KEEP_PREVIOUS",
    "VersionReport",
    "abandon_stale_builds",
    "publish",
    "rebuild",
    "rollback",
    "version_manifest",
]

KEEP_PREVIOUS: Final = 2
"""Earlier versions kept (tables and all) for ``rollback`` / ``publish``; older ones are dropped."""

_CATCH_UP_ROUNDS: Final = 5


@dataclass(frozen=True, slots=True)
class VersionReport:
    """What ``rebuild``, ``publish`` or ``rollback`` did."""

    action: str
    version: int
    published: bool
    replaced: int | None
    verification: Verification
    sync: SyncReport
    dropped: tuple[int, ...] = ()
    abandoned: tuple[int, ...] = ()
    seconds: float = 0.0


def _store(kb: Engine) -> DatabaseStore:
    store = kb.catalog.store
    if not isinstance(store, DatabaseStore) or not is_versioned(kb.snapshot):
        raise ConfigError(
            "index versions need an on-disk knowledge base (a directory or a postgresql:// URL)"
        )
    return store


def abandon_stale_builds(store: DatabaseStore) -> tuple[int, ...]:
    """Mark ``building`` versions whose builder process is gone as ``failed`` and drop their tables."""
    ended: list[int] = []
    with store.transaction():
        for version in list_versions(store.connection):
            if version.state == "building" and owner_is_gone(version.owner):
                reason = f"abandoned: its builder ({version.owner}) stopped before verifying it"
                end_version(store.connection, version.version, "failed", reason)
                ended.append(version.version)
    return tuple(ended)


def _prune(store: DatabaseStore, keep: int) -> tuple[int, ...]:
    connection = store.connection
    with store.transaction():
        current = read_pointer(connection)[0]
        earlier = [
            v for v in list_versions(connection)
            if v.version != current and v.state in ("verified", "retired", "rolled-back")
        ]  # fmt: skip
        earlier.sort(key=lambda v: (v.ended_at or v.verified_at or v.created_at, v.version), reverse=True)
        dropped = tuple(sorted(v.version for v in earlier[keep:]))
        for version in dropped:
            end_version(connection, version, "dropped", f"pruned: only {keep} earlier version(s) are kept")
    return dropped


def _sweep_artefacts(store: DatabaseStore) -> None:
    """Remove the approximate-index files of versions whose tables are gone (failed, dropped)."""
    sweep_artefacts(ann_folder(store), {tables.version for tables in live_versions(store.connection)})


def version_manifest(
    store: DatabaseStore,
    index: VersionedIndex,
    name: str | None,
    embedder: Embedder,
    verification: Verification,
) -> dict[str, Any]:
    """What a version records about itself: catalog state, counts, parsers, model, verification."""
    stats = index.stats()
    return {
        "catalog": catalog_state(store),
        "counts": {"documents": stats.documents, "chunks": stats.chunks, "tenants": stats.tenants,
                   "vectors": stats.vectors},
        "parsers": parser_versions(),
        "chunker": CHUNKER,
        "tokenizer": tokenizer_version(),
        "embedding": {"embedder": name, "model_id": embedder.model_id, "dim": embedder.dim,
                      "normalization": NORMALIZATION, "distance": DISTANCE},
        "verification": verification.as_dict(),
    }  # fmt: skip


def _add(a: SyncReport, b: SyncReport) -> SyncReport:
    return SyncReport(
        added_documents=a.added_documents + b.added_documents,
        updated_documents=a.updated_documents + b.updated_documents,
        removed_documents=a.removed_documents + b.removed_documents,
        indexed_chunks=a.indexed_chunks + b.indexed_chunks,
        embedded_chunks=a.embedded_chunks + b.embedded_chunks,
        tokenize_seconds=a.tokenize_seconds + b.tokenize_seconds,
        embed_seconds=a.embed_seconds + b.embed_seconds,
        write_seconds=a.write_seconds + b.write_seconds,
    )


def _catch_up_verify_switch(
    kb: Engine,
    tables: IndexTables,
    embedder: Embedder,
    *,
    publish: bool,
    rollback: bool,
    progress: Progress | None,
) -> tuple[Verification, SyncReport, int | None]:
    """Sync the version with the catalog, verify it, then record it (and switch) if nothing moved."""
    store = _store(kb)
    index = index_for(store, version=tables.version)
    total = SyncReport()
    for _ in range(_CATCH_UP_ROUNDS):
        total = _add(total, index.sync(kb.catalog, embedder, progress=progress))
        verification = verify_version(index, kb.catalog, embedder)
        if not verification.passed:
            raise IndexVerificationError(verification)
        name = get_version(store.connection, tables.version).embedder or embedder_name(embedder)
        manifest = version_manifest(store, index, name, embedder, verification)
        with store.transaction():
            if not catalog_matches(index, tables, kb.catalog):
                continue  # the catalog changed after the checks: catch up again
            record_manifest(store.connection, tables.version, manifest, verified=True)
            replaced = switch_to(store.connection, tables.version, rollback=rollback) if publish else None
        return verification, total, replaced
    raise SearchIndexError(
        f"the catalog kept changing during {_CATCH_UP_ROUNDS} catch-up rounds; index version "
        f"{tables.version} was not published; run the command again when ingestion is quieter"
    )


def rebuild(
    kb: Engine,
    folder: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    publish: bool = True,
    keep: int = KEEP_PREVIOUS,
    progress: Progress | None = None,
) -> VersionReport:
    """Build a new index version from the catalog, verify it, and publish it (unless ``publish=False``).

    ``embedder=None`` keeps the knowledge base's model; another one builds the
    new version with that model (queries then need it: reopen the knowledge base).
    Verification failure raises ``IndexVerificationError``; the version is
    marked ``failed`` and the published one stays.
    """
    if keep < 1:
        raise ConfigError(f"keep must be at least 1 (the rollback target), got {keep}")
    with writing(kb, "reindex"):
        return _rebuild(kb, folder, embedder=embedder, publish=publish, keep=keep, progress=progress)


def _rebuild(
    kb: Engine,
    folder: str | os.PathLike[str],
    *,
    embedder: Embedder | None,
    publish: bool,
    keep: int,
    progress: Progress | None,
) -> VersionReport:
    start = time.perf_counter()
    store = _store(kb)
    embedder = embedder or kb.embedder
    abandoned = abandon_stale_builds(store)
    catalog = kb.catalog  # verdicts a newer injection detector has not judged yet
    judge_missing(store, ((d, catalog.chunks(d.document_id)) for d in catalog.documents()))
    with store.transaction():
        tables = begin_version(store.connection, embedder=embedder_name(embedder))
    try:
        verification, sync, replaced = _catch_up_verify_switch(
            kb, tables, embedder, publish=publish, rollback=False, progress=progress
        )
    except BaseException as exc:  # Ctrl-C too: the version never became current; its tables go
        reason = (
            "; ".join(exc.verification.failures()) if isinstance(exc, IndexVerificationError) else repr(exc)
        )
        with store.transaction():
            end_version(store.connection, tables.version, "failed", reason[:2000])
        _sweep_artefacts(store)
        raise
    dropped = _prune(store, keep) if publish else ()
    _sweep_artefacts(store)
    write_manifest(folder, kb)
    return VersionReport(
        "reindex", tables.version, publish, replaced, verification, sync, dropped, abandoned,
        time.perf_counter() - start,
    )  # fmt: skip


def _embedder_of(kb: Engine, version: IndexVersion) -> Embedder:
    model = read_vector_model(_store(kb).connection, version.tables)
    if model is None or (model.model_id == kb.embedder.model_id and model.dim == kb.embedder.dim):
        return kb.embedder
    if not version.embedder:
        raise ConfigError(
            f"index version {version.version} does not name its embedder; it cannot be caught up here"
        )
    return make_embedder(version.embedder)


def _switch(kb: Engine, folder: str | os.PathLike[str], target: IndexVersion, *, rollback: bool,
            progress: Progress | None) -> VersionReport:  # fmt: skip
    start = time.perf_counter()
    with writing(kb, "rollback" if rollback else "publish"):
        verification, sync, replaced = _catch_up_verify_switch(
            kb, target.tables, _embedder_of(kb, target), publish=True, rollback=rollback, progress=progress
        )
        write_manifest(folder, kb)
    action = "rollback" if rollback else "publish"
    return VersionReport(
        action, target.version, True, replaced, verification, sync, seconds=time.perf_counter() - start
    )


def publish(
    kb: Engine,
    folder: str | os.PathLike[str],
    version: int | None = None,
    *,
    progress: Progress | None = None,
) -> VersionReport:
    """Publish ``version`` (default: the newest verified, never published one) after verifying it again."""
    store = _store(kb)
    versions = list_versions(store.connection)
    if version is None:
        candidates = [v for v in versions if v.state == "verified"]
        if not candidates:
            states = ", ".join(f"{v.version} {v.state}" for v in versions)
            raise SearchIndexError(
                f"no verified, unpublished index version (versions: {states}); "
                "build one with 'veracity reindex --no-publish' or name one with --version"
            )
        version = candidates[-1].version
    target = get_version(store.connection, version)
    if target.version == read_pointer(store.connection)[0]:
        raise SearchIndexError(f"index version {version} is already the published one")
    return _switch(kb, folder, target, rollback=False, progress=progress)


def rollback(
    kb: Engine, folder: str | os.PathLike[str], *, progress: Progress | None = None
) -> VersionReport:
    """Publish again the version published before the current one (caught up and verified first)."""
    store = _store(kb)
    target = rollback_target(store.connection)
    if target is None:
        states = ", ".join(f"{v.version} {v.state}" for v in list_versions(store.connection))
        raise SearchIndexError(
            f"no earlier index version to roll back to (versions: {states}); "
            "'veracity publish --version N' publishes any kept version"
        )
    return _switch(kb, folder, target, rollback=True, progress=progress)
