"""pg0010_document_tenant_keys: a catalog written under pg0001's tenant trigger migrates unchanged.

The earlier schema is recreated from a current catalog by SQL (the trigger that copied the
document's tenant into every chunk, role and fact row; foreign keys on ``document_id`` alone),
the migration's record removed, and ``migrate`` run again.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.catalog.builders import make_chunks, make_doc, rich_metadata
from veracity.catalog.postgres.migrations import OWNED_TABLES, migrate
from veracity.catalog.postgres.store import PostgresStore
from veracity.model.contracts import Status

NAME = "pg0010_document_tenant_keys"


def _to_trigger_schema(raw: psycopg.Connection) -> None:
    raw.execute(
        "CREATE FUNCTION veracity_document_tenant() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "NEW.doc_tenant := (SELECT tenant FROM documents WHERE document_id = NEW.document_id); "
        "RETURN NEW; END $$"
    )
    for table in OWNED_TABLES:
        raw.execute(
            f"ALTER TABLE {table} DROP CONSTRAINT {table}_document_tenant_fkey, "
            "ALTER COLUMN doc_tenant SET DEFAULT '', "
            "ADD FOREIGN KEY (document_id) REFERENCES documents (document_id) ON DELETE CASCADE"
        )
        raw.execute(
            f"CREATE TRIGGER {table}_tenant BEFORE INSERT ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION veracity_document_tenant()"
        )
    raw.execute("ALTER TABLE documents DROP CONSTRAINT documents_document_tenant")
    raw.execute("DELETE FROM _migrations WHERE name = %s", (NAME,))


def _owned_rows(raw: psycopg.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {
        table: raw.execute(f"SELECT * FROM {table} ORDER BY document_id, ordinal").fetchall()
        for table in OWNED_TABLES
    }


def test_a_catalog_of_the_trigger_schema_migrates_with_its_rows_unchanged(pg_url: str) -> None:
    documents = [make_doc("a", **rich_metadata()), make_doc("b", tenant="acme"), make_doc("c", tenant="beta")]
    store = PostgresStore(pg_url, pool_size=2)
    for document in documents:
        store.put_document(document, make_chunks(document))
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as raw:
        before = _owned_rows(raw)
        tenants = raw.execute("SELECT DISTINCT doc_tenant FROM chunks ORDER BY 1").fetchall()
        assert tenants == [("acme",), ("beta",), ("starship",)]
        with raw.transaction():
            _to_trigger_schema(raw)
            # nothing held a row's tenant after its insert: one that drifted is set back
            raw.execute("UPDATE document_facts SET doc_tenant = 'drifted'")
        assert migrate(raw) == [NAME]
        assert _owned_rows(raw) == before
        assert raw.execute(
            "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal "
            "AND tgrelid::regclass::text = ANY(%s)", (list(OWNED_TABLES),)
        ).fetchone() == (0,)  # fmt: skip
        keys = raw.execute(
            "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE contype = 'f' AND conrelid::regclass::text = ANY(%s) ORDER BY 1", (list(OWNED_TABLES),)
        ).fetchall()  # fmt: skip
        assert [table for table, _ in keys] == sorted(OWNED_TABLES)  # one foreign key each
        wanted = "(document_id, doc_tenant) REFERENCES documents(document_id, tenant)"
        assert all(wanted in definition for _, definition in keys)
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            raw.execute(
                "INSERT INTO document_roles (document_id, ordinal, role, doc_tenant) "
                "VALUES (%s, 9, 'x', 'acme')",
                (documents[0].document_id,),
            )
    store = PostgresStore(pg_url, pool_size=2)
    try:
        assert [d.source_id for d in store.find_documents()] == ["a", "b", "c"]
        assert store.get_chunks(documents[0].document_id) == make_chunks(documents[0])
        new = make_doc("a", revision="2", **rich_metadata())
        store.supersede(documents[0].document_id, new, make_chunks(new), 1)
        assert store.get_document(documents[0].document_id).status is Status.RETIRED
        store.delete_document(documents[1].document_id)  # its rows go with it (the key cascades)
        count = store.connection.execute("SELECT count(*) FROM chunks WHERE document_id = ?",
                                         (documents[1].document_id,)).fetchone()  # fmt: skip
        assert count == (0,)
    finally:
        store.close()
