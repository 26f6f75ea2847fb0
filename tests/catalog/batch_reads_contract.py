"""Reads of many by id in the Store contract (a mixin of ``StoreContract``, so every store runs
it): ``get_documents``, ``catalog_revisions`` and ``get_chunks_by_id`` give what the reads one by
one give, and ``Catalog.resolve_many`` what ``resolve`` gives for each document."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.catalog.builders import make_chunks, make_doc, rich_metadata
from veracity.catalog.catalog import Catalog
from veracity.catalog.store import Store
from veracity.model.contracts import Document, Principal, Status

ABSENT = "f" * 64
NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _stored(store: Store) -> list[Document]:
    """Four documents of two tenants (roles, facts, none of either), one withdrawn, one retired."""
    documents = [
        make_doc("plain"),
        make_doc("rich", **rich_metadata()),
        make_doc("other", tenant="acme"),
        make_doc("pulled", version_max="3.1"),
    ]
    for document in documents:
        store.put_document(document, make_chunks(document))
    store.set_status(documents[3].document_id, Status.WITHDRAWN, 1)
    store.set_status(documents[1].document_id, Status.RETIRED, 1)
    store.set_status(documents[1].document_id, Status.ACTIVE, 2)
    return documents


class BatchReadsContract:
    """Many at once equals one by one; absent ids are left out; no ids read nothing."""

    def test_get_documents_equals_get_document(self, store: Store) -> None:
        documents = _stored(store)
        ids = [d.document_id for d in documents]
        found = store.get_documents([*ids, ABSENT, ids[0]])
        assert found == {i: store.get_document(i) for i in ids}
        assert found[ids[1]] == documents[1]  # roles and facts in their order
        assert found[ids[1]].allowed_roles and len(found[ids[1]].facts) == 2
        assert found[ids[3]].status is Status.WITHDRAWN  # the stored status, not the one put
        assert store.get_documents([ABSENT]) == {} and store.get_documents([]) == {}

    def test_catalog_revisions_equal_catalog_revision(self, store: Store) -> None:
        ids = [d.document_id for d in _stored(store)]
        assert store.catalog_revisions([ABSENT, *ids]) == {i: store.catalog_revision(i) for i in ids}
        assert [store.catalog_revisions(ids)[i] for i in ids] == [1, 3, 1, 2]
        assert store.catalog_revisions([]) == {}

    def test_get_chunks_by_id_equals_get_chunk(self, store: Store) -> None:
        documents = _stored(store)
        chunk_ids = [c.chunk_id for d in documents for c in make_chunks(d)]
        found = store.get_chunks_by_id([ABSENT, *chunk_ids[::-1]])
        assert found == {i: store.get_chunk(i) for i in chunk_ids}
        store.delete_document(documents[0].document_id)
        gone = {c.chunk_id for c in make_chunks(documents[0])}
        assert set(store.get_chunks_by_id(chunk_ids)) == set(chunk_ids) - gone
        assert store.get_chunks_by_id([]) == {}

    def test_reads_inside_a_transaction_see_its_writes(self, store: Store) -> None:
        document = make_doc()
        with store.transaction():
            store.put_document(document, make_chunks(document))
            store.set_status(document.document_id, Status.RETIRED, 1)
            assert store.get_documents([document.document_id])[document.document_id].status is Status.RETIRED
            assert store.catalog_revisions([document.document_id]) == {document.document_id: 2}
            assert len(store.get_chunks_by_id([c.chunk_id for c in make_chunks(document)])) == 3

    @pytest.mark.parametrize(
        ("principal", "version"),
        [
            (Principal.of("starship", "public"), "3.2"),
            (Principal.of("starship", "support"), None),
            (Principal.of("starship", "intruder"), "3.2"),  # a role the tenant does not define
            (Principal.of("acme", "public"), "3.0"),
            (Principal.of("", "public"), None),
        ],
    )
    def test_resolve_many_equals_resolve_of_each(
        self, store: Store, principal: Principal, version: str | None
    ) -> None:
        catalog = Catalog(store)
        catalog.define_roles("starship", {"public", "support"})
        catalog.define_roles("acme", {"public"})
        ids = [d.document_id for d in _stored(store)]
        asked = [ABSENT, *ids, ids[2]]
        resolved = catalog.resolve_many(asked, principal, version, NOW)
        assert list(resolved) == [ABSENT, *ids]
        assert resolved == {i: catalog.resolve(i, principal, version, NOW) for i in asked}
        assert catalog.resolve_many([], principal, version, NOW) == {}
