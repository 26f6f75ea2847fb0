"""Named, recorded migrations of the SQLite catalog."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import apsw
import pytest

from veracity.errors import MigrationError
from veracity.store.migrations import MIGRATIONS, Migration, applied_migrations, migrate
from veracity.store.sqlite import SQLiteStore, connect

from .conftest import make_chunks, make_doc

NAMES = [
    "0001_documents",
    "0002_chunks",
    "0003_roles",
    "0004_index_documents",
    "0005_index_meta",
    "0006_index_filter_cover",
    "0007_ingestion_ledger",
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
    connection.execute(
        "CREATE VIRTUAL TABLE v USING vec0(tenant TEXT partition key, embedding float[4])"
    )
    connection.execute(
        "INSERT INTO v (rowid, tenant, embedding) VALUES (1, 'starship', '[1, 0, 0, 0]')"
    )
    row = connection.execute(
        "SELECT rowid FROM v WHERE embedding MATCH '[1, 0, 0, 0]' AND k = 1 AND tenant = ?",
        ("starship",),
    ).fetchone()
    assert row == (1,)
