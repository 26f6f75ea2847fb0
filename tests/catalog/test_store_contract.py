"""The Store contract: every implementation subclasses ``StoreContract`` and provides
``make_store``, a factory that opens the store under test (twice: the same data)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from tests.catalog.batch_reads_contract import BatchReadsContract
from tests.catalog.builders import MakeStore, make_chunks, make_doc, rich_metadata
from tests.catalog.chunk_pages_contract import ChunkPagesContract
from veracity.catalog.bulk import chunks_by_document, stored_document_ids
from veracity.catalog.memory import InMemoryStore
from veracity.catalog.sqlite import SQLiteStore
from veracity.catalog.store import NewDocument, Store
from veracity.model.contracts import Chunk, Document, Status
from veracity.model.errors import NotFoundError, StaleWriteError, ValidationError


class StoreContract(ChunkPagesContract, BatchReadsContract):
    """Behaviour every ``Store`` must have. Subclasses provide ``make_store``."""

    @pytest.fixture
    def make_store(self) -> MakeStore:
        raise NotImplementedError

    @pytest.fixture
    def store(self, make_store: MakeStore) -> Store:
        return make_store()

    @staticmethod
    def put(store: Store, document: Document) -> list[Chunk]:
        chunks = make_chunks(document)
        store.put_document(document, chunks)
        return chunks

    # -- bulk reads (veracity.catalog.bulk) ----------------------------------

    def test_bulk_reads_equal_reads_one_by_one(self, store: Store) -> None:
        documents = [make_doc(source_id=f"guide-{i}") for i in range(3)]
        for document in documents:
            self.put(store, document)
        ids = [d.document_id for d in documents]
        absent = "f" * 64
        assert stored_document_ids(store, [*ids, absent, ids[0]]) == set(ids)
        assert chunks_by_document(store, ids[::-1]) == {i: store.get_chunks(i) for i in ids}
        with pytest.raises(NotFoundError):
            chunks_by_document(store, [ids[0], absent])

    # -- many puts at once (put_documents) ------------------------------------

    def test_put_documents_stores_what_puts_one_by_one_store(self, store: Store) -> None:
        documents = [make_doc(f"guide-{i}", **rich_metadata()) for i in range(8)]  # 24 chunks: COPY
        documents += [make_doc(f"plain-{i}", tenant=f"t{i % 2}") for i in range(3)]
        assert store.put_documents([NewDocument(d, make_chunks(d)) for d in documents]) == [None] * 11
        one_by_one = InMemoryStore()
        for document in documents:
            one_by_one.put_document(document, make_chunks(document))
        assert store.find_documents() == one_by_one.find_documents()
        for document in documents:
            assert store.get_chunks(document.document_id) == make_chunks(document)
            assert store.catalog_revision(document.document_id) == 1
        assert store.put_documents([NewDocument(d, make_chunks(d)) for d in documents]) == [None] * 11
        assert store.find_documents() == one_by_one.find_documents()  # identical re-puts: no change

    def test_put_documents_reports_each_refused_put_in_its_place(self, store: Store) -> None:
        a, b, c = make_doc("a"), make_doc("b"), make_doc("c")
        a_chunks = make_chunks(a)
        naive = dataclasses.replace(b, valid_from=b.valid_from.replace(tzinfo=None))
        stolen = [dataclasses.replace(x, chunk_id=a_chunks[1].chunk_id) if x.ordinal == 1 else x
                  for x in make_chunks(c)]  # fmt: skip
        changed = dataclasses.replace(a, title="别的标题")
        errors = store.put_documents([
            NewDocument(a, a_chunks),
            NewDocument(naive, make_chunks(naive)),
            NewDocument(c, stolen),  # a chunk id the first put took, in the same call
            NewDocument(b, make_chunks(b)),
            NewDocument(a, a_chunks),  # the same document again: an identical re-put
            NewDocument(changed, make_chunks(changed)),  # the same id with another title
            NewDocument(make_doc("d", revision="2"), [], replaces="0" * 64),
        ])  # fmt: skip
        assert [type(e).__name__ if e else None for e in errors] == [
            None, "ValidationError", "ValidationError", None, None, "ValidationError", "NotFoundError",
        ]  # fmt: skip
        assert "time zone" in str(errors[1])
        assert "already belongs" in str(errors[2]) and a.document_id in str(errors[2])
        assert "title" in str(errors[5])
        assert [d.source_id for d in store.find_documents()] == ["a", "b"]
        assert store.get_document(a.document_id) == a
        assert store.get_chunk(a_chunks[1].chunk_id).document_id == a.document_id

    def test_put_documents_replaces_as_supersede_does(self, store: Store) -> None:
        old, withdrawn = make_doc("a", revision="1"), make_doc("w", revision="1")
        self.put(store, old)
        self.put(store, withdrawn)
        store.set_status(withdrawn.document_id, Status.WITHDRAWN, 1)
        new, newer = make_doc("a", revision="2"), make_doc("a", revision="3")
        next_w = make_doc("w", revision="2")
        other = make_doc("other", revision="2")
        errors = store.put_documents([
            NewDocument(new, make_chunks(new), replaces=old.document_id),
            NewDocument(newer, make_chunks(newer), replaces=new.document_id),  # put just before
            NewDocument(next_w, make_chunks(next_w), replaces=withdrawn.document_id),
            NewDocument(other, make_chunks(other), replaces=newer.document_id),  # another source
        ])  # fmt: skip
        assert errors[:3] == [None, None, None]
        assert isinstance(errors[3], ValidationError) and "source_id" in str(errors[3])
        stored = store.find_documents()
        assert {d.document_id: (d.status, store.catalog_revision(d.document_id)) for d in stored} == {
            old.document_id: (Status.RETIRED, 2),
            new.document_id: (Status.RETIRED, 2),
            newer.document_id: (Status.ACTIVE, 1),
            withdrawn.document_id: (Status.WITHDRAWN, 2),
            next_w.document_id: (Status.ACTIVE, 1),
        }
        assert [d.revision for d in store.find_documents(source_id="a")] == ["1", "2", "3"]

    def test_put_documents_in_a_rolled_back_transaction_leaves_nothing(self, store: Store) -> None:
        documents = [make_doc(f"guide-{i}") for i in range(6)]
        with pytest.raises(RuntimeError), store.transaction():
            assert store.put_documents([NewDocument(d, make_chunks(d)) for d in documents]) == [None] * 6
            raise RuntimeError("the caller fails")
        assert store.find_documents() == []

    # -- round trips ---------------------------------------------------------

    def test_is_a_store(self, store: Store) -> None:
        assert isinstance(store, Store)

    def test_document_round_trip_keeps_every_field(self, store: Store) -> None:
        document = make_doc(**rich_metadata())
        self.put(store, document)
        stored = store.get_document(document.document_id)
        assert stored == document
        assert stored.facts[1].stance == "contradicts"
        assert stored.allowed_roles == ("admin", "support")
        assert stored.valid_from.utcoffset() is not None
        assert stored.valid_from == document.valid_from
        assert store.catalog_revision(document.document_id) == 1

    def test_extra_metadata_and_defaulted_fields_round_trip(self, store: Store) -> None:
        document = make_doc(tags=["sso", "登录"], hide={"toc": True}, published=date(2026, 1, 2))
        document = replace(document, defaulted_fields=("status", "trust", "valid_from"))
        self.put(store, document)
        stored = store.get_document(document.document_id)
        assert stored == document
        assert dict(stored.extra_metadata) == {
            "hide": '{"toc":true}', "published": '"2026-01-02"', "tags": '["sso","登录"]'
        }
        with pytest.raises(ValidationError, match="extra_metadata"):
            store.put_document(replace(document, extra_metadata=()), make_chunks(document))

    def test_chunk_round_trip_sorted_by_ordinal(self, store: Store) -> None:
        document = make_doc(**rich_metadata())
        chunks = make_chunks(document)
        store.put_document(document, list(reversed(chunks)))
        assert store.get_chunks(document.document_id) == chunks
        for chunk in chunks:
            assert store.get_chunk(chunk.chunk_id) == chunk
        assert chunks[1].fact_ids == ("python-version",)
        assert store.get_chunk(chunks[1].chunk_id).heading_path == ("安装星舰",)
        bare = make_doc("bare")
        store.put_document(bare, [])
        assert store.get_chunks(bare.document_id) == []

    def test_missing_ids_raise_not_found(self, store: Store) -> None:
        missing = "0" * 64
        for call in (
            lambda: store.get_document(missing),
            lambda: store.get_chunks(missing),
            lambda: store.get_chunk(missing),
            lambda: store.catalog_revision(missing),
            lambda: store.set_status(missing, Status.WITHDRAWN, 1),
            lambda: store.delete_document(missing),
            lambda: store.supersede(missing, make_doc(), [], 1),
        ):
            with pytest.raises(NotFoundError):
                call()

    def test_find_documents_filters_and_order(self, store: Store) -> None:
        b9 = make_doc("b", "9")
        b10 = make_doc("b", "10")
        a1 = make_doc("a", "1")
        other = make_doc("c", "1", tenant="acme")
        for document in (b9, b10, other, a1):
            self.put(store, document)
        ids = [d.document_id for d in store.find_documents()]
        assert ids == [a1.document_id, b9.document_id, b10.document_id, other.document_id]
        assert [d.source_id for d in store.find_documents(tenant="acme")] == ["c"]
        assert [d.revision for d in store.find_documents(source_id="b")] == ["9", "10"]
        assert store.find_documents(tenant="acme", source_id="b") == []
        assert store.find_documents(tenant="nobody") == []

    # -- idempotent put and refused puts ------------------------------------

    def test_put_is_idempotent(self, store: Store) -> None:
        document = make_doc()
        self.put(store, document)
        self.put(store, document)
        assert store.find_documents() == [document]
        assert store.catalog_revision(document.document_id) == 1

    def test_reput_keeps_stored_status(self, store: Store) -> None:
        document = make_doc()
        self.put(store, document)
        assert store.set_status(document.document_id, Status.WITHDRAWN, 1) == 2
        self.put(store, document)  # e.g. the source is ingested again
        assert store.get_document(document.document_id).status is Status.WITHDRAWN
        assert store.catalog_revision(document.document_id) == 2

    def test_same_id_with_other_metadata_is_refused(self, store: Store) -> None:
        document = make_doc()
        self.put(store, document)
        changed = dataclasses.replace(document, title="别的标题")
        with pytest.raises(ValidationError, match="title"):
            store.put_document(changed, make_chunks(changed))
        chunks = make_chunks(document)
        with pytest.raises(ValidationError, match="chunks"):
            store.put_document(document, chunks[:1])
        assert store.get_document(document.document_id) == document
        assert store.get_chunks(document.document_id) == chunks

    @pytest.mark.parametrize(
        "breakage",
        [
            {"document_id": "f" * 64},
            {"document_digest": "f" * 64},
            {"text": "不是正文"},
            {"end": 10_000},
        ],
    )
    def test_foreign_or_inconsistent_chunk_is_refused(self, store: Store, breakage: dict) -> None:
        document = make_doc()
        chunks = make_chunks(document)
        chunks[1] = dataclasses.replace(chunks[1], **breakage)
        with pytest.raises(ValidationError):
            store.put_document(document, chunks)
        assert store.find_documents() == []

    def test_duplicate_ordinal_or_chunk_id_is_refused(self, store: Store) -> None:
        document = make_doc()
        chunks = make_chunks(document)
        with pytest.raises(ValidationError, match="ordinal"):
            store.put_document(document, [chunks[0], dataclasses.replace(chunks[1], ordinal=0)])
        with pytest.raises(ValidationError, match="twice"):
            store.put_document(document, [chunks[0], chunks[0]])
        assert store.find_documents() == []

    def test_chunk_id_of_another_document_is_refused(self, store: Store) -> None:
        first = make_doc("a")
        first_chunks = self.put(store, first)
        second = make_doc("b")
        stolen = [
            dataclasses.replace(c, chunk_id=first_chunks[0].chunk_id) if c.ordinal == 0 else c
            for c in make_chunks(second)
        ]
        with pytest.raises(ValidationError, match="already belongs"):
            store.put_document(second, stolen)
        with pytest.raises(NotFoundError):
            store.get_document(second.document_id)
        assert store.get_chunk(first_chunks[0].chunk_id).document_id == first.document_id

    def test_naive_datetime_is_refused(self, store: Store) -> None:
        document = make_doc()
        naive = dataclasses.replace(document, valid_from=document.valid_from.replace(tzinfo=None))
        with pytest.raises(ValidationError, match="time zone"):
            store.put_document(naive, make_chunks(naive))

    # -- compare-and-set -----------------------------------------------------

    def test_set_status_compare_and_set(self, store: Store) -> None:
        document = make_doc()
        self.put(store, document)
        doc_id = document.document_id
        assert store.set_status(doc_id, Status.WITHDRAWN, 1) == 2
        assert store.get_document(doc_id).status is Status.WITHDRAWN
        assert store.catalog_revision(doc_id) == 2
        assert store.set_status(doc_id, Status.ACTIVE, 2) == 3
        assert store.get_document(doc_id).status is Status.ACTIVE

    def test_stale_set_status_changes_nothing(self, store: Store) -> None:
        document = make_doc()
        self.put(store, document)
        doc_id = document.document_id
        store.set_status(doc_id, Status.RETIRED, 1)
        with pytest.raises(StaleWriteError, match="catalog revision 2"):
            store.set_status(doc_id, Status.WITHDRAWN, 1)
        assert store.get_document(doc_id).status is Status.RETIRED
        assert store.catalog_revision(doc_id) == 2

    def test_setting_the_same_status_changes_nothing(self, store: Store) -> None:
        document = make_doc()
        self.put(store, document)
        assert store.set_status(document.document_id, Status.ACTIVE, 1) == 1
        assert store.catalog_revision(document.document_id) == 1
        with pytest.raises(StaleWriteError):
            store.set_status(document.document_id, Status.ACTIVE, 7)

    # -- supersede -----------------------------------------------------------

    def test_supersede_retires_old_and_inserts_new(self, store: Store) -> None:
        old = make_doc(revision="1")
        self.put(store, old)
        new = make_doc(revision="2", body="# 安装星舰\n\n星舰 3.3 需要 Python 3.12。")
        new_chunks = make_chunks(new)
        assert store.supersede(old.document_id, new, new_chunks, 1) == 2
        assert store.get_document(old.document_id).status is Status.RETIRED
        assert store.get_document(new.document_id) == new
        assert store.get_chunks(new.document_id) == new_chunks
        assert store.catalog_revision(new.document_id) == 1
        assert [d.revision for d in store.find_documents(source_id=old.source_id)] == ["1", "2"]

    def test_stale_supersede_changes_nothing(self, store: Store) -> None:
        old = make_doc(revision="1")
        self.put(store, old)
        store.set_status(old.document_id, Status.WITHDRAWN, 1)
        store.set_status(old.document_id, Status.ACTIVE, 2)
        new = make_doc(revision="2")
        with pytest.raises(StaleWriteError):
            store.supersede(old.document_id, new, make_chunks(new), 1)
        assert store.get_document(old.document_id).status is Status.ACTIVE
        assert store.catalog_revision(old.document_id) == 3
        with pytest.raises(NotFoundError):
            store.get_document(new.document_id)

    def test_supersede_is_atomic_when_the_new_document_is_refused(self, store: Store) -> None:
        old = make_doc(revision="1")
        old_chunks = self.put(store, old)
        new = make_doc(revision="2")
        clash = [
            dataclasses.replace(c, chunk_id=old_chunks[0].chunk_id) if c.ordinal == 0 else c
            for c in make_chunks(new)
        ]
        with pytest.raises(ValidationError):
            store.supersede(old.document_id, new, clash, 1)
        assert store.get_document(old.document_id).status is Status.ACTIVE
        assert store.catalog_revision(old.document_id) == 1
        with pytest.raises(NotFoundError):
            store.get_document(new.document_id)

    def test_supersede_needs_same_source_and_a_new_id(self, store: Store) -> None:
        old = make_doc(revision="1")
        self.put(store, old)
        stranger = make_doc("another", revision="2")
        with pytest.raises(ValidationError, match="source_id"):
            store.supersede(old.document_id, stranger, make_chunks(stranger), 1)
        with pytest.raises(ValidationError, match="supersede itself"):
            store.supersede(old.document_id, old, make_chunks(old), 1)
        assert store.catalog_revision(old.document_id) == 1
        assert store.find_documents() == [old]

    def test_supersede_keeps_a_withdrawn_old_document_withdrawn(self, store: Store) -> None:
        old = make_doc(revision="1")
        self.put(store, old)
        store.set_status(old.document_id, Status.WITHDRAWN, 1)
        new = make_doc(revision="2")
        assert store.supersede(old.document_id, new, make_chunks(new), 2) == 2
        assert store.get_document(old.document_id).status is Status.WITHDRAWN

    # -- delete --------------------------------------------------------------

    def test_delete_removes_document_chunks_and_facts(self, store: Store) -> None:
        document = make_doc(**rich_metadata())
        chunks = self.put(store, document)
        keep = make_doc("other")
        self.put(store, keep)
        store.delete_document(document.document_id)
        with pytest.raises(NotFoundError):
            store.get_document(document.document_id)
        with pytest.raises(NotFoundError):
            store.get_chunks(document.document_id)
        for chunk in chunks:
            with pytest.raises(NotFoundError):
                store.get_chunk(chunk.chunk_id)
        assert store.find_documents() == [keep]
        # it can be stored again, facts and all, starting over at revision 1
        self.put(store, document)
        assert store.get_document(document.document_id) == document
        assert store.catalog_revision(document.document_id) == 1

    # -- roles ---------------------------------------------------------------

    def test_roles(self, store: Store) -> None:
        assert store.roles("starship") == frozenset()
        store.put_roles("starship", {"public", "support"})
        store.put_roles("acme", ["admin"])
        assert store.roles("starship") == frozenset({"public", "support"})
        store.put_roles("starship", ["public"])
        assert store.roles("starship") == frozenset({"public"})
        assert store.roles("acme") == frozenset({"admin"})
        store.put_roles("acme", [])
        assert store.roles("acme") == frozenset()

    @pytest.mark.parametrize("roles", [["ok", ""], "public", [" "]])
    def test_bad_role_names_are_refused(self, store: Store, roles: object) -> None:
        store.put_roles("starship", ["public"])
        with pytest.raises(ValidationError):
            store.put_roles("starship", roles)  # type: ignore[arg-type]
        assert store.roles("starship") == frozenset({"public"})

    # -- transactions --------------------------------------------------------

    def test_transaction_commits_together(self, store: Store) -> None:
        a, b = make_doc("a"), make_doc("b")
        with store.transaction():
            self.put(store, a)
            self.put(store, b)
            store.put_roles("starship", ["public"])
        assert len(store.find_documents()) == 2
        assert store.roles("starship") == frozenset({"public"})

    def test_transaction_rolls_back_everything(self, store: Store) -> None:
        a, b = make_doc("a"), make_doc("b")
        self.put(store, a)
        with pytest.raises(RuntimeError), store.transaction():
            self.put(store, b)
            store.set_status(a.document_id, Status.WITHDRAWN, 1)
            store.put_roles("starship", ["public"])
            raise RuntimeError("boom")
        assert store.find_documents() == [a]
        assert store.catalog_revision(a.document_id) == 1
        assert store.roles("starship") == frozenset()

    def test_nested_transaction_rolls_back_only_inside(self, store: Store) -> None:
        a, b = make_doc("a"), make_doc("b")
        with store.transaction():
            self.put(store, a)
            with pytest.raises(StaleWriteError), store.transaction():
                self.put(store, b)
                store.set_status(a.document_id, Status.WITHDRAWN, 5)
        assert store.find_documents() == [a]


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def make_store(self) -> MakeStore:
        return InMemoryStore


class TestSQLiteMemoryStore(StoreContract):
    @pytest.fixture
    def make_store(self) -> MakeStore:
        return lambda: SQLiteStore(":memory:")


class TestSQLiteFileStore(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Iterator[MakeStore]:
        opened: list[SQLiteStore] = []

        def make() -> SQLiteStore:
            opened.append(SQLiteStore(tmp_path / "catalog.sqlite"))
            return opened[-1]

        yield make
        for store in opened:
            store.close()

    def test_data_survives_reopening(self, make_store: MakeStore) -> None:
        document = make_doc(**rich_metadata())
        first = make_store()
        chunks = self.put(first, document)
        first.set_status(document.document_id, Status.RETIRED, 1)
        first.put_roles("starship", ["support"])
        second = make_store()
        assert second.get_document(document.document_id) == dataclasses.replace(
            document, status=Status.RETIRED
        )
        assert second.get_chunks(document.document_id) == chunks
        assert second.catalog_revision(document.document_id) == 2
        assert second.roles("starship") == frozenset({"support"})

    def test_cas_holds_across_connections(self, make_store: MakeStore) -> None:
        document = make_doc()
        first, second = make_store(), make_store()
        self.put(first, document)
        assert second.set_status(document.document_id, Status.WITHDRAWN, 1) == 2
        with pytest.raises(StaleWriteError):
            first.set_status(document.document_id, Status.RETIRED, 1)
        assert first.get_document(document.document_id).status is Status.WITHDRAWN

    def test_stored_as_inspectable_text(self, make_store: MakeStore) -> None:
        store = make_store()
        document = make_doc(**rich_metadata())
        self.put(store, document)
        assert isinstance(store, SQLiteStore)
        [(valid_from, valid_until)] = store.connection.execute(
            "SELECT valid_from, valid_until FROM documents WHERE document_id = ?",
            (document.document_id,),
        ).fetchall()
        assert valid_from == "2023-12-31T16:00:00.000000+00:00"
        assert valid_until == "2030-06-30T00:00:00.000000+00:00"
        [(heading_path, fact_ids)] = store.connection.execute(
            "SELECT heading_path, fact_ids FROM chunks WHERE ordinal = 1"
        ).fetchall()
        assert heading_path == '["安装星舰"]'
        assert fact_ids == '["python-version"]'
