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
import tempfile
import threading
import time
from typing import Any

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=50, help="commits timed on their way to the replica")
    parser.add_argument("--reads", type=int, default=200, help="read blocks timed on each route")
    args = parser.parse_args(argv)

    primary = start_server(tempfile.mkdtemp(prefix="bench-primary-"))
    replica = None
    stores: list[Any] = []
    try:
        create_database(primary, "bench")
        url = primary.url("bench")
        PostgresStore(url, pool_size=1).close()  # the schema, before the copy
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
    finally:
        for store in stores:
            store.close()
        if replica is not None:
            stop_server(replica, remove=True)
        stop_server(primary, remove=True)


if __name__ == "__main__":
    main()
