"""A streaming read replica of the embedded server: how far behind it is, and what waiting for it costs.

What it does (an embedded primary and a replica of it, each in a temporary folder,
both stopped at the end):

1. **replica lag**: ``--writes`` single-row commits on the primary, one at a time; for
   each, the ms from the commit's return until a query on the replica sees the row
   (:func:`veracity.catalog.postgres.replay.replication_lag`): p50 / p95 / max;
2. **a read's wait**: ``--reads`` read blocks of a store whose reads go to the replica
   (each first asks the primary for its WAL position and waits for the replica to
   replay it) against the same blocks read on the primary through the same route
   (no wait): p50 / p95 ms of one ``SELECT 1`` block each, idle and then while a
   writer commits on the primary without pause.

    python benchmarks/bench_replica.py --writes 50 --reads 200

Prints measured numbers only. The machine may be shared: load averages are printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from typing import Any

from veracity.catalog.postgres import store as store_module
from veracity.catalog.postgres.replay import replication_lag
from veracity.catalog.postgres.server import create_database, start_replica, start_server, stop_server
from veracity.catalog.postgres.store import PostgresStore
from veracity.catalog.scope import acting_for


def percentiles(seconds: list[float]) -> str:
    ms = sorted(1000 * s for s in seconds)
    p50 = ms[len(ms) // 2]
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return f"p50 {p50:7.2f} ms   p95 {p95:7.2f} ms   max {ms[-1]:7.2f} ms"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def read_blocks(store: PostgresStore, reads: int) -> list[float]:
    times = []
    for _ in range(reads):
        start = time.perf_counter()
        with acting_for("bench"), store.read():
            store.connection.execute("SELECT 1")
        times.append(time.perf_counter() - start)
    return times


def writing(url: str, stop: threading.Event) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS bench_writes (n BIGINT)")
        n = 0
        while not stop.is_set():
            connection.execute("INSERT INTO bench_writes (n) VALUES (%s)", (n,))
            n += 1


ASKER = "bench_asker"


def question(i: int) -> str:
    return f"What is the door code of locker {4000 + i}?"


def knowledge_base(url: str, documents: int) -> str:
    """``documents`` one-paragraph documents of tenant ``bench`` in ``url`` and a reader role; the
    operator key."""
    import psycopg

    from veracity.index.embedders import FakeEmbedder
    from veracity.kb.keys import create_key
    from veracity.kb.local import open_local

    sources = tempfile.mkdtemp(prefix="bench-lockers-")
    for i in range(documents):
        with open(os.path.join(sources, f"locker-{i:03d}.md"), "w", encoding="utf-8") as handle:
            handle.write(
                f"---\nvalid_from: 2026-01-01T00:00:00Z\n---\n\n# Locker {4000 + i}\n\n"
                f"Locker {4000 + i} belongs to the finance team. "
                f"The door code of locker {4000 + i} is {7000 + 3 * i}.\n"
            )
    kb = open_local(url, embedder=FakeEmbedder())
    try:
        kb.ingest(sources, tenant="bench", roles=("public",))
        key = create_key(kb, tenant="bench", roles=("public",), operator=True, name="bench").secret
    finally:
        kb.close()
        shutil.rmtree(sources, ignore_errors=True)  # the catalog holds what was read
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {ASKER} LOGIN IN ROLE veracity_reader")
    return key


class Waits:
    """Counts the primary's position reads and the replica polls (what a read on a replica waits)."""

    def __init__(self) -> None:
        self.positions = 0
        self.polls = 0
        self._position = store_module.primary_position
        self._wait = store_module.wait_for_replay

    def __enter__(self) -> Waits:
        def position(connection: Any) -> str:
            self.positions += 1
            return self._position(connection)

        def wait(connection: Any, position_: str, **options: Any) -> float:
            self.polls += 1
            return self._wait(connection, position_, **options)

        store_module.primary_position = position  # type: ignore[assignment]
        store_module.wait_for_replay = wait  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        store_module.primary_position = self._position  # type: ignore[assignment]
        store_module.wait_for_replay = self._wait  # type: ignore[assignment]


