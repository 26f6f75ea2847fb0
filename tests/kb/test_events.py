"""Ordered change events: compare-and-set, duplicates and late events are refused and reported."""

from __future__ import annotations

from veracity.catalog.catalog import Catalog
from veracity.catalog.demo import demo_catalog
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import init_demo_kb, open_kb
from veracity.kb.events import ChangeEvent, EventOutcome, apply_events, kb_hooks
from veracity.model.contracts import Document, Status
from veracity.parse.documents import make_document, metadata_of

SOURCE = "faq-3.2-sso"


def revised(document: Document, revision: str, extra: str = "") -> Document:
    """The next revision of ``document``: same source, new revision label, active."""
    metadata = {**metadata_of(document), "revision": revision, "status": "active"}
    return make_document(metadata, document.body + extra)


def revise(event_id: str, old: Document, expected: int, new: Document) -> ChangeEvent:
    return ChangeEvent(event_id, "revise", old.source_id, old.document_id, expected, new)


def status_event(event_id: str, kind: str, doc: Document, expected: int) -> ChangeEvent:
    return ChangeEvent(event_id, kind, doc.source_id, doc.document_id, expected)  # type: ignore[arg-type]


def snapshot(catalog: Catalog) -> list[tuple[str, Status, int]]:
    return [
        (d.document_id, d.status, catalog.store.catalog_revision(d.document_id)) for d in catalog.documents()
    ]


def test_in_order_events_apply_and_revisions_increment() -> None:
    catalog = demo_catalog()
    v1 = catalog.document(SOURCE)
    v2 = revised(v1, "2", "\n\nUpdated.")
    outcomes = apply_events(
        catalog,
        [revise("e1", v1, 1, v2), status_event("e2", "withdraw", v2, 1), status_event("e3", "retire", v2, 2)],
    )
    assert outcomes == [
        EventOutcome("e1", True, None, 2),
        EventOutcome("e2", True, None, 2),
        EventOutcome("e3", True, None, 3),
    ]
    assert catalog.store.get_document(v1.document_id).status is Status.RETIRED
    assert catalog.store.get_document(v2.document_id).status is Status.RETIRED
    assert catalog.chunks(v2.document_id)  # the new revision was stored with its chunks


def test_replayed_event_is_refused_as_duplicate() -> None:
    catalog = demo_catalog()
    doc = catalog.document(SOURCE)
    event = status_event("e1", "withdraw", doc, 1)
    first, again = apply_events(catalog, [event, event])
    assert first.applied and first.catalog_revision == 2
    assert (again.applied, again.reason, again.catalog_revision) == (False, "duplicate", 2)
    seen: set[str] = set()
    apply_events(catalog, [status_event("e9", "retire", doc, 2)], seen=seen)
    before = snapshot(catalog)
    [later] = apply_events(catalog, [status_event("e9", "retire", doc, 3)], seen=seen)
    assert later.reason == "duplicate" and snapshot(catalog) == before


def test_out_of_order_event_is_refused_and_changes_nothing() -> None:
    catalog = demo_catalog()
    doc = catalog.document(SOURCE)
    [moved] = apply_events(catalog, [status_event("e1", "retire", doc, 1)])
    assert moved.catalog_revision == 2
    before = catalog.documents()
    revisions = snapshot(catalog)
    [late] = apply_events(catalog, [status_event("e0", "withdraw", doc, 1)])
    assert (late.applied, late.reason, late.catalog_revision) == (False, "stale", 2)
    assert catalog.documents() == before and snapshot(catalog) == revisions


def test_late_revise_against_retired_revision_is_refused() -> None:
    catalog = demo_catalog()
    v1 = catalog.document(SOURCE)
    v2, v2b = revised(v1, "2", "\n\nSecond."), revised(v1, "2b", "\n\nLate.")
    [ok] = apply_events(catalog, [revise("e1", v1, 1, v2)])
    assert ok.applied
    before = snapshot(catalog)
    stale, current = apply_events(catalog, [revise("e0", v1, 1, v2b), revise("e0b", v1, 2, v2b)])
    assert (stale.applied, stale.reason) == (False, "superseded")
    assert (current.applied, current.reason) == (False, "superseded")
    assert snapshot(catalog) == before
    assert catalog.document(SOURCE).document_id == v2.document_id
    assert v2b.document_id not in {d.document_id for d in catalog.documents()}


