"""An ingest writes with a SQLite catalog's bulk settings (a larger page cache, rarer WAL
checkpoints) and puts the connection's own settings back when it ends, checkpointed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ingest.test_fingerprints import folder_of
from veracity.catalog.sqlite import BULK_CACHE_KIB, BULK_WAL_PAGES, SQLiteStore
from veracity.index.embedders import FakeEmbedder
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb


def settings(store: SQLiteStore) -> tuple[int, int]:
    connection = store.connection
    cache = connection.execute("PRAGMA cache_size").fetchall()[0][0]
    pages = connection.execute("PRAGMA wal_autocheckpoint").fetchall()[0][0]
    return cache, pages


def write_rows(store: SQLiteStore) -> None:
    with store.transaction():
        store.connection.execute("CREATE TABLE written (value TEXT)")
        store.connection.executemany("INSERT INTO written VALUES (?)", [("x" * 500,)] * 200)


def test_bulk_writes_sets_then_restores_and_checkpoints(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "catalog.sqlite")
    store.connection.execute("PRAGMA wal_autocheckpoint = 10")  # the rows below take more pages
    before = settings(store)
    assert before != (-BULK_CACHE_KIB, BULK_WAL_PAGES)
    with store.bulk_writes():
        assert settings(store) == (-BULK_CACHE_KIB, BULK_WAL_PAGES)
        write_rows(store)
    assert settings(store) == before
    # checkpointed at the end: the rows' pages are in the database file, not only in the WAL
    assert (tmp_path / "catalog.sqlite").stat().st_size > 200 * 500
    store.close()


def test_a_wal_within_the_restored_setting_is_left_as_it_was(tmp_path: Path) -> None:
    # as without the bulk settings: a small WAL is not copied into the database file at the end
    # (on a nearly full disk that copy is what fails: tests/kb/test_storage_faults.py)
    store = SQLiteStore(tmp_path / "catalog.sqlite")
    size = (tmp_path / "catalog.sqlite").stat().st_size
    with store.bulk_writes():
        write_rows(store)
    assert (tmp_path / "catalog.sqlite").stat().st_size == size
    assert (tmp_path / "catalog.sqlite-wal").stat().st_size > 200 * 500
    store.close()


def test_bulk_writes_restores_after_a_failure(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "catalog.sqlite")
    before = settings(store)
    with pytest.raises(RuntimeError), store.bulk_writes():
        raise RuntimeError("the ingest failed")
    assert settings(store) == before
    store.close()


def test_an_ingest_uses_the_bulk_settings_and_restores_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = create_kb(tmp_path / "kb", embedder=FakeEmbedder())
    store = kb.catalog.store
    assert isinstance(store, SQLiteStore)
    before = settings(store)
    seen: list[tuple[int, int]] = []
    real = SQLiteStore.transaction

    def watching(self: SQLiteStore):  # the settings each transaction of the ingest writes with
        seen.append(settings(self))
        return real(self)

    monkeypatch.setattr(SQLiteStore, "transaction", watching)
    report = ingest_paths(kb, [folder_of(tmp_path)])
    assert len(report.added) == 4
    assert seen and set(seen) == {(-BULK_CACHE_KIB, BULK_WAL_PAGES)}
    assert settings(store) == before
