"""Ingest files and folders into a knowledge base, idempotently.

Per file (:func:`veracity.ingest.sources.scan_sources` finds them): parse and
resolve metadata (:func:`veracity.parse.batch.load_source`), chunk
(:func:`veracity.parse.chunking.chunk_for_index`; a PDF's chunks get their page
numbers from the parse, :func:`veracity.parse.pages.with_pages`), store in the
catalog, then index what is new: tokens into the tenant's FTS5 table and
vectors embedded in batches (a new revision reuses the vectors of chunks whose
text did not change). A document whose id the catalog already holds costs a
parse and nothing else. A new revision of a source that has an active document
supersedes it (the old one is retired). A file that fails validation is
rejected whole, with its reason; the others go in. Files of one ingest that come to the
same source id (``guide.md`` and ``guide.txt``, or an ``id`` given twice) would replace each
other: the first keeps the id and the later ones are rejected, naming it (files declaring
distinct revisions are revisions of one source). The catalog is read and written a part of
files at a time (:data:`FILES_PER_PART`): a few statements
per table for the part, not per file (over PostgreSQL each is a round trip),
each file decided and checked before any of it is written.

Governance: unless ``strict``, a source that leaves governance fields out takes
the documented defaults (:class:`veracity.parse.metadata.GovernanceDefaults`;
the tenant is the knowledge base's default tenant, :mod:`veracity.catalog.defaults`)
and a source without a ``revision`` is numbered: 1, then the next number
whenever its content or metadata change. Every default taken is counted in the
report. With ``strict``, a source missing a field is rejected, naming all of them.

A ``tenant.yaml`` in an ingested folder (``tenant: ...`` and ``roles: [...]``)
adds those roles to the tenant, as do ``roles=``; a tenant that has documents
but defines no roles gets :data:`veracity.catalog.defaults.DEFAULT_ROLES`, so its
public documents are visible to someone. Principals with roles the tenant does
not define see nothing (fail closed).

Deleted sources stay deleted (:mod:`veracity.catalog.tombstones`) unless
``restore``, which also brings back what a command withdrew, never a document whose file
declares a status other than active (the file's status always holds); ``prune`` withdraws
(or with ``delete_pruned`` deletes) the documents of sources whose files have gone from an
ingested folder.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..catalog.bulk import all_document_ids
from ..catalog.ledger import Ledger
from ..catalog.sources import recorded_files
from ..catalog.store import DatabaseStore
from ..index.sqlite.search import SyncReport
from ..model.contracts import Chunk, Document
from ..model.errors import StorageError, ValidationError
from ..parse.errors import EmptySourceError, TemplateSourceError
from ..parse.limits import DEFAULT_LIMITS, InputLimits
from ..parse.metadata import GovernanceDefaults, MetadataMap
from ..parse.ocr import DEFAULT_SETTINGS as DEFAULT_OCR
from ..parse.ocr import OcrSettings
from ..pipeline.engine import Engine
from .file_parts import NoLedger, Outcome, Rejected, Run, Skipped, parts, resolve_unparsed, write_part
from .indexing import IndexFeed
from .loading import Loaded, SourceLoader, Unparsed
from .prune import PruneReport, gone_but_served, prune_missing
from .sources import SourceFile, SourceScan, scan_sources
from .tenants import TenantSetup, resolve_tenants
from .verdicts import keeps_verdicts
from .writing import writing

__all__ = ["IngestReport", "Selection", "ingest_paths", "undefined_roles_json"]

FILES_PER_TRANSACTION = 256
"""Files an ingest writes per catalog transaction: a failure loses at most this many files' work,
and other processes can read between transactions."""
FILES_PER_PART = 64
"""Files loaded, then decided and written together (one statement per table for them all): few
enough that the parsing workers, a part ahead, keep busy while the writer writes."""
Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)`` with stage ``parse`` (files) or ``index`` (chunks)."""


