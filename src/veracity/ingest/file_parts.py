"""Deciding and writing a part of files (``FILES_PER_PART``) for :mod:`veracity.ingest.run`.

A part's files are decided from the catalog as it was before the part (one
read of their sources' documents and one of their tombstones), then written
together: the new documents in one ``put_documents``, the source paths,
tombstones, verdicts and ledger rows each in one statement. A file that is
rejected writes nothing but its ledger steps.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from ..catalog.bulk import documents_by_source
from ..catalog.ledger import Ledger, latest_step, withdrawal_reason
from ..catalog.sources import RecordedFile, source_root
from ..catalog.store import NewDocument
from ..catalog.tombstones import Tombstone, find_tombstones, remove_tombstones
from ..index.ahead import AheadTokens
from ..model.contracts import Document, Status
from ..model.errors import StorageError, ValidationError, VeracityError
from ..parse.chunking import oversize_chunks
from ..parse.diagnostics import ParseDiagnostics
from ..parse.documents import next_revision, same_but_revision, with_revision
from ..parse.limits import InputLimits, over_limit
from ..pipeline.engine import Engine
from .fingerprints import recorded_parse
from .loading import Loaded, SourceLoader, Unparsed, chunks_of
from .prune import REASON as PRUNED
from .removal import BY_REQUEST
from .sources import SourceFile, record_sources
from .verdicts import store_many_verdicts

__all__ = [
    "NoLedger", "Outcome", "Plan", "Rejected", "Run", "Skipped", "parts", "resolve_unparsed", "write_part",
]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one file."""

    kind: str  # added | revised | unchanged | skipped | restored
    source_id: str
    document_id: str = ""
    document: Document | None = None
    chunks: int = 0
    oversize: int = 0
    reason: str = ""
    earlier_status: str = ""
    """Unchanged: the stored document's status when it is not served (withdrawn, retired); added
    or revised: the status of the source's latest earlier revision when that one was withdrawn."""
    kept_withdrawn: bool = False
    """Added or revised: stored withdrawn, because a command withdrew the revision before it
    (:func:`_withdrawn_by_command`); ``ingest --restore`` serves it."""
    stored_as: tuple[str, str | None] = ("active", None)
    """Added or revised: the ledger's last state for the stored document, and its reason."""


@dataclass
class Run:
    """The settings of one ingest, shared by every file."""

    kb: Engine
    options: dict[str, Any]
    ledger: Ledger | NoLedger
    restore: bool
    seconds: dict[str, float]
    loader: SourceLoader
    connection: Any = None
    """The catalog's connection (``None``: a store without one keeps no sources or tombstones)."""
    tokens: AheadTokens = field(default_factory=AheadTokens)
    """Index tokens the parse workers computed for the chunks written (the index sync takes them)."""
    revive_pruned: bool = False
    """Serve again a document that pruning withdrew because its file was gone, now that the file
    is back (``ingest --prune``, ``sync``): the folder is what is served."""
    other_sources: dict[str, str] = field(default_factory=dict)
    """Root → name of the other sources of a sync (:attr:`.run.Selection.others`)."""
    judge: bool = True
    """Judge and keep the injection verdicts of what is stored (``False``: the first asks that read
    the texts judge them, and ``veracity reindex`` stores them)."""
    claimed: dict[tuple[str, str], list[tuple[SourceFile, str | None]]] = field(default_factory=dict)
    """The files of this ingest stored under each ``(tenant, source_id)``, with the revision each
    declares (``None``: numbered); see :func:`_claim`."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out on purpose when it was loaded (a page template; no text)."""

    reason: str


Rejected = (VeracityError, OSError, UnicodeDecodeError)
"""What rejects one file (a ``StorageError`` is the disk, not the file: it stops the ingest)."""


def parts(
    loaded: Sequence[tuple[SourceFile, Loaded | Skipped | Exception]],
) -> Iterator[list[tuple[SourceFile, Loaded | Skipped | Exception]]]:
    """``loaded`` in consecutive parts in which no source id comes twice: a part's files are
    decided from what the catalog held before it, so each part is read and written at once."""
    part: list[tuple[SourceFile, Loaded | Skipped | Exception]] = []
    seen: set[str] = set()
    for file, result in loaded:
        source_id = result[0].source_id if isinstance(result, tuple) else None
        if source_id is not None and source_id in seen:
            yield part
            part, seen = [], set()
        part.append((file, result))
        if source_id is not None:
            seen.add(source_id)
    if part:
        yield part