def gateway_requests(url: str, reader_url: str, key: str, asks: int, first: int) -> dict[str, Any]:
    """``asks`` asks and searches through a gateway reading ``reader_url``: times and waits each."""
    from veracity.service.core.gateway import Gateway

    os.environ["VERACITY_READER_URL"] = reader_url
    gateway = Gateway.open(url, embedder="fake")
    try:
        caller = gateway.admit(key)
        gateway.ask(caller, question(first))  # warm: the index, the pools
        gateway.search(caller, question(first))
        result: dict[str, Any] = {}
        for kind in ("ask", "search"):
            times = []
            with Waits() as waits:
                for i in range(asks):
                    start = time.perf_counter()
                    if kind == "ask":
                        served = gateway.ask(caller, question(first + 1 + i))  # a miss: its own question
                        assert served.cache == "miss" and not served.degraded, served.degraded
                    else:
                        gateway.search(caller, question(first + 1 + i))
                    times.append(time.perf_counter() - start)
            result[kind] = (times, waits.positions / asks, waits.polls / asks)
        return result
    finally:
        gateway.close()
        del os.environ["VERACITY_READER_URL"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=50, help="commits timed on their way to the replica")
    parser.add_argument("--reads", type=int, default=200, help="read blocks timed on each route")
    parser.add_argument("--asks", type=int, default=100, help="asks (and searches) timed on each route")
    args = parser.parse_args(argv)

    primary = start_server(tempfile.mkdtemp(prefix="bench-primary-"))
    replica = None
    stores: list[Any] = []
    try:
        create_database(primary, "bench")
        url = primary.url("bench")
        PostgresStore(url, pool_size=1).close()  # the schema, before the copy
        key = knowledge_base(url, 2 * args.asks + 2) if args.asks > 0 else ""
        start = time.perf_counter()
        replica = start_replica(primary.data_dir, tempfile.mkdtemp(prefix="bench-replica-"))
        seconds = time.perf_counter() - start
        print(f"replica started (base backup + start) in {seconds:.1f} s   (load {load()})")
        lags = replication_lag(url, replica.url("bench"), args.writes)
        print(f"replica lag, commit on the primary -> visible on the replica, {len(lags)} writes: "
              f"{percentiles(lags)}")  # fmt: skip
        on_replica = PostgresStore(url, reader_url=replica.url("bench"), pool_size=2)
        on_primary = PostgresStore(url, reader_url=url, pool_size=2)
        stores += [on_replica, on_primary]
        assert on_replica.reads_replica and not on_primary.reads_replica
        for label, busy in (("idle primary", False), ("primary writing", True)):
            stop = threading.Event()
            writer = threading.Thread(target=writing, args=(url, stop), daemon=True)
            if busy:
                writer.start()
                time.sleep(0.2)
            try:
                for route, store in (("replica (waits)", on_replica), ("primary", on_primary)):
                    read_blocks(store, 5)  # warm the pools
                    times = read_blocks(store, args.reads)
                    print(f"read block, {label:15s}, {route:15s}: {percentiles(times)}   (load {load()})")
            finally:
                stop.set()
                if busy:
                    writer.join()
        if args.asks > 0:
            for route, reader, first in (
                ("replica (waits)", replica.url("bench", user=ASKER), 0),
                ("primary", primary.url("bench", user=ASKER), args.asks + 1),
            ):
                for kind, (times, positions, polls) in gateway_requests(
                    url, reader, key, args.asks, first
                ).items():
                    print(
                        f"{kind:6s} (gateway), {route:15s}: {percentiles(times)}   primary positions "
                        f"{positions:.1f} / request, replica polls {polls:.1f} / request   (load {load()})"
                    )
    finally:
        for store in stores:
            store.close()
        if replica is not None:
            stop_server(replica, remove=True)
        stop_server(primary, remove=True)


if __name__ == "__main__":
    main()