@dataclass(frozen=True, slots=True)
class Selection:
    """Which files of an ingested folder belong to the source (``present``) and which to read.

    A file outside ``present`` is treated as gone from the folder (``prune`` withdraws what came
    from it); a file in ``present`` but not in ``read`` is known unchanged: not read, not
    pruned. Paths are relative to the folder (POSIX), as :class:`SourceFile.source`.
    """

    present: frozenset[str]
    read: frozenset[str]
    others: tuple[tuple[str, str], ...] = ()
    """``(root, name)`` of the other sources of the sources file: a file whose id is a document
    one of them brought is rejected, never stored as that document's next revision."""


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What an ingest did: sources added, revised, unchanged, skipped, rejected; defaults; timings.

    ``defaults_taken`` counts, per governance field, the added or revised
    documents that took its default; ``extra_keys`` lists the metadata keys
    kept that are not governance fields; ``skipped`` holds files left out on
    purpose with the reason (deleted earlier, a page template, no text);
    ``oversize_chunks`` counts chunks over twice the budget (one table row or
    code line each).
    """

    added: tuple[str, ...] = ()
    revised: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    rejected: tuple[tuple[str, str], ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    restored: tuple[str, ...] = ()
    chunks_added: int = 0
    roles_defined: tuple[tuple[str, tuple[str, ...]], ...] = ()
    default_roles: tuple[str, ...] = ()
    default_tenant: str | None = None
    documents_with_defaults: int = 0
    defaults_taken: tuple[tuple[str, int], ...] = ()
    extra_keys: tuple[str, ...] = ()
    undefined_roles: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """``(source_id, roles)`` of documents added or revised whose allowed roles their tenant does
    not define: nobody can use them until the roles are defined (``--roles``)."""
    not_served: tuple[tuple[str, str], ...] = ()
    """``(source_id, status)`` of unchanged files whose documents are withdrawn or retired."""
    after_withdrawal: tuple[str, ...] = ()
    """Sources whose changed file became a new, served revision of a withdrawn document (its own
    file had withdrawn it, or ``--restore``, or ``--prune`` with a pruned file back)."""
    gone_but_served: tuple[str, ...] = ()
    """Sources whose files have left the folders ingested while a revision is still served (an
    ingest without ``--prune``, which would withdraw them)."""
    kept_withdrawn: tuple[str, ...] = ()
    """Sources whose changed file became a new revision stored withdrawn: a command had withdrawn
    the revision before (``ingest --restore`` serves it)."""
    unmatched_metadata_keys: tuple[str, ...] = ()
    """Keys of the metadata mapping that match no file of the folders (they govern nothing)."""
    oversize_chunks: int = 0
    scan: SourceScan = field(default_factory=SourceScan)
    pruned: PruneReport = field(default_factory=PruneReport)
    index: SyncReport = field(default_factory=SyncReport)
    seconds: dict[str, float] = field(default_factory=dict)
    worker_seconds: dict[str, float] = field(default_factory=dict)
    """CPU seconds the parse workers spent on each step (:data:`veracity.ingest.loading.WORKER_STEPS`:
    parse and chunk, index tokens, injection verdicts); empty when the files were loaded here."""

    @property
    def chunks_per_second_without_embedding(self) -> float:
        """Chunks added per second of parse + chunk + catalog + lexical indexing (the model steps,
        embedding and the injection verdicts, excluded)."""
        spent = sum(v for k, v in self.seconds.items() if k not in ("embed", "verdicts"))
        return self.chunks_added / spent if spent > 0 else 0.0


def undefined_roles_json(pairs: Sequence[tuple[str, Sequence[str]]]) -> list[dict[str, Any]]:
    """:attr:`IngestReport.undefined_roles` as every report gives it: ``{"id", "roles"}`` per document."""
    return [{"id": name, "roles": list(roles)} for name, roles in pairs]


def ingest_paths(
    kb: Engine,
    paths: Sequence[str | os.PathLike[str]],
    *,
    tenant: str | None = None,
    roles: Sequence[str] = (),
    metadata_file: str | os.PathLike[str] | None = None,
    metadata: MetadataMap | None = None,
    selection: Selection | None = None,
    max_bytes: int | None = None,
    progress: Progress | None = None,
    strict: bool = False,
    restore: bool = False,
    prune: bool = False,
    delete_pruned: bool = False,
    limits: InputLimits = DEFAULT_LIMITS,
    follow_symlinks: bool = False,
    ocr: OcrSettings | None = DEFAULT_OCR,
    images: bool = False,
    jobs: int | None = None,
    judge: bool = True,
) -> IngestReport:
    """Ingest files and folders into ``kb``'s catalog and index; see the module docstring.

    ``tenant`` is the tenant for files without one (a file naming another
    tenant is rejected); ``roles`` are added to it. ``strict`` rejects sources
    missing governance fields instead of taking defaults. ``restore`` ingests
    sources deleted earlier (and brings back unchanged ones a command withdrew, never one whose
    file declares a status other than active);
    ``prune`` withdraws, with ``delete_pruned`` deletes, the documents of
    sources whose files have gone from an ingested folder. ``limits`` bound
    what one file may cost (:mod:`veracity.parse.limits`; ``max_bytes``
    overrides its size limit); a file over one is rejected by name and the
    others go in. Symbolic links are followed only to files and folders inside
    the ingested folder unless ``follow_symlinks`` (:mod:`veracity.ingest.sources`).
    ``ocr`` says how scanned PDF pages and images are read (``None``: never; a
    PDF or image without text is then rejected as ``no text``). Image files in
    folders are read by OCR only with ``images`` (named directly, always).
    ``jobs`` worker processes parse and chunk ahead of the writer (default: the usable
    CPUs, at most 8; 1 parses here); the outcome is the same for any number
    (:mod:`veracity.ingest.loading`). ``judge`` has the injection verdicts of the stored
    texts judged (by the cue-word detector, or the trained guard while one is in use) and kept
    now; without it, the first asks that read a text judge it and ``veracity reindex`` keeps
    them.

    ``metadata`` is a mapping given in memory instead of ``metadata_file`` (not both).
    ``selection`` (one folder only) says which of its files belong to the source and which
    of those to read: the others are known unchanged, cost nothing, and are not pruned
    (:class:`Selection`; ``veracity sync`` passes it).
    """
    if metadata is not None and metadata_file is not None:
        raise ValidationError("give a metadata file or a metadata mapping, not both", field="metadata")
    if selection is not None and (len(paths) != 1 or not Path(paths[0]).is_dir()):
        raise ValidationError("a selection of files needs exactly one folder", field="selection")
    if metadata_file is not None:
        metadata = MetadataMap.load(Path(metadata_file))
    if max_bytes is not None:
        limits = replace(limits, max_bytes=max_bytes)
    if delete_pruned and not prune:
        raise ValidationError("deleting pruned documents needs prune (--prune --delete)", field="delete")
    with writing(kb, "ingest", bulk=True):  # one ingest at a time: batches of two never interleave
        return _ingest(
            kb, paths, tenant=tenant, roles=roles, mapping=metadata, selection=selection, limits=limits,
            progress=progress, strict=strict, restore=restore, prune=prune, delete_pruned=delete_pruned,
            follow_symlinks=follow_symlinks, ocr=ocr, images=images, jobs=jobs, judge=judge,
        )  # fmt: skip


def _ingest(
    kb: Engine,
    paths: Sequence[str | os.PathLike[str]],
    *,
    tenant: str | None,
    roles: Sequence[str],
    mapping: MetadataMap | None,
    selection: Selection | None,
    limits: InputLimits,
    progress: Progress | None,
    strict: bool,
    restore: bool,
    prune: bool,
    delete_pruned: bool,
    follow_symlinks: bool,
    ocr: OcrSettings | None,
    images: bool,
    jobs: int | None,
    judge: bool,
) -> IngestReport:
    seconds = {"parse": 0.0, "chunk": 0.0, "catalog": 0.0, "verdicts": 0.0}
    scan = scan_sources(paths, follow_symlinks=follow_symlinks, images=images)
    if selection is not None:
        scan = replace(scan, files=tuple(f for f in scan.files if f.source in selection.present))
    setup = resolve_tenants(kb, scan.tenant_files, tenant=tenant, roles=roles)
    defaults = None if strict else GovernanceDefaults(tenant=setup.default_tenant)
    options = {"tenant": tenant, "mapping": mapping, "limits": limits, "defaults": defaults, "ocr": ocr}
    files = scan.files if selection is None else tuple(f for f in scan.files if f.source in selection.read)
    store = kb.catalog.store
    known = partial(all_document_ids, store)  # read only if workers start
    connection = _connection(kb)
    recorded = recorded_files(connection, sorted({f.root for f in files})) if connection is not None else None
    judge = judge and keeps_verdicts(store)
    with SourceLoader(files, options, jobs=jobs, judge=judge, known=known, recorded=recorded) as loader:
        ledger = Ledger(connection) if connection is not None else NoLedger()
        run = Run(kb, options, ledger, restore, seconds, loader, connection, revive_pruned=prune,
                  other_sources=dict(selection.others) if selection is not None else {},
                  judge=judge)  # fmt: skip
        feed = IndexFeed(kb, run.tokens)
        outcomes, rejected, pending = _write_files(run, files, feed, strict=strict, progress=progress)
        worker_seconds = dict(loader.worker_seconds) if loader.parallel else {}
    defined, defaulted_roles = setup.apply(kb, [o.document for o in outcomes if o.document is not None])
    pruned = prune_missing(kb, scan, delete=delete_pruned, ledger=run.ledger) if prune else PruneReport()
    gone = () if prune or selection is not None else gone_but_served(kb, scan)
    index_report = feed.finish(progress)
    with kb.catalog.store.transaction(), run.ledger.held():  # one statement for all of them
        for source, outcome in pending:
            state, reason = outcome.stored_as
            for step, why in (("embedded", None), ("indexed", None), (state, reason)):
                run.ledger.step(
                    source, step, source_id=outcome.source_id, document_id=outcome.document_id, reason=why
                )
    seconds["tokenize"] = index_report.tokenize_seconds
    seconds["write"] = index_report.write_seconds
    seconds["embed"] = index_report.embed_seconds
    report = _report(outcomes, rejected, scan, setup, defined, defaulted_roles, pruned, index_report, seconds,
                     roles_of=kb.catalog.roles)  # fmt: skip
    report = replace(report, gone_but_served=gone)
    if mapping is not None:  # over every file scanned: under sync, a file not read again still counts
        unmatched = mapping.unmatched_keys(f.source for f in scan.files)
        report = replace(report, unmatched_metadata_keys=unmatched)
    return replace(report, worker_seconds=worker_seconds)


def _write_files(
    run: Run, files: Sequence[SourceFile], feed: IndexFeed, *, strict: bool, progress: Progress | None
) -> tuple[list[Outcome], list[tuple[str, str]], list[tuple[str, Outcome]]]:
    """Store every file in the catalog, in order: outcomes, rejected files, and the stored ones
    (with their ledger names) whose last ledger steps come once they are indexed.

    One transaction per :data:`FILES_PER_TRANSACTION` files; its catalog reads and writes are
    a few statements per table for every :data:`FILES_PER_PART` files (:func:`write_part`),
    not per file. Every file is checked before anything of it is written, so a rejected file
    writes nothing but its ledger rows; a fault of the storage rolls the whole transaction
    back and stops the ingest. What a transaction wrote goes to ``feed`` once it commits.
    """
    kb = run.kb
    outcomes: list[Outcome] = []
    rejected: list[tuple[str, str]] = []
    pending: list[tuple[str, Outcome]] = []
    done = 0
    for first in range(0, len(files), FILES_PER_TRANSACTION):
        start = time.perf_counter()
        before = sum(run.seconds[k] for k in ("parse", "chunk", "verdicts"))
        last = min(first + FILES_PER_TRANSACTION, len(files))
        written: list[tuple[Document, Sequence[Chunk]]] = []
        with kb.catalog.store.transaction(), run.ledger.held():  # the ledger rows written together
            for at in range(first, last, FILES_PER_PART):
                part_files = files[at : min(at + FILES_PER_PART, last)]
                loaded = [(file, _load_file(run, file, skip_empty=not strict)) for file in part_files]
                again = partial(_parse_file, run, skip_empty=not strict)
                resolved = resolve_unparsed(run, loaded, again)
                for plan in (plan for part in parts(resolved) for plan in write_part(run, part)):
                    if plan.put is not None:
                        written.append((plan.put.document, plan.put.chunks))
                    if plan.failure is not None:
                        rejected.append((plan.file.source, str(plan.failure)))
                    elif (outcome := plan.outcome) is not None:
                        outcomes.append(outcome)
                        if outcome.kind in ("added", "revised"):
                            pending.append((plan.file.source, outcome))
                    done += 1
                    if progress is not None:
                        progress("parse", done, len(files))
        spent = sum(run.seconds[k] for k in ("parse", "chunk", "verdicts")) - before
        run.seconds["catalog"] += time.perf_counter() - start - spent
        feed.committed(written)  # timed as the index's tokenize and write seconds
    return outcomes, rejected, pending


def _report(
    outcomes: list[Outcome],
    rejected: list[tuple[str, str]],
    scan: SourceScan,
    setup: TenantSetup,
    defined: tuple[tuple[str, tuple[str, ...]], ...],
    defaulted_roles: tuple[str, ...],
    pruned: PruneReport,
    index_report: SyncReport,
    seconds: dict[str, float],
    *,
    roles_of: Callable[[str], frozenset[str]],
) -> IngestReport:
    def of_kind(*kinds: str) -> list[Outcome]:
        return [o for o in outcomes if o.kind in kinds]

    def of(*kinds: str) -> tuple[str, ...]:
        return tuple(o.source_id for o in of_kind(*kinds))

    new = [o.document for o in outcomes if o.kind in ("added", "revised") and o.document is not None]
    taken: Counter[str] = Counter(name for d in new for name in d.defaulted_fields)
    return IngestReport(
        added=of("added"),
        revised=of("revised"),
        unchanged=of("unchanged", "restored"),
        rejected=tuple(rejected),
        skipped=tuple((o.source_id, o.reason) for o in outcomes if o.kind == "skipped"),
        restored=of("restored"),
        undefined_roles=_undefined_roles(new, roles_of),
        not_served=tuple((o.source_id, o.earlier_status) for o in of_kind("unchanged") if o.earlier_status),
        after_withdrawal=tuple(
            o.source_id for o in of_kind("added", "revised") if o.earlier_status and not o.kept_withdrawn
        ),
        kept_withdrawn=tuple(o.source_id for o in of_kind("added", "revised") if o.kept_withdrawn),
        chunks_added=sum(o.chunks for o in outcomes),
        roles_defined=defined,
        default_roles=defaulted_roles,
        default_tenant=setup.default_tenant,
        documents_with_defaults=sum(bool(d.defaulted_fields) for d in new),
        defaults_taken=tuple(sorted(taken.items())),
        extra_keys=tuple(sorted({key for d in new for key, _ in d.extra_metadata})),
        oversize_chunks=sum(o.oversize for o in outcomes),
        scan=scan,
        pruned=pruned,
        index=index_report,
        seconds=seconds,
    )


def _undefined_roles(
    written: Sequence[Document], roles_of: Callable[[str], frozenset[str]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The written documents whose allowed roles their tenant does not define (after this ingest
    defined its own): fail closed, nobody can use them, and their author should hear of it."""
    known = {tenant: roles_of(tenant) for tenant in {d.tenant for d in written if d.allowed_roles}}
    found = []
    for document in written:
        missing = tuple(sorted(set(document.allowed_roles) - known.get(document.tenant, frozenset())))
        if missing:
            found.append((document.source_id, missing))
    return tuple(found)