@dataclass
class Plan:
    """What one file comes to: its ledger steps, its outcome (or why it is rejected), its writes."""

    file: SourceFile
    steps: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    outcome: Outcome | None = None
    failure: Exception | None = None
    put: NewDocument | None = None
    judged: Any = None
    tokens: tuple[str | None, ...] | None = None
    """The put's chunks' index tokens, computed by a parse worker (``None``: none)."""
    source: tuple[str, str] | None = None
    """``(tenant, source_id)`` to record in ``source_files``."""
    untomb: bool = False
    new_status: tuple[str, Status] | None = None
    """``(document_id, status)`` for a stored document whose status this ingest changes."""
    fingerprint: str | None = None
    """The file's fingerprint, recorded with its source (:mod:`veracity.ingest.fingerprints`)."""
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def recorded(self) -> RecordedFile | None:
        """What to remember of the file (:mod:`veracity.ingest.fingerprints`): ``None`` without a
        fingerprint or an outcome."""
        if self.fingerprint is None or self.outcome is None:
            return None
        return RecordedFile(self.fingerprint, self.outcome.document_id, self.diagnostics)

    def step(self, state: str, **details: Any) -> None:
        self.steps.append((state, details))

    def skip(self, name: str, reason: str) -> None:
        self.step("skipped", reason=reason)
        self.outcome = Outcome("skipped", name, reason=reason)

    def fail(self, exc: Exception) -> None:
        """Rejected: nothing of the file is written, and the ledger says why (the steps it had
        reached are dropped, as the file's rollback dropped them)."""
        self.failure, self.outcome, self.put = exc, None, None
        self.source, self.untomb, self.new_status = None, False, None
        found = getattr(exc, "diagnostics", None)  # a file that parsed to no text says what it found
        diagnostics = found.as_dict() if isinstance(found, ParseDiagnostics) else None
        self.steps = [self.steps[0], ("failed", {"reason": str(exc), "diagnostics": diagnostics})]


def write_part(run: Run, part: Sequence[tuple[SourceFile, Loaded | Skipped | Exception]]) -> list[Plan]:
    """Decide and write the files of one part (see :func:`parts`), in order.

    One read of the documents of the part's sources and one of their tombstones; each file
    decided from those (:func:`_plan`); then the new documents in one
    :meth:`~veracity.catalog.store.Store.put_documents` (a file whose put is refused is
    rejected), the source paths, tombstones, verdicts and ledger rows each in one statement.
    """
    store = run.kb.catalog.store
    connection = run.connection
    documents = [result[0] for _, result in part if isinstance(result, tuple)]
    by_source = documents_by_source(store, [document.source_id for document in documents])
    tombstones: dict[tuple[str, str], Tombstone] = {}
    if connection is not None:
        tombstones = find_tombstones(connection, [(d.tenant, d.source_id) for d in documents])
    plans = [_plan(run, file, result, by_source, tombstones) for file, result in part]
    puts = [(plan, plan.put) for plan in plans if plan.put is not None]
    for (plan, put), error in zip(puts, store.put_documents([put for _, put in puts]), strict=True):
        if error is not None:
            plan.fail(error)
        elif plan.tokens is not None:
            run.tokens.keep(put.chunks, plan.tokens)
    if connection is not None:
        sources = [(plan.source, plan) for plan in plans if plan.source is not None]
        files = [(*source, plan.file) for source, plan in sources]
        record_sources(connection, files, [plan.recorded() for _, plan in sources])
        remove_tombstones(connection, [source for source, plan in sources if plan.untomb])
    for plan in plans:
        if plan.new_status is not None:
            document_id, status = plan.new_status
            store.set_status(document_id, status, store.catalog_revision(document_id))
    start = time.perf_counter()
    try:
        stored = [(plan.put, plan.judged) for plan in plans if plan.put is not None]
        if run.judge:
            store_many_verdicts(store, [(put.document, put.chunks, judged) for put, judged in stored])
    finally:
        run.seconds["verdicts"] += time.perf_counter() - start
    for plan in plans:
        for state, details in plan.steps:
            run.ledger.step(plan.file.source, state, **details)
    return plans


