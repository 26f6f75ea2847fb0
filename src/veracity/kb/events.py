"""Ordered change events: withdraw, retire and revise, applied with compare-and-set.

A change arriving from outside (a CMS webhook, a queue) names the document it
touches and the catalog revision its sender last saw. :func:`apply_events`
applies a batch in the given order and reports one :class:`EventOutcome` per
event; a refused event changes nothing and never raises:

- ``duplicate``: the event id was seen already (in this batch or in ``seen``),
  or a revise carries a document that is already stored;
- ``unknown document``: no such document, or it belongs to another source;
- ``invalid``: an unknown kind, a revise without a usable new document;
- ``stale``: the expected catalog revision is not the current one (the event
  is out of order; the store's compare-and-set refuses it too);
- ``superseded``: a revise of a document that is no longer the active revision
  of its source, so an older revision is never made current again;
- ``unchanged``: the document already has the requested status.

For an on-disk knowledge base, pass the hooks from :func:`kb_hooks` so that the
index changes in the same transaction as the catalog.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from ..catalog.catalog import Catalog
from ..model.contracts import Document, Status
from ..model.errors import NotFoundError, StaleWriteError, ValidationError

if TYPE_CHECKING:
    from ..pipeline.engine import Engine

__all__ = [
    "DUPLICATE",
    "INVALID",
    "STALE",
    "SUPERSEDED",
    "UNCHANGED",
    "UNKNOWN_DOCUMENT",
    "ChangeEvent",
    "EventKind",
    "EventOutcome",
    "ReviseHook",
    "StatusHook",
    "apply_events",
    "kb_hooks",
]

EventKind = Literal["withdraw", "retire", "revise"]

DUPLICATE: Final = "duplicate"
STALE: Final = "stale"
SUPERSEDED: Final = "superseded"
UNKNOWN_DOCUMENT: Final = "unknown document"
INVALID: Final = "invalid"
UNCHANGED: Final = "unchanged"

StatusHook = Callable[[str, Status, int], int]
"""``(document_id, new_status, expected_revision) -> catalog revision after``."""

ReviseHook = Callable[[str, Document, int], int]
"""``(old_document_id, new_document, expected_revision) -> old document's catalog revision after``."""

