"""Reading a streaming replica without reading the past.

A hot standby replays the primary's WAL a little later than the primary
wrote it. A withdraw that has returned on the primary must stop being cited
by every answer that begins afterwards, wherever it is read, so a read on a
replica first waits until the replica has replayed everything the primary
had made durable when the read began:

1. :func:`primary_position`: ``pg_current_wal_flush_lsn()`` on the primary.
   Every transaction that has returned (``synchronous_commit`` on, the
   default) has its commit record at or before it; the *insert* position is
   not used, since on an idle server it can point past the next page header,
   a position no record will ever end at (the flushed one may end inside a
   record still being written: the WAL writer flushes its rest within
   ``wal_writer_delay``);
2. :func:`wait_for_replay`: poll ``pg_last_wal_replay_lsn()`` on the replica
   until it reaches that position, then the caller takes its snapshot. A
   snapshot taken after a commit record was replayed sees that commit.

The cost is one round trip to the primary and usually one to the replica
per read block, not a read of the catalog on the primary per hit. A replica
that does not catch up within the wait raises :class:`ReplicaLagError`
(a :class:`CatalogUnavailableError`: the service denies rather than answer
from an older catalog).

**One wait per request.** A request reads in many blocks (the cache key, the
ask defaults, the answer, the citations' titles; a search one per candidate).
Inside :func:`replay_fence` (the service wraps each request in one) the first
replica read records the primary's position (:class:`ReplayFence`) and every
later read of the block waits for that same position: the primary is asked
once per request, and a replica connection that has already reached the
position in the block is not asked again (a connection stays on one server,
whose replay only moves forward while the connection lives). The guarantee is
unchanged: every write that returned before the request began is at or before
the position, and every read of the request sees it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from ...model.errors import ReplicaLagError
from .location import display_url, require_driver

__all__ = [
    "REPLICA_WAIT_S",
    "ReplayFence",
    "current_fence",
    "is_replica",
    "primary_position",
    "replay_fence",
    "replication_lag",
    "wait_for_replay",
]

REPLICA_WAIT_S: Final = 5.0
"""How long a read waits for a replica to replay the primary's position before it is refused."""

_FIRST_POLL_S: Final = 0.0005
_LAST_POLL_S: Final = 0.02


def is_replica(connection: Any) -> bool:
    """Whether the server of ``connection`` (psycopg) is in recovery: a standby replaying WAL."""
    return bool(connection.execute("SELECT pg_is_in_recovery()").fetchone()[0])


def primary_position(connection: Any) -> str:
    """The WAL position the primary of ``connection`` (psycopg) has flushed, as text (``'0/3000148'``)."""
    return str(connection.execute("SELECT pg_current_wal_flush_lsn()::text").fetchone()[0])


def wait_for_replay(connection: Any, position: str, *, timeout_s: float, where: str) -> float:
    """Wait until the replica of ``connection`` has replayed ``position``; the seconds waited.

    ``ReplicaLagError`` naming both positions after ``timeout_s``. Polls at
    0.5 ms, doubling to 20 ms: a replica on the same network replays a
    commit in about a millisecond.
    """
    start = time.monotonic()
    deadline = start + max(0.0, timeout_s)
    pause = _FIRST_POLL_S
    while True:
        replayed, caught_up = connection.execute(
            "SELECT pg_last_wal_replay_lsn()::text, coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, false)",
            (position,),
        ).fetchone()
        now = time.monotonic()
        if caught_up:
            return now - start
        if now >= deadline:
            raise ReplicaLagError(
                f"the replica {where} has replayed the WAL to {replayed}, not yet to the primary's "
                f"{position}, after {timeout_s:.1f} s; the read is refused so no withdrawn document is "
                "served. Check replication on the primary (SELECT * FROM pg_stat_replication), "
                "or read the primary"
            )
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, _LAST_POLL_S)


class ReplayFence:
    """One request's replay position per primary, and the replica connections that have reached it.

    Thread-safe: a request's helper threads (a reranker's, with the request's context) share it.
    """

    __slots__ = ("_lock", "_positions", "_reached")

    def __init__(self) -> None:
        """No position read yet."""
        self._lock = threading.Lock()
        self._positions: dict[str, str] = {}
        self._reached: dict[tuple[str, int], Any] = {}  # holding the connection: its id is not reused

    def position(self, primary: str, read: Callable[[], str]) -> str:
        """The position of ``primary`` (a URL) for this request: ``read()`` the first time only."""
        with self._lock:
            found = self._positions.get(primary)
            if found is None:
                found = self._positions[primary] = read()
            return found

    def reached(self, primary: str, replica: Any) -> bool:
        """Whether the ``replica`` connection has replayed this request's position of ``primary``."""
        with self._lock:
            return (primary, id(replica)) in self._reached

    def mark(self, primary: str, replica: Any) -> None:
        """Record that the ``replica`` connection has replayed this request's position of ``primary``."""
        with self._lock:
            self._reached[(primary, id(replica))] = replica


_FENCE: ContextVar[ReplayFence | None] = ContextVar("veracity_replay_fence", default=None)


def current_fence() -> ReplayFence | None:
    """The fence of the innermost :func:`replay_fence` block, or ``None`` (each read waits on its own)."""
    return _FENCE.get()


@contextmanager
def replay_fence() -> Iterator[ReplayFence]:
    """The reads of one request: on a replica they wait once for the primary's position (see the
    module docstring). Nested blocks keep the outer one's fence: never wrap more than one request."""
    outer = _FENCE.get()
    if outer is not None:
        yield outer
        return
    fence = ReplayFence()
    token = _FENCE.set(fence)
    try:
        yield fence
    finally:
        _FENCE.reset(token)


PROBE_TABLE: Final = "veracity_lag_probe"


def replication_lag(
    primary_url: str, replica_url: str, writes: int, *, timeout_s: float = 10.0
) -> list[float]:
    """Seconds from each of ``writes`` commits on the primary until a query on the replica sees its row.

    For benchmarks and tests: the rows go to a table of its own (``veracity_lag_probe``,
    created and dropped here) in ``primary_url``'s database, one committed row at a
    time; the replica (``replica_url``, any role that may read the table: the owner's)
    is polled without pause. ``ReplicaLagError`` when a row is not seen within ``timeout_s``.
    """
    require_driver()
    import psycopg

    lags: list[float] = []
    with (
        psycopg.connect(primary_url, autocommit=True) as primary,
        psycopg.connect(replica_url, autocommit=True) as replica,
    ):
        primary.execute(f"CREATE TABLE IF NOT EXISTS {PROBE_TABLE} (n BIGINT PRIMARY KEY)")
        try:
            _seen(replica, f"SELECT to_regclass('{PROBE_TABLE}') IS NOT NULL", (), timeout_s, replica_url)
            for n in range(writes):
                primary.execute(f"INSERT INTO {PROBE_TABLE} (n) VALUES (%s)", (n,))
                start = time.perf_counter()  # the insert's commit has returned: the write is done
                query = f"SELECT EXISTS (SELECT 1 FROM {PROBE_TABLE} WHERE n = %s)"
                _seen(replica, query, (n,), timeout_s, replica_url)
                lags.append(time.perf_counter() - start)
        finally:
            primary.execute(f"DROP TABLE IF EXISTS {PROBE_TABLE}")
    return lags


def _seen(connection: Any, query: str, params: tuple[Any, ...], timeout_s: float, url: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not connection.execute(query, params).fetchone()[0]:
        if time.monotonic() >= deadline:
            raise ReplicaLagError(f"the replica {display_url(url)} did not show a write within {timeout_s} s")