def resolve_unparsed(
    run: Run,
    loaded: Sequence[tuple[SourceFile, Loaded | Unparsed | Skipped | Exception]],
    parse: Callable[[SourceFile], Loaded | Skipped | Exception],
) -> list[tuple[SourceFile, Loaded | Skipped | Exception]]:
    """Each :class:`Unparsed` file of one part as the document it came to, when that is still the
    latest revision of its source, no other file of the part has its source and ``--restore``
    does not need its declared status; else ``parse``d (see :mod:`veracity.ingest.fingerprints`)."""
    unparsed = [result for _, result in loaded if isinstance(result, Unparsed)]
    if not unparsed:
        return [(file, result) for file, result in loaded if not isinstance(result, Unparsed)]
    store = run.kb.catalog.store
    documents = store.get_documents([result.recorded.document_id for result in unparsed])
    by_source = documents_by_source(store, [document.source_id for document in documents.values()])
    sources = Counter(result[0].source_id for _, result in loaded if isinstance(result, tuple))
    sources.update(d.source_id for d in (documents.get(u.recorded.document_id) for u in unparsed) if d)
    resolved: list[tuple[SourceFile, Loaded | Skipped | Exception]] = []
    for file, result in loaded:
        if not isinstance(result, Unparsed):
            resolved.append((file, result))
            continue
        document = documents.get(result.recorded.document_id)
        if document is not None and sources[document.source_id] == 1 and not _status_unknown(run, document):
            revisions = _revisions(by_source, document)
            if revisions and revisions[-1].document_id == document.document_id:
                # a file declaring another status keeps no fingerprint (_decide), so this one declared active
                declared = replace(document, status=Status.ACTIVE)
                standing = (declared, recorded_parse(result.recorded), None, None, None, result.fingerprint)
                resolved.append((file, standing))
                continue
        resolved.append((file, parse(file)))
    return resolved


def _status_unknown(run: Run, document: Document) -> bool:
    """Whether ``--restore`` needs the status ``document``'s file declares and only a parse tells it.

    The recorded document holds the catalog's status. A file that declares no status declares
    active; one that declares a status may say withdrawn (recorded before such files stopped
    keeping fingerprints), and reviving it would break its word.
    """
    reviving = run.restore or run.revive_pruned
    return reviving and document.status is not Status.ACTIVE and "status" not in document.defaulted_fields


def _revisions(by_source: dict[str, list[Document]], document: Document) -> list[Document]:
    """The stored revisions of ``document``'s source in its tenant, oldest first."""
    return [d for d in by_source.get(document.source_id, ()) if d.tenant == document.tenant]


def _plan(
    run: Run,
    file: SourceFile,
    loaded: Loaded | Skipped | Exception,
    by_source: dict[str, list[Document]],
    tombstones: dict[tuple[str, str], Tombstone],
) -> Plan:
    """What ``file`` comes to, decided from the catalog as it was before its part."""
    plan = Plan(file)
    plan.step("discovered")
    if isinstance(loaded, Skipped):
        plan.skip(file.source, loaded.reason)
        return plan
    try:
        if isinstance(loaded, Exception):
            raise loaded
        _decide(run, plan, loaded, by_source, tombstones)
    except StorageError:
        raise
    except Rejected as exc:
        plan.fail(exc)
    return plan


