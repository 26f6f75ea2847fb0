"""The workers' shared tables: one contract, passed by a directory's side file and by PostgreSQL.

Each test opens the tables twice on one place, as two worker processes would.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from veracity.catalog.scope import acting_for
from veracity.catalog.serving import ServingTables, in_database, open_side_file

Open = Callable[[], ServingTables]


@pytest.fixture(params=["sqlite", "postgresql"])
def open_tables(request, tmp_path) -> Iterator[Open]:
    """``open()``: the shared tables of one knowledge base, opened again on each call."""
    opened: list[Callable[[], None]] = []
    if request.param == "sqlite":

        def make() -> ServingTables:
            tables = open_side_file(tmp_path)
            assert tables is not None
            opened.append(tables.close)
            return tables

    else:
        from veracity.catalog.postgres.store import PostgresStore

        url = request.getfixturevalue("pg_url")

        def make() -> ServingTables:
            store = PostgresStore(url)
            opened.append(store.close)
            return in_database(store)

    yield make
    for close in reversed(opened):
        close()


def _file(tables: ServingTables, key: str, tenant="t", *, state=(1, 1), written=0.0, body="{}") -> None:
    tables.file_answer(key, tenant, generation=state[0], revision=state[1], written=written, body=body)


def test_an_answer_one_worker_filed_is_found_by_another_under_its_tenant_only(open_tables: Open) -> None:
    first, second = open_tables(), open_tables()
    _file(first, "k", "acme", body='{"a":1}')
    assert second.answer("k", "acme") == '{"a":1}'
    assert second.answer("k", "starship") is None  # the same key under another tenant: nothing
    assert second.answer("other", "acme") is None
    _file(second, "k", "acme", body='{"a":2}')  # filed again: replaced
    assert first.answer("k", "acme") == '{"a":2}'
    second.clear_answers()
    assert first.answer("k", "acme") is None


def test_older_states_are_forgotten_and_the_oldest_trimmed(open_tables: Open) -> None:
    first, second = open_tables(), open_tables()
    _file(first, "old-generation", state=(1, 5))
    _file(first, "old-revision", state=(2, 4))
    _file(first, "current", state=(2, 5))
    second.forget_before(2, 5)
    assert [first.answer(k, "t") for k in ("old-generation", "old-revision")] == [None, None]
    assert first.answer("current", "t") == "{}"
    for n in range(10):
        _file(second, f"n{n}", state=(2, 5), written=100.0 + n)
    first.trim(4)
    kept = [n for n in range(10) if second.answer(f"n{n}", "t") is not None]
    assert kept == [6, 7, 8, 9] and second.answer("current", "t") is None  # written at 0: oldest


def test_a_bucket_update_is_one_transaction_across_workers(open_tables: Open) -> None:
    """Updates of one key from two workers' threads never interleave: no increment is lost."""
    workers = [open_tables(), open_tables()]
    failures: list[BaseException] = []

    def increment(current: tuple[float, float] | None) -> tuple[float, float]:
        count = 0.0 if current is None else current[0]
        time.sleep(0.002)  # between the read and the write: an interleaving update would be lost
        return count + 1, time.time()

    def spend(tables: ServingTables) -> None:
        try:
            for _ in range(15):
                tables.update("key-1", increment)
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            failures.append(exc)

    threads = [threading.Thread(target=spend, args=(tables,)) for tables in workers for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
    seen: list[tuple[float, float] | None] = []
    workers[1].update("key-1", lambda current: seen.append(current) or (current or (0.0, 0.0)))
    workers[0].update("key-2", lambda current: seen.append(current) or (7.0, 1.0))
    assert seen[0] is not None and seen[0][0] == 90.0 and seen[1] is None  # 2 workers × 3 threads × 15


def test_a_failed_update_leaves_the_bucket_as_it_was(open_tables: Open) -> None:
    tables = open_tables()
    tables.update("k", lambda current: (5.0, 1.0))

    def broken(current: tuple[float, float] | None) -> tuple[float, float]:
        raise RuntimeError("refused")

    with pytest.raises(RuntimeError, match="refused"):
        tables.update("k", broken)
    seen: list[tuple[float, float] | None] = []
    open_tables().update("k", lambda current: seen.append(current) or (5.0, 1.0))
    assert seen == [(5.0, 1.0)]


def test_the_reader_role_reads_only_the_tenant_it_acts_for(pg_url, pg_reader) -> None:
    """Row-level security on the cached answers: another tenant's row is invisible even
    when asked for by its exact key and tenant; the reader role cannot write the tables."""
    import psycopg

    from veracity.catalog.postgres.store import PostgresStore

    owner = PostgresStore(pg_url)
    reader_url = pg_reader(pg_url)
    scoped = PostgresStore(pg_url, reader_url=reader_url)
    try:
        _file(in_database(owner), "k", "acme", body="secret")
        tables = in_database(scoped)
        with acting_for("acme"):
            assert tables.answer("k", "acme") == "secret"
        with acting_for("starship"):
            assert tables.answer("k", "acme") is None
        with psycopg.connect(reader_url) as reader, pytest.raises(psycopg.errors.InsufficientPrivilege):
            reader.execute("INSERT INTO serving_answers VALUES ('x', 'acme', 1, 1, 0, 'forged')")
        with psycopg.connect(reader_url) as reader, pytest.raises(psycopg.errors.InsufficientPrivilege):
            reader.execute("SELECT * FROM serving_buckets")
    finally:
        scoped.close()
        owner.close()
