"""Named, recorded migrations of the SQLite catalog."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import apsw
import pytest

from tests.catalog.builders import make_chunks, make_doc
from veracity.catalog.migrations import MIGRATIONS, Migration, applied_migrations, migrate
from veracity.catalog.sqlite import SQLiteStore, connect
from veracity.model.errors import MigrationError

NAMES = [
    "0001_documents",
    "0002_chunks",
    "0003_roles",
    "0004_index_documents",
    "0005_index_meta",
    "0006_index_filter_cover",
    "0007_ingestion_ledger",
    "0008_chunk_pages",
    "0009_index_versions",
    "0010_document_extra_metadata",
    "0011_knowledge_base",
    "0012_ledger_lifecycle_states",
    "0013_api_keys",
    "0014_catalog_revision",
    "0015_chunk_layout",
    "0016_injection_verdicts",
    "0017_sync_sources",
    "0018_source_fingerprints",
]


def test_fresh_database_records_named_migrations(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "catalog.sqlite")
    rows = store.connection.execute("SELECT name, applied_at FROM _migrations").fetchall()
    assert [name for name, _ in rows] == NAMES == [m.name for m in MIGRATIONS]
    for _, applied_at in rows:
        assert datetime.fromisoformat(str(applied_at)).utcoffset() is not None
    store.close()


def test_reopening_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    first = SQLiteStore(path)
    document = make_doc()
    first.put_document(document, make_chunks(document))
    before = first.connection.execute("SELECT name, applied_at FROM _migrations").fetchall()
    first.close()
    second = SQLiteStore(path)
    after = second.connection.execute("SELECT name, applied_at FROM _migrations").fetchall()
    assert after == before
    assert migrate(second.connection) == []
    assert second.get_document(document.document_id) == document
    second.close()


def test_chunks_stored_before_pages_existed_have_none(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    connection = connect(path)
    migrate(connection, [m for m in MIGRATIONS if m.name < "0008_chunk_pages"])
    document = make_doc()
    chunk = dataclasses.replace(make_chunks(document)[1], page_start=None, page_end=None)
    connection.execute(
        "INSERT INTO documents (document_id, source_id, revision, content_digest, title, source_type, "
        "tenant, valid_from, status, visibility, trust, language, body, stored_at, updated_at) "
        "VALUES (?, ?, '1', ?, 'T', 'document', 'starship', '2024-01-01', 'active', 'public', "
        "'official', 'zh', ?, '2024-01-01', '2024-01-01')",
        (document.document_id, document.source_id, document.content_digest, document.body),
    )
    connection.execute(
        'INSERT INTO chunks (chunk_id, document_id, document_digest, ordinal, heading_path, kind, "start", '
        '"end", text, context_prefix, fact_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        (
            chunk.chunk_id, chunk.document_id, chunk.document_digest, chunk.ordinal,
            json.dumps(list(chunk.heading_path)), chunk.kind.value, chunk.start, chunk.end,
            chunk.text, chunk.context_prefix, json.dumps(list(chunk.fact_ids)),
        ),
    )  # fmt: skip
    connection.close()
    store = SQLiteStore(path)
    assert "0008_chunk_pages" in applied_migrations(store.connection)
    assert store.get_chunks(document.document_id) == [chunk]
    # the columns refuse impossible pages even when a writer bypasses the store's checks
    for pages in ((0, 1), (3, 2)):
        with pytest.raises(apsw.ConstraintError):
            store.connection.execute("UPDATE chunks SET page_start = ?, page_end = ?", pages)
    store.close()


def test_migrate_twice_on_one_connection() -> None:
    connection = connect(":memory:")
    assert migrate(connection) == NAMES
    assert migrate(connection) == []
    assert applied_migrations(connection) == NAMES


def test_unknown_recorded_migration_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    SQLiteStore(path).close()
    connection = connect(path)
    connection.execute(
        "INSERT INTO _migrations (name, applied_at) VALUES ('9999_from_the_future', '2099-01-01')"
    )
    connection.close()
    with pytest.raises(MigrationError, match="9999_from_the_future"):
        SQLiteStore(path)


def test_new_migration_is_applied_on_upgrade() -> None:
    connection = connect(":memory:")
    migrate(connection)
    upgraded = (*MIGRATIONS, Migration("0004_notes", "CREATE TABLE notes (text TEXT)"))
    assert migrate(connection, upgraded) == ["0004_notes"]
    assert applied_migrations(connection) == [*NAMES, "0004_notes"]
    # the older code now refuses the upgraded database
    with pytest.raises(MigrationError, match="0004_notes"):
        migrate(connection)


def test_failed_migration_leaves_nothing_behind() -> None:
    connection = connect(":memory:")
    broken = (
        *MIGRATIONS,
        Migration("0004_half", "CREATE TABLE half (a TEXT); CREATE TABLE half (b TEXT)"),
    )
    with pytest.raises(MigrationError, match="0004_half"):
        migrate(connection, broken)
    assert applied_migrations(connection) == []
    tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert tables == []
    assert not connection.in_transaction


def test_duplicate_migration_names_are_refused() -> None:
    with pytest.raises(MigrationError, match="unique"):
        migrate(connect(":memory:"), (*MIGRATIONS, MIGRATIONS[0]))


def test_connect_settings(tmp_path: Path) -> None:
    connection = connect(tmp_path / "c.sqlite")
    assert connection.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    assert connection.execute("PRAGMA foreign_keys").fetchall()[0][0] == 1
    assert str(connection.execute("SELECT vec_version()").fetchall()[0][0]).startswith("v")
    memory = connect(":memory:")
    assert memory.execute("PRAGMA foreign_keys").fetchall()[0][0] == 1
    with pytest.raises(apsw.Error):  # extension loading is switched off again
        memory.load_extension("nonexistent")


def test_vec0_tables_can_be_created() -> None:
    connection = connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE v USING vec0(tenant TEXT partition key, embedding float[4])")
    connection.execute("INSERT INTO v (rowid, tenant, embedding) VALUES (1, 'starship', '[1, 0, 0, 0]')")
    row = connection.execute(
        "SELECT rowid FROM v WHERE embedding MATCH '[1, 0, 0, 0]' AND k = 1 AND tenant = ?",
        ("starship",),
    ).fetchone()
    assert row == (1,)


def test_the_index_before_versions_becomes_published_version_one() -> None:
    from veracity.catalog.migrations import connect
    from veracity.index.sqlite.fts import create_fts_table, read_postings
    from veracity.index.sqlite.tables import IndexTables, create_index_tables, index_schema
    from veracity.index.sqlite.versions import list_versions, read_pointer

    connection = connect(":memory:")
    before = [m for m in MIGRATIONS if m.name < "0009_index_versions"]
    migrate(connection, before)
    legacy_fts = "fts_" + "0" * 16  # the name the index used before versions
    create_fts_table(connection, legacy_fts)
    connection.execute(
        "INSERT INTO index_documents (doc_key, document_id, tenant, status, visibility, valid_from, record) "
        "VALUES (1, 'd1', 'acme', 'active', 'public', '2026-01-01T00:00:00.000000Z', '{}')"
    )
    connection.execute(
        "INSERT INTO index_tenants (tenant_key, tenant, fts_table) VALUES (1, 'acme', ?)", (legacy_fts,)
    )
    connection.execute(
        "INSERT INTO index_chunks (chunk_key, chunk_id, doc_key, tenant_key, ordinal, n_tokens, record) "
        "VALUES (1, 'c1', 1, 1, 0, 2, '{}')"
    )
    connection.execute(f"INSERT INTO {legacy_fts} (rowid, body) VALUES (1, 'saml 登录')")
    connection.execute("UPDATE index_meta SET value = '7' WHERE key = 'generation'")

    assert migrate(connection) == [name for name in NAMES if name >= "0009_index_versions"]
    assert read_pointer(connection) == (1, 7)
    assert [(v.version, v.state) for v in list_versions(connection)] == [(1, "published")]
    assert connection.execute("SELECT chunk_id FROM ix1_chunks").fetchall() == [("c1",)]
    assert [p.keys.tolist() for p in read_postings(connection, legacy_fts, ["saml"])] == [[1]]
    connection.execute("DELETE FROM ix1_documents WHERE doc_key = 1")  # foreign keys followed the rename
    assert connection.execute("SELECT count(*) FROM ix1_chunks").fetchone() == (0,)
    # the migrated version has exactly the schema every new version gets
    create_index_tables(connection, IndexTables(2))
    assert len(index_schema(connection, IndexTables(1))) == 10  # 6 tables, 4 indexes
    assert index_schema(connection, IndexTables(1)) == index_schema(connection, IndexTables(2))


def test_ledger_rows_survive_the_state_migration_and_new_states_are_accepted() -> None:
    connection = connect(":memory:")
    migrate(connection, [m for m in MIGRATIONS if m.name < "0012_ledger_lifecycle_states"])
    insert = (
        "INSERT INTO ingestion_steps (run_id, source, source_id, state, at) VALUES ('r', 'a.md', 'a', ?, '')"
    )
    connection.execute(insert, ("active",))
    assert migrate(connection) == [name for name in NAMES if name >= "0012_ledger_lifecycle_states"]
    rows = connection.execute("SELECT seq, source, state FROM ingestion_steps").fetchall()
    assert rows == [(1, "a.md", "active")]
    connection.execute(insert, ("deleted",))
    assert connection.execute("SELECT max(seq) FROM ingestion_steps").fetchone() == (2,)


def test_documents_stored_before_extra_metadata_read_back_without_it(tmp_path: Path) -> None:
    from tests.catalog.builders import make_doc

    path = tmp_path / "catalog.sqlite"
    connection = connect(path)
    migrate(connection, [m for m in MIGRATIONS if m.name < "0010_document_extra_metadata"])
    document = make_doc()
    connection.execute(
        "INSERT INTO documents (document_id, source_id, revision, content_digest, title, source_type, "
        "tenant, valid_from, status, visibility, trust, language, body, stored_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', 'public', 'official', 'zh', ?, 't', 't')",
        (document.document_id, document.source_id, document.revision, document.content_digest, document.title,
         document.source_type, document.tenant, "2023-12-31T16:00:00.000000+00:00", document.body),
    )  # fmt: skip
    connection.close()
    store = SQLiteStore(path)
    stored = store.get_document(document.document_id)
    assert (stored.extra_metadata, stored.defaulted_fields) == ((), ())
    assert stored == document
    store.close()
