"""Ingest Markdown files (YAML front matter) into a knowledge base, idempotently.

Per file: parse and validate (:func:`veracity.ingest.front_matter.load_markdown_text`),
chunk (:func:`veracity.ingest.chunking.chunk_for_index`; a PDF's chunks get their page
numbers from the parse, :func:`veracity.ingest.pages.with_pages`), store in the
catalog, then index what is new: tokens into the tenant's FTS5 table and
vectors embedded in batches. A document whose id the catalog already holds
costs a parse and nothing else (no chunking, no re-embedding). A new revision
of a source that has an active document supersedes it (the old one is
retired). A file that fails validation is rejected whole, with its reason; the
others go in.

A ``tenant.yaml`` in an ingested folder (``tenant: ...`` and ``roles: [...]``)
adds those roles to the tenant, as do ``roles=``; principals with roles the
tenant does not define see nothing (fail closed).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..catalog.sqlite import SQLiteStore
from ..index.sqlite.search import SQLiteSearchIndex, SyncReport
from ..ingest.batch import load_source
from ..ingest.chunking import chunk_for_index
from ..ingest.ledger import Ledger
from ..ingest.metadata import MetadataMap
from ..ingest.pages import with_pages
from ..ingest.parsers import DEFAULT_MAX_BYTES, FORMATS
from ..model.contracts import Status
from ..model.errors import NotFoundError, ValidationError, VeracityError
from ..pipeline.engine import KnowledgeBase

__all__ = ["IngestReport", "collect_sources", "ingest_paths"]

SOURCE_SUFFIXES = tuple(sorted(FORMATS))
FILES_PER_TRANSACTION = 256
Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)`` with stage ``parse`` (files) or ``index`` (chunks)."""


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What an ingest did: sources added, revised, unchanged, rejected (with reasons), timings."""

    added: tuple[str, ...] = ()
    revised: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    rejected: tuple[tuple[str, str], ...] = ()
    chunks_added: int = 0
    roles_defined: tuple[tuple[str, tuple[str, ...]], ...] = ()
    index: SyncReport = field(default_factory=SyncReport)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def chunks_per_second_without_embedding(self) -> float:
        """Chunks added per second of parse + chunk + catalog + lexical indexing (embedding excluded)."""
        spent = sum(v for k, v in self.seconds.items() if k != "embed")
        return self.chunks_added / spent if spent > 0 else 0.0


def collect_sources(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[tuple[str, Path]], list[Path]]:
    """``(source name, file)`` of every Markdown file under ``paths`` (sorted), and tenant.yaml files.

    Folders are searched recursively; the source name is the path relative to
    the folder given (a file given directly is named by its file name).
    """
    files: list[tuple[str, Path]] = []
    tenant_files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.name.startswith("."):
                    continue
                if file.is_file() and file.suffix.lower() in SOURCE_SUFFIXES:
                    files.append((file.relative_to(path).as_posix(), file))
                elif file.is_file() and file.name == "tenant.yaml":
                    tenant_files.append(file)
        elif path.is_file():
            files.append((path.name, path))
        else:
            raise NotFoundError(f"no such file or folder: {str(path)!r}")
    return files, tenant_files


def _tenant_roles(file: Path) -> tuple[str, list[str]]:
    try:
        raw: Any = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValidationError(f"cannot read tenant roles: {exc}", document=str(file)) from None
    tenant, roles = raw.get("tenant") if isinstance(raw, dict) else None, raw.get("roles", [])
    if not isinstance(tenant, str) or not isinstance(roles, list):
        raise ValidationError("expected 'tenant: NAME' and 'roles: [..]'", document=str(file))
    return tenant, [str(role) for role in roles]


def ingest_paths(
    kb: KnowledgeBase,
    paths: Sequence[str | os.PathLike[str]],
    *,
    tenant: str | None = None,
    roles: Sequence[str] = (),
    metadata_file: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest Markdown files and folders into ``kb``'s catalog and index; see the module docstring.

    ``tenant`` is the default tenant for files without one; a file naming
    another tenant is rejected. ``roles`` are added to that tenant.
    """
    seconds = {"parse": 0.0, "chunk": 0.0, "catalog": 0.0}
    files, tenant_files = collect_sources(paths)
    role_updates: dict[str, set[str]] = {}
    for file in tenant_files:
        name, listed = _tenant_roles(file)
        role_updates.setdefault(name, set()).update(listed)
    if roles:
        if not tenant:
            raise ValidationError("roles need a tenant: pass tenant= (--tenant)", field="roles")
        role_updates.setdefault(tenant, set()).update(roles)
    outcomes: dict[str, list[str]] = {"added": [], "revised": [], "unchanged": []}
    rejected: list[tuple[str, str]] = []
    chunks_added = 0
    mapping = MetadataMap.load(Path(metadata_file)) if metadata_file is not None else None
    options = {"tenant": tenant, "mapping": mapping, "max_bytes": max_bytes}
    ledger = _ledger(kb)
    pending: list[tuple[str, str, str]] = []
    for first in range(0, len(files), FILES_PER_TRANSACTION):
        with kb.catalog.store.transaction():  # one commit per batch; a rejected file rolls back alone
            for done, (source, file) in enumerate(files[first : first + FILES_PER_TRANSACTION], first + 1):
                ledger.step(source, "discovered")
                try:
                    kind, name, document_id, count = _ingest_file(kb, source, file, options, seconds, ledger)
                    outcomes[kind].append(name)
                    chunks_added += count
                    if kind != "unchanged":
                        pending.append((source, name, document_id))
                except (VeracityError, OSError, UnicodeDecodeError) as exc:
                    rejected.append((source, str(exc)))
                    ledger.step(source, "failed", reason=str(exc))
                if progress is not None:
                    progress("parse", done, len(files))
    catalog = kb.catalog
    defined = []
    for name, wanted in sorted(role_updates.items()):
        merged = set(catalog.roles(name)) | wanted
        catalog.define_roles(name, merged)
        defined.append((name, tuple(sorted(merged))))
    index_report = _index(kb, progress)
    with kb.catalog.store.transaction():
        ledger.steps(("embedded", "indexed", "active"), pending)
    seconds["tokenize"] = index_report.tokenize_seconds
    seconds["write"] = index_report.write_seconds
    seconds["embed"] = index_report.embed_seconds
    return IngestReport(
        added=tuple(outcomes["added"]),
        revised=tuple(outcomes["revised"]),
        unchanged=tuple(outcomes["unchanged"]),
        rejected=tuple(rejected),
        chunks_added=chunks_added,
        roles_defined=tuple(defined),
        index=index_report,
        seconds=seconds,
    )


