"""The Store contract on PostgreSQL, plus what a shared server adds (reopening, other connections)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from tests.catalog.builders import MakeStore, make_doc, rich_metadata
from tests.catalog.test_store_contract import StoreContract
from veracity.catalog.postgres.store import PostgresStore
from veracity.model.contracts import Status
from veracity.model.errors import NewerFormatError, StaleWriteError, WriterBusyError


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def make_store(self, pg_url: str) -> Iterator[MakeStore]:
        opened: list[PostgresStore] = []

        def make() -> PostgresStore:
            opened.append(PostgresStore(pg_url, pool_size=2))
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

    def test_stored_as_inspectable_text_with_the_tenant_on_every_row(self, make_store: MakeStore) -> None:
        store = make_store()
        document = make_doc(**rich_metadata())
        self.put(store, document)
        [(valid_from, tenant)] = store.connection.execute(
            "SELECT valid_from, tenant FROM documents WHERE document_id = ?", (document.document_id,)
        ).fetchall()
        assert valid_from == "2023-12-31T16:00:00.000000+00:00"
        for table in ("chunks", "document_roles", "document_facts"):
            tenants = {row[0] for row in store.connection.execute(f"SELECT doc_tenant FROM {table}")}
            assert tenants == {tenant}, table

    def test_a_row_of_a_document_names_its_tenant_or_is_refused(self, make_store: MakeStore) -> None:
        import psycopg

        store = make_store()
        document = make_doc(**rich_metadata())
        self.put(store, document)
        insert = "INSERT INTO document_roles (document_id, ordinal, role{}) VALUES (?, 9, 'x'{})"
        with pytest.raises(psycopg.errors.ForeignKeyViolation):  # another tenant than its document's
            store.connection.execute(insert.format(", doc_tenant", ", 'acme'"), (document.document_id,))
        with pytest.raises(psycopg.errors.NotNullViolation):  # none: a writer must name it
            store.connection.execute(insert.format("", ""), (document.document_id,))
        named = (document.document_id, document.tenant)
        store.connection.execute(insert.format(", doc_tenant", ", ?"), named)
        triggers = store.connection.execute(
            "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal "
            "AND tgrelid::regclass::text IN ('chunks', 'document_roles', 'document_facts')"
        ).fetchone()
        assert triggers == (0,)  # no per-row lookup: the writer names the tenant

    def test_a_second_writer_is_told_who_holds_the_lock(self, make_store: MakeStore) -> None:
        first, second = make_store(), make_store()
        second.writer_wait = False
        with first.writer("ingest"):
            holder = second.current_writer()
            assert holder is not None and holder.command == "ingest"
            with pytest.raises(WriterBusyError, match="ingest"):
                second.put_roles("starship", ["support"])
        second.put_roles("starship", ["support"])  # released with the block
        assert second.current_writer() is None

    def test_a_newer_schema_is_refused(self, make_store: MakeStore) -> None:
        store = make_store()
        store.connection.execute(
            "INSERT INTO _migrations (name, applied_at) VALUES ('pg9999_future', '2099-01-01')"
        )
        with pytest.raises(NewerFormatError, match="pg9999_future"):
            make_store()