def _decide(
    run: Run,
    plan: Plan,
    loaded: Loaded,
    by_source: dict[str, list[Document]],
    tombstones: dict[tuple[str, str], Tombstone],
) -> None:
    """Fill in ``plan`` for a loaded file; raises if it is rejected."""
    document, parsed, cut, judged, tokens, plan.fingerprint = loaded
    ids: dict[str, Any] = {"source_id": document.source_id, "document_id": document.document_id}
    plan.diagnostics = parsed.diagnostics.as_dict()
    plan.step("parsed", diagnostics=plan.diagnostics, **ids)
    _claim(run, plan.file, document)
    _refuse_another_sources_id(run, plan.file, document)
    declared = document.status  # numbering below swaps in the stored revision, whose status is the catalog's
    if declared is not Status.ACTIVE:
        plan.fingerprint = None  # parsed every time: an unparsed stand-in has only the catalog's status
    revisions = _revisions(by_source, document)
    if run.connection is not None:
        tombstone = tombstones.get((document.tenant, document.source_id))
        if tombstone is not None and not run.restore:
            same = tombstone.content_digest == document.content_digest
            changed = "" if same else "; its content changed since"
            reason = f"deleted earlier ({tombstone.deleted_at}), skipped{changed}; --restore ingests it again"
            plan.skip(document.source_id, reason)
            return
        plan.untomb = tombstone is not None
        plan.source = (document.tenant, document.source_id)
    if "revision" in document.defaulted_fields:
        document = _numbered(document, revisions)
        ids["document_id"] = document.document_id
    stored = next((d for d in revisions if d.document_id == document.document_id), None)
    if stored is not None:
        _settle_stored(run, plan, stored, declared, revisions)
        return
    start = time.perf_counter()
    try:
        chunks = chunks_of(document, parsed, cut)
    finally:
        run.seconds["chunk"] += time.perf_counter() - start
    limits: InputLimits = run.options["limits"]
    if len(chunks) > limits.max_chunks:
        raise over_limit(plan.file.source, "the document makes {value} chunks", len(chunks), "max_chunks",
                         limits.max_chunks)  # fmt: skip
    plan.step("chunked", **ids)
    previous = [d for d in revisions if d.status is Status.ACTIVE]
    earlier = revisions[-1].status.value if revisions and revisions[-1].status is Status.WITHDRAWN else ""
    # A command withdrew the revision before (wrong or unsafe): an edit of its file is no decision
    # to serve it again, so the new revision is stored withdrawn too, until --restore.
    by_command = _withdrawn_by_command(run, revisions[-1]) if earlier and declared is Status.ACTIVE else None
    kept = by_command is not None and not run.restore and not (by_command == PRUNED and run.revive_pruned)
    if kept:
        document = replace(document, status=Status.WITHDRAWN)
    replaces = previous[-1].document_id if previous and not kept else None
    plan.put = NewDocument(document, chunks, replaces=replaces)
    plan.judged = judged
    plan.tokens = tokens if chunks is cut else None  # computed on the worker's own chunks only
    kind = "revised" if previous else "added"
    oversize = oversize_chunks(chunks)
    if kept:
        stored_as: tuple[str, str | None] = (Status.WITHDRAWN.value, by_command)
    elif document.status is Status.ACTIVE:
        stored_as = (Status.ACTIVE.value, None)
    else:
        stored_as = (document.status.value, declared_reason(document.status))
    plan.outcome = Outcome(
        kind, document.source_id, document.document_id, document, len(chunks), oversize,
        earlier_status=earlier, kept_withdrawn=kept, stored_as=stored_as,
    )  # fmt: skip


def declared_reason(status: Status) -> str:
    """The ledger reason of a status a document's own file declares."""
    return f"its file declares status {status.value}"


def _withdrawn_by_command(run: Run, latest: Document) -> str | None:
    """The ledger reason of ``latest``'s withdrawal when a command made it (``withdraw``: by
    request; ``--prune``: its file was gone), ``None`` when its own file declared it. A catalog
    that keeps no ledger cannot tell: a command, then (fail closed)."""
    if run.connection is None:
        return BY_REQUEST
    reason = withdrawal_reason(run.connection, latest.document_id)
    if reason is None or reason == declared_reason(Status.WITHDRAWN):
        return None  # no withdrawn step: stored withdrawn as its file declared (older ledgers)
    return reason


def _claim(run: Run, file: SourceFile, document: Document) -> None:
    """Reject ``file`` when an earlier file of this ingest came to the same source id, unless
    both declare revisions and they differ (a folder may hold several revisions of one source).

    Two such files would otherwise be stored in turn as revisions of each other, each ingest
    adding two revisions and keeping only the last file. The earlier file keeps the id: by the
    time a later one is parsed the earlier may be committed (files are written as they are
    parsed), and a re-run then rejects the same later file, so it adds nothing.
    """
    revision = None if "revision" in document.defaulted_fields else document.revision
    claims = run.claimed.setdefault((document.tenant, document.source_id), [])
    first = next((f for f, r in claims if r is None or revision is None or r == revision), None)
    if first is not None:
        raise ValidationError(
            f"{_shown(first, file)} of this ingest already has this id, so {_shown(file, first)} is not "
            "ingested; give one of them its own id (id: in its front matter, sidecar or --metadata) "
            "or rename it",
            document=document.source_id,
            field="id",
        )
    claims.append((file, revision))