LoadResult = TypeVar("LoadResult", Loaded, Loaded | Unparsed)


def _load_file(run: Run, file: SourceFile, *, skip_empty: bool) -> Loaded | Unparsed | Skipped | Exception:
    """The file loaded (or :class:`Unparsed`), skipped, or the error that rejects it."""
    return _loaded_or_why(run, run.loader.load, file, skip_empty)


def _parse_file(run: Run, file: SourceFile, *, skip_empty: bool) -> Loaded | Skipped | Exception:
    """:func:`_load_file`, parsed here whatever was recorded of the file."""
    return _loaded_or_why(run, run.loader.parse, file, skip_empty)


def _loaded_or_why(
    run: Run, load: Callable[[SourceFile], LoadResult], file: SourceFile, skip_empty: bool
) -> LoadResult | Skipped | Exception:
    start = time.perf_counter()
    try:
        return load(file)
    except TemplateSourceError as exc:
        return Skipped(exc.reason)
    except EmptySourceError as exc:
        return Skipped(exc.reason) if skip_empty else exc
    except StorageError:
        raise
    except Rejected as exc:
        return exc
    finally:
        run.seconds["parse"] += time.perf_counter() - start


def _connection(kb: Engine) -> Any:
    store = kb.catalog.store
    return store.connection if isinstance(store, DatabaseStore) else None