def test_withdraw_then_old_revise_never_reactivates() -> None:
    catalog = demo_catalog()
    v1 = catalog.document(SOURCE)
    v2 = revised(v1, "2", "\n\nFixed.")
    withdrawn, late = apply_events(catalog, [status_event("w", "withdraw", v1, 1), revise("r", v1, 1, v2)])
    assert withdrawn.applied and (late.applied, late.reason) == (False, "superseded")
    [again] = apply_events(catalog, [revise("r2", v1, 2, v2)])  # even with the current revision
    assert (again.applied, again.reason) == (False, "superseded")
    assert not any(d.source_id == SOURCE and d.status is Status.ACTIVE for d in catalog.documents())
    assert catalog.document(SOURCE).status is Status.WITHDRAWN


def test_revise_with_an_already_stored_document_is_a_duplicate() -> None:
    catalog = demo_catalog()
    old = next(d for d in catalog.documents() if d.source_id == "faq-2.8-sso")  # retired
    current = catalog.document("faq-2.8-sso")
    assert old.status is Status.RETIRED
    [outcome] = apply_events(catalog, [revise("r", current, 1, old)])
    assert outcome.reason == "duplicate" and catalog.document("faq-2.8-sso").status is Status.RETIRED


def test_unknown_and_malformed_events_are_reported_not_raised() -> None:
    catalog = demo_catalog()
    doc = catalog.document(SOURCE)
    before = snapshot(catalog)
    other = catalog.document("plans-3.2")
    outcomes = apply_events(
        catalog,
        [
            ChangeEvent("u1", "withdraw", "nope", "0" * 64, 1),
            ChangeEvent("u2", "retire", "plans-3.2", doc.document_id, 1),  # wrong source
            ChangeEvent("u3", "revise", SOURCE, doc.document_id, 1),  # no new document
            ChangeEvent("u4", "revise", SOURCE, doc.document_id, 1, other),  # another source
            ChangeEvent("u5", "purge", SOURCE, doc.document_id, 1),  # type: ignore[arg-type]
            status_event("u6", "withdraw", catalog.document("draft-member-removal"), 1),
        ],
    )
    assert [(o.applied, o.reason) for o in outcomes] == [
        (False, "unknown document"),
        (False, "unknown document"),
        (False, "invalid"),
        (False, "invalid"),
        (False, "invalid"),
        (False, "unchanged"),
    ]
    assert outcomes[0].catalog_revision is None and all(o.detail for o in outcomes)
    assert snapshot(catalog) == before


def test_kb_hooks_change_catalog_and_index_together(tmp_path) -> None:
    folder = tmp_path / "kb"
    init_demo_kb(folder, FakeEmbedder()).catalog.store.close()
    kb = open_kb(folder, FakeEmbedder())
    status, revise_hook = kb_hooks(kb, folder)
    v1 = kb.catalog.document(SOURCE)
    v2 = revised(v1, "2", "\n\nRevised on disk.")
    outcomes = apply_events(
        kb.catalog,
        [
            revise("e1", v1, 1, v2),
            status_event("e2", "withdraw", v1, 1),
            status_event("e3", "withdraw", v2, 1),
        ],
        on_status=status,
        on_revise=revise_hook,
    )
    assert [(o.applied, o.reason) for o in outcomes] == [(True, None), (False, "stale"), (True, None)]
    reopened = open_kb(folder, FakeEmbedder())
    assert reopened.catalog.document(SOURCE).document_id == v2.document_id
    assert reopened.catalog.document(SOURCE).status is Status.WITHDRAWN
    assert reopened.snapshot is not None and reopened.snapshot.stats().documents == len(
        reopened.catalog.documents()
    )
    index = reopened.snapshot
    assert index.documents[v1.document_id].status is Status.RETIRED
    assert index.documents[v2.document_id].status is Status.WITHDRAWN
    assert index.chunks_by_document[v2.document_id] == tuple(
        c.chunk_id for c in reopened.catalog.chunks(v2.document_id)
    )
    settled = index.sync(reopened.catalog, reopened.embedder)  # the hooks left nothing for a full sync
    assert (settled.added_documents, settled.updated_documents, settled.removed_documents) == (0, 0, 0)