def _refuse_another_sources_id(run: Run, file: SourceFile, document: Document) -> None:
    """Reject ``file`` when its id is a document another source of the sync brought (both
    sources hold an ``install.md``): stored as a revision of it, each sync would replace the other's
    text and the other's file could no longer be asked about."""
    if not run.other_sources or run.connection is None:
        return
    root = source_root(run.connection, document.tenant, document.source_id)
    owner = run.other_sources.get(root) if root is not None else None
    if owner is not None and root != file.root:
        raise ValidationError(
            f"id {document.source_id!r} is a document of source {owner!r} in tenant {document.tenant!r}; "
            "give one of the files its own id (id: in its front matter or sidecar), or the sources "
            "their own tenants",
            document=document.source_id,
            field="id",
        )


def _shown(file: SourceFile, beside: SourceFile) -> str:
    """``file``'s name as the ledger has it, with its folder when ``beside`` is from another one."""
    return file.source if file.root == beside.root else str(file.path)


def _settle_stored(
    run: Run, plan: Plan, stored: Document, declared: Status, revisions: Sequence[Document]
) -> None:
    """A file whose document is stored already: unchanged, restored (``--restore``), or given
    the status its file declares."""
    ids = {"source_id": stored.source_id, "document_id": stored.document_id}
    plan.step("unchanged", **ids)
    kind = "unchanged"
    if _restorable(stored, declared, revisions) and (run.restore or _pruned_and_back(run, stored)):
        plan.new_status, kind = (stored.document_id, Status.ACTIVE), "restored"
    elif stored.status is Status.ACTIVE and declared is not Status.ACTIVE:
        # status is not part of a revision, so a file edited to withdraw its document (or one an
        # earlier --restore revived against its word) changes only the stored status
        plan.new_status = (stored.document_id, declared)
        plan.step(declared.value, reason=declared_reason(declared), **ids)
    after = plan.new_status[1] if plan.new_status is not None else stored.status
    held = after.value if after is not Status.ACTIVE else ""
    plan.outcome = Outcome(kind, stored.source_id, stored.document_id, earlier_status=held)


def _pruned_and_back(run: Run, stored: Document) -> bool:
    """Whether pruning withdrew ``stored`` (its file was gone) and nothing changed its status
    since: the file is back, so with :attr:`Run.revive_pruned` it is served again."""
    if not run.revive_pruned or run.connection is None:
        return False
    return latest_step(run.connection, stored.document_id) == ("withdrawn", PRUNED)


def _restorable(stored: Document, declared: Status, revisions: Sequence[Document]) -> bool:
    """Whether ``--restore`` brings ``stored`` back: a command withdrew it (withdraw, prune), its
    file declares it active, and no revision of its source is active.

    A file that declares ``withdrawn`` itself is stored withdrawn, just as a command leaves
    it; only the declared status tells the two apart, and the file's word holds.
    """
    return (
        stored.status is Status.WITHDRAWN
        and declared is Status.ACTIVE
        and not any(d.status is Status.ACTIVE for d in revisions)
    )


def _numbered(document: Document, revisions: Sequence[Document]) -> Document:
    """The latest stored revision when nothing changed, else the next number (see the module docstring)."""
    if revisions and same_but_revision(revisions[-1], document):
        return revisions[-1]
    return with_revision(document, next_revision(revisions))


class NoLedger:
    """Stands in for the ledger on a catalog that has none (not SQLite)."""

    def step(self, source: str, state: str, **_: Any) -> None:
        """Record nothing."""

    def held(self) -> AbstractContextManager[None]:
        """Hold nothing."""
        return nullcontext()

    def mark(self) -> int:
        """Nothing held."""
        return 0

    def discard(self, mark: int) -> None:
        """Nothing to forget."""