def _ingest_file(
    kb: KnowledgeBase,
    source: str,
    file: Path,
    options: dict[str, Any],
    seconds: dict[str, float],
    ledger: Ledger | _NoLedger,
) -> tuple[str, str, str, int]:
    """Ingest one file: ``(outcome, source id, document id, chunks added)``; raises if rejected."""
    catalog = kb.catalog
    start = time.perf_counter()
    try:
        document, parsed = load_source(file, relative=source, **options)
    finally:
        seconds["parse"] += time.perf_counter() - start
    ids = {"source_id": document.source_id, "document_id": document.document_id}
    ledger.step(source, "parsed", **ids)
    revisions = catalog.store.find_documents(source_id=document.source_id)
    if any(d.document_id == document.document_id for d in revisions):
        ledger.step(source, "unchanged", **ids)
        return "unchanged", document.source_id, document.document_id, 0
    start = time.perf_counter()
    try:
        chunks = with_pages(chunk_for_index(document), parsed)
    finally:
        seconds["chunk"] += time.perf_counter() - start
    ledger.step(source, "chunked", **ids)
    start = time.perf_counter()
    try:
        previous = [d for d in revisions if d.status is Status.ACTIVE]
        if previous:
            catalog.new_revision(previous[-1].document_id, document, chunks)
            return "revised", document.source_id, document.document_id, len(chunks)
        catalog.add(document, chunks)
        return "added", document.source_id, document.document_id, len(chunks)
    finally:
        seconds["catalog"] += time.perf_counter() - start


class _NoLedger:
    """Stands in for the ledger on a catalog that has none (not SQLite)."""

    def step(self, source: str, state: str, **_: Any) -> None:
        """Record nothing."""

    def steps(self, states: Any, sources: Any) -> None:
        """Record nothing."""


def _ledger(kb: KnowledgeBase) -> Ledger | _NoLedger:
    store = kb.catalog.store
    return Ledger(store.connection) if isinstance(store, SQLiteStore) else _NoLedger()


def _index(kb: KnowledgeBase, progress: Progress | None) -> SyncReport:
    backend = kb.snapshot
    if isinstance(backend, SQLiteSearchIndex):
        callback = (lambda done, total: progress("index", done, total)) if progress else None
        return backend.sync(kb.catalog, kb.embedder, progress=callback)
    kb.reindex()
    return SyncReport()