_TARGET: Final[dict[str, Status]] = {"withdraw": Status.WITHDRAWN, "retire": Status.RETIRED}


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One change to one document, stamped with the catalog revision its sender saw.

    ``new_document`` is required for ``revise`` (the next revision of the same
    source) and ignored otherwise.
    """

    event_id: str
    kind: EventKind
    source_id: str
    document_id: str
    expected_revision: int
    new_document: Document | None = None


@dataclass(frozen=True, slots=True)
class EventOutcome:
    """What happened to one event.

    ``reason`` is ``None`` when applied, else one of the module's reason codes;
    ``catalog_revision`` is the document's catalog revision after the event
    (``None`` when the document is unknown); ``detail`` explains in words.
    """

    event_id: str
    applied: bool
    reason: str | None
    catalog_revision: int | None
    detail: str | None = None


def apply_events(
    catalog: Catalog,
    events: Iterable[ChangeEvent],
    *,
    on_status: StatusHook | None = None,
    on_revise: ReviseHook | None = None,
    seen: set[str] | None = None,
) -> list[EventOutcome]:
    """Apply ``events`` in order; return one outcome per event, in the same order.

    ``on_status`` performs withdraw/retire and ``on_revise`` performs a revise
    (defaults: the catalog's own compare-and-set writes). ``seen`` holds event
    ids already processed by earlier batches; every id processed here is added
    to it, applied or refused, so a replay is always reported as a duplicate.
    """
    processed = seen if seen is not None else set()
    outcomes: list[EventOutcome] = []
    for event in events:
        if event.event_id in processed:
            outcomes.append(_refused(catalog, event, DUPLICATE, f"event {event.event_id!r} was seen before"))
            continue
        processed.add(event.event_id)
        outcomes.append(_apply_one(catalog, event, on_status, on_revise))
    return outcomes


def kb_hooks(kb: Engine, folder: str | os.PathLike[str]) -> tuple[StatusHook, ReviseHook]:
    """Hooks that route events through :mod:`veracity.kb.lifecycle` for an on-disk knowledge base.

    Each change updates the catalog and the index in one transaction, then
    rewrites the manifest; use as ``apply_events(kb.catalog, events,
    on_status=status, on_revise=revise)``.
    """
    from ..index.versioned import is_versioned
    from ..parse.chunking import chunk_for_index
    from .directory import write_manifest
    from .lifecycle import change_status

    def status(document_id: str, new_status: Status, expected: int) -> int:
        change = change_status(kb, folder, document_id, new_status, expected_revision=expected)
        assert change.catalog_revision is not None
        return change.catalog_revision

    def revise(old_document_id: str, document: Document, expected: int) -> int:
        with kb.catalog.store.transaction():
            stored = kb.catalog.new_revision(old_document_id, document, chunk_for_index(document), expected)
            index = kb.snapshot
            if is_versioned(index):  # the new revision added, the old one's snapshot refreshed: no full sync
                index.add([(stored, tuple(kb.catalog.chunks(stored.document_id)))], kb.embedder)
                index.refresh(kb.catalog, [old_document_id])
            else:
                kb.reindex()
        write_manifest(folder, kb)
        return kb.catalog.store.catalog_revision(old_document_id)

    return status, revise


# -- internals -----------------------------------------------------------------


def _apply_one(
    catalog: Catalog,
    event: ChangeEvent,
    on_status: StatusHook | None,
    on_revise: ReviseHook | None,
) -> EventOutcome:
    """Check one event against the live catalog, then apply it with compare-and-set."""
    store = catalog.store
    with store.transaction():  # read status and revision together
        try:
            document = store.get_document(event.document_id)
            current = store.catalog_revision(event.document_id)
        except NotFoundError:
            return _outcome(event, UNKNOWN_DOCUMENT, None, f"no document {event.document_id!r}")
        active = [d for d in store.find_documents(source_id=document.source_id) if d.status is Status.ACTIVE]
    if document.source_id != event.source_id:
        detail = f"document {event.document_id!r} belongs to source {document.source_id!r}"
        return _outcome(event, UNKNOWN_DOCUMENT, current, detail)
    if event.kind == "revise":
        problem = _revise_problem(catalog, event, document, active)
        if problem is not None:
            return _outcome(event, problem[0], current, problem[1])
    elif event.kind not in _TARGET:
        return _outcome(event, INVALID, current, f"unknown event kind {event.kind!r}")
    if event.expected_revision != current:
        detail = f"expected catalog revision {event.expected_revision}, the catalog is at {current}"
        return _outcome(event, STALE, current, detail)
    if event.kind in _TARGET and document.status is _TARGET[event.kind]:
        return _outcome(event, UNCHANGED, current, f"document is already {document.status.value}")
    try:
        if event.kind == "revise":
            assert event.new_document is not None
            revise = on_revise or _default_revise(catalog)
            revision = revise(event.document_id, event.new_document, event.expected_revision)
        else:
            set_status = on_status or _default_status(catalog)
            revision = set_status(event.document_id, _TARGET[event.kind], event.expected_revision)
    except StaleWriteError as exc:  # lost a race after the check: nothing changed
        return _refused(catalog, event, STALE, str(exc))
    except NotFoundError as exc:
        return _refused(catalog, event, UNKNOWN_DOCUMENT, str(exc))
    except ValidationError as exc:
        return _refused(catalog, event, INVALID, str(exc))
    return EventOutcome(event.event_id, True, None, revision)


def _revise_problem(
    catalog: Catalog, event: ChangeEvent, document: Document, active: list[Document]
) -> tuple[str, str] | None:
    """Why a revise cannot apply (reason, detail), or ``None`` if it may."""
    new = event.new_document
    if new is None:
        return INVALID, "a revise event needs new_document"
    if new.source_id != document.source_id:
        return INVALID, f"new_document has source {new.source_id!r}, not {document.source_id!r}"
    try:
        catalog.store.get_document(new.document_id)
    except NotFoundError:
        pass
    else:
        return DUPLICATE, f"document {new.document_id!r} is already stored"
    if document.status is not Status.ACTIVE or active[-1].document_id != document.document_id:
        detail = f"document {document.document_id!r} is {document.status.value}, not the active revision"
        return SUPERSEDED, detail
    return None


def _default_status(catalog: Catalog) -> StatusHook:
    def set_status(document_id: str, status: Status, expected: int) -> int:
        if status is Status.WITHDRAWN:
            return catalog.withdraw(document_id, expected)
        return catalog.retire(document_id, expected)

    return set_status


def _default_revise(catalog: Catalog) -> ReviseHook:
    from ..parse.chunking import chunk_for_index

    def revise(old_document_id: str, document: Document, expected: int) -> int:
        catalog.new_revision(old_document_id, document, chunk_for_index(document), expected)
        return catalog.store.catalog_revision(old_document_id)

    return revise


def _refused(catalog: Catalog, event: ChangeEvent, reason: str, detail: str) -> EventOutcome:
    """A refusal that reports the document's current catalog revision, if it exists."""
    try:
        current: int | None = catalog.store.catalog_revision(event.document_id)
    except NotFoundError:
        current = None
    return _outcome(event, reason, current, detail)


def _outcome(event: ChangeEvent, reason: str, revision: int | None, detail: str) -> EventOutcome:
    return EventOutcome(event.event_id, False, reason, revision, detail)
