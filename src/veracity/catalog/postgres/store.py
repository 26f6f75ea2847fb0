"""``PostgresStore``: the catalog in a PostgreSQL database, through a psycopg 3 connection pool.

The same semantics as :class:`~veracity.catalog.sqlite.SQLiteStore` (see
:class:`~veracity.catalog.store.Store`) and the same code for documents, statuses and
roles (:class:`~veracity.catalog.queries.CatalogQueries`, through
:class:`~.connection.PgConnection`) and the injection verdicts
(:class:`~veracity.catalog.verdicts.VerdictQueries`) and reads of many by id
(:class:`~veracity.catalog.batch_reads.BatchReads`); what is PostgreSQL's own is how it holds them:

- a *transaction* binds one pooled connection to the calling thread (``BEGIN``
  … ``COMMIT``; nested blocks are savepoints) and holds the writer lock;
- a *read* binds one to a ``REPEATABLE READ`` transaction: one snapshot, never
  waiting for a writer. When a tenant scope is set (:func:`~veracity.catalog.scope.acting_for`)
  it sets ``veracity.tenant`` for that transaction, and with a ``reader_url``
  it reads as that role, so row-level security holds even where a query forgot
  its ``WHERE tenant = …``. When ``reader_url`` names a streaming replica, such a read
  first waits until the replica has replayed what the primary had flushed when the
  read (or the request: :func:`.replay.replay_fence`) began (:mod:`.replay`), so a
  withdraw that has returned is never read past. A reader that cannot be reached
  raises :class:`~veracity.model.errors.ReplicaUnavailableError` (a catalog that is
  unavailable: the service denies), never a driver error;
- the *writer lock* is a session advisory lock on a connection of its own:
  shared by every process on every machine that writes this database, and
  released by the server when its holder's connection dies (``kill -9``
  included). ``writer_holder`` says who holds it.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from ...model.errors import CatalogUnavailableError, ReplicaUnavailableError, WriterBusyError
from ..batch_reads import BatchReads
from ..lock import POLL_SECONDS, OnWait, Wait, WriterInfo
from ..queries import CatalogQueries
from ..rows import now_text
from ..scope import current_tenant
from ..verdicts import VerdictQueries
from .connection import PgConnection, make_pool
from .location import display_url
from .migrations import TENANT_SETTING, migrate, pending_migrations
from .replay import REPLICA_WAIT_S, current_fence, is_replica, primary_position, wait_for_replay

__all__ = ["WRITER_LOCK", "PostgresStore"]

WRITER_LOCK: Final = 7_303_011_002
"""Advisory lock key of the writer lock (one knowledge base per database)."""

RECHECK_WAIT_S: Final = 0.1
"""How long a read waits for a reader connection while the reader failed less than
``replica_wait_s`` ago: a replica that is down denies at once, not after the whole wait each time."""


class _Bound(threading.local):
    """The calling thread's connection for its transaction or read block, and how deep it is."""

    connection: Any = None
    depth: int = 0
    release: Any = None
    snapshot: object | None = None


class PostgresStore(CatalogQueries, VerdictQueries, BatchReads):
    """A ``Store`` in a PostgreSQL database; see :class:`veracity.catalog.store.Store` for the semantics."""

    read_only = False

    def __init__(
        self,
        url: str,
        *,
        reader_url: str | None = None,
        writer_wait: Wait = True,
        on_wait: OnWait | None = None,
        pool_size: int | None = None,
        replica_wait_s: float = REPLICA_WAIT_S,
    ) -> None:
        """Connect to ``url`` (the owner's role: writes, migrations) and bring the schema up to date.

        ``reader_url``, when given, is a role without ``BYPASSRLS`` that tenant-scoped reads use,
        on the primary or on a streaming replica of it (then each such read waits at most
        ``replica_wait_s`` for the replica to catch up; see :mod:`.replay`).
        ``pool_size``: each role's pool at most (default: see :func:`.connection.pool_size`).
        """
        self.url = url
        self.path = display_url(url)  # what messages name; never the password
        self.writer_wait: Wait = writer_wait
        self.on_wait = on_wait
        self._pool = make_pool(url, max_size=pool_size)
        self.replica_wait_s = replica_wait_s
        self._reader_path = display_url(reader_url) if reader_url else ""
        self.reads_replica = False
        """True when tenant-scoped reads go to a streaming replica (each waits for its replay first)."""
        self._reader_pool: Any = None
        self._reader_failed = -float("inf")  # time.monotonic() of the reader's last failure
        self._bound = _Bound()
        self._writer_lock = threading.Condition(threading.RLock())
        self._writer_owner: int | None = None
        self._writer_depth = 0
        self._writer_connection: Any = None
        self.connection = PgConnection(lambda: self._bound.connection, self._pool.connection)
        try:
            if reader_url:
                self._open_reader(reader_url, pool_size)
            with self._pool.connection() as raw:
                if pending_migrations(PgConnection(lambda: raw, self._pool.connection)):
                    with self.writer("migrate"):
                        migrate(raw)
        except BaseException:
            self.close()
            raise

    @property
    def scoped_reads(self) -> bool:
        """True when tenant-scoped reads go through the reader role (row-level security applies)."""
        return self._reader_pool is not None

    def _open_reader(self, reader_url: str, pool_size: int | None) -> None:
        """Whether the reader reads a replica, then its pool; ``ReplicaUnavailableError`` at once
        (with the driver's reason) when it cannot be reached, not after the pool's 30 s of retries."""
        import psycopg

        try:
            timeout = max(2, round(self.replica_wait_s))  # libpq's least connect_timeout
            with psycopg.connect(reader_url, autocommit=True, connect_timeout=timeout) as reader:
                self.reads_replica = is_replica(reader)
        except psycopg.OperationalError as exc:
            raise self._reader_unreachable(exc) from exc
        try:
            self._reader_pool = make_pool(reader_url, max_size=pool_size)
        except CatalogUnavailableError as exc:
            raise self._reader_unreachable(exc.__cause__ or exc) from exc

    def _reader_unreachable(self, cause: BaseException) -> ReplicaUnavailableError:
        """The error of a read whose reader (``reader_url``) cannot be reached, naming it and why."""
        self._reader_failed = time.monotonic()
        known_primary = self._reader_pool is not None and not self.reads_replica  # a reader role's
        what = "the reader database" if known_primary else "the read replica"
        reason = " ".join(str(cause).split()) or type(cause).__name__
        return ReplicaUnavailableError(
            f"{what} {self._reader_path} (--read-url, VERACITY_READER_URL) is unreachable: reads for "
            "callers are refused rather than served without it. Start it again (veracity pg replica "
            "PRIMARY_DIR REPLICA_DIR for the embedded one), or serve without --read-url to read the "
            f"primary. The driver said: {reason}"
        )

    def close(self) -> None:
        """Close every pooled connection; the store is unusable afterwards."""
        if self._writer_connection is not None:
            self._writer_connection.close()
            self._writer_connection = None
        for pool in (self._pool, self._reader_pool):
            if pool is not None:
                pool.close()

    # -- the writer lock -------------------------------------------------------------------

    def current_writer(self) -> WriterInfo | None:
        """Who holds the writer lock now, if anyone (read without taking it)."""
        if self.connection.execute("SELECT to_regclass('writer_holder') IS NULL").fetchall()[0][0]:
            return None
        row = self.connection.execute(
            "SELECT h.pid, h.command, h.since, h.host FROM writer_holder AS h WHERE h.id = 1 AND EXISTS "
            "(SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND objid = ? AND classid = ?)",
            (WRITER_LOCK & 0xFFFFFFFF, WRITER_LOCK >> 32),
        ).fetchone()
        return WriterInfo(int(row[0]), str(row[1]), str(row[2]), str(row[3])) if row else None

    @contextmanager
    def writer(self, command: str = "write", *, wait: Wait | None = None) -> Iterator[None]:
        """Hold the database's writer lock for a whole operation (re-entrant within a thread)."""
        me = threading.get_ident()
        with self._writer_lock:
            if self._writer_owner == me:
                self._writer_depth += 1
                acquired_here = False
            else:
                while self._writer_owner is not None:  # another thread of this process writes
                    self._writer_lock.wait()
                self._acquire(command, self.writer_wait if wait is None else wait)
                self._writer_owner, self._writer_depth = me, 1
                acquired_here = True
        try:
            yield
        finally:
            with self._writer_lock:
                self._writer_depth -= 1
                if self._writer_depth == 0 and (acquired_here or self._writer_owner == me):
                    self._release()
                    self._writer_owner = None
                    self._writer_lock.notify_all()

    def _acquire(self, command: str, wait: Wait) -> None:
        import psycopg

        connection = psycopg.connect(self.url, autocommit=True, application_name="veracity-writer")
        deadline = None if wait is True else time.monotonic() + (0.0 if wait is False else float(wait))
        told = False
        try:
            while not connection.execute("SELECT pg_try_advisory_lock(%s)", (WRITER_LOCK,)).fetchall()[0][0]:
                holder = self.current_writer()
                if deadline is not None and time.monotonic() >= deadline:
                    who = f" ({holder.describe()})" if holder else ""
                    raise WriterBusyError(
                        f"another writer holds the knowledge base in {self.path!r}{who}",
                        holder=holder.describe() if holder else None,
                    )
                if not told and self.on_wait is not None:
                    self.on_wait(holder)
                told = True
                time.sleep(POLL_SECONDS * 4)
            self._record_holder(connection, command)
        except BaseException:
            connection.close()
            raise
        self._writer_connection = connection

    @staticmethod
    def _record_holder(connection: Any, command: str) -> None:
        import psycopg

        try:
            connection.execute(
                "INSERT INTO writer_holder (id, pid, host, command, since) VALUES (1, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, "
                "command = EXCLUDED.command, since = EXCLUDED.since",
                (os.getpid(), socket.gethostname(), command, now_text().replace("+00:00", "Z")),
            )
        except psycopg.errors.UndefinedTable:
            pass  # a database being migrated for the first time has no such table yet

    def _release(self) -> None:
        connection, self._writer_connection = self._writer_connection, None
        if connection is not None:
            try:  # unlock first: the server ends a closed session asynchronously, a moment later
                connection.execute("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK,))
            except Exception:  # closing ends the session (and the lock) in any case
                pass
            connection.close()

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """See :meth:`veracity.catalog.store.Store.transaction`; the outermost block holds the writer lock."""
        bound = self._bound
        if bound.connection is not None:
            bound.depth += 1
            try:
                with bound.connection.transaction():  # a savepoint inside the open transaction
                    yield
            finally:
                bound.depth -= 1
            return
        with self.writer(), self._pool.connection() as raw:
            bound.connection, bound.depth = raw, 1
            try:
                with raw.transaction():
                    yield
            finally:
                bound.connection, bound.depth = None, 0

    @contextmanager
    def read(self) -> Iterator[None]:
        """One ``REPEATABLE READ`` snapshot for the block (nests); tenant-scoped when a scope is set."""
        bound = self._bound
        if bound.connection is not None:
            yield
            return
        tenant = current_tenant()
        bound.snapshot = object()
        try:
            if self._reader_pool is None or tenant is None:
                with self._pool.connection() as raw:
                    self._begin(raw, tenant)
                    bound.connection = raw
                    try:
                        yield
                    finally:
                        bound.connection = None
                        raw.execute("COMMIT")
                return
            with self._reader_block(tenant):
                yield
        finally:
            bound.snapshot = None

    @property
    def snapshot_token(self) -> object | None:
        """An object unique to the calling thread's read block, whose snapshot no read can see
        change (so what it read once, such as the index pointer, may be kept for the block);
        ``None`` outside one, and inside a write transaction."""
        return self._bound.snapshot

    @staticmethod
    def _begin(raw: Any, tenant: str | None) -> None:
        raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        if tenant is not None:
            raw.execute("SELECT set_config(%s, %s, true)", (TENANT_SETTING, tenant))

    @contextmanager
    def _reader_block(self, tenant: str) -> Iterator[None]:
        """A read block on the reader's connection, after the replica caught up; the reader's
        connection failures (a replica down) as ``ReplicaUnavailableError``."""
        import psycopg

        pool, bound = self._reader_pool, self._bound
        raw = self._reader_begin(tenant)
        bound.connection = raw
        try:
            yield
        except psycopg.OperationalError as exc:
            if raw.broken:  # the reader's own connection failed (another pool's error stays itself)
                raise self._reader_unreachable(exc) from exc
            raise
        finally:
            bound.connection = None
            try:
                if not raw.broken:
                    raw.execute("COMMIT")
            except psycopg.OperationalError as exc:
                raise self._reader_unreachable(exc) from exc
            finally:
                pool.putconn(raw)  # a broken connection is discarded, and replaced in the background

    def _reader_begin(self, tenant: str) -> Any:
        """A reader connection in its snapshot (on a replica, taken after it caught up).

        A pooled connection that fails before anything is read (the replica was restarted:
        every idle connection is dead) is tried once more after the pool dropped the dead
        ones; a replica that is down fails within ``replica_wait_s``, not the pool's 30 s.
        """
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = self._reader_pool
        for attempt in (1, 2):
            try:
                raw = pool.getconn(timeout=self._reader_timeout())
            except PoolTimeout as exc:
                raise self._reader_unreachable(exc) from exc
            try:
                if self.reads_replica:
                    self._catch_up(raw)  # before the snapshot, which then holds every returned write
                self._begin(raw, tenant)
                return raw
            except psycopg.OperationalError as exc:
                broken = raw.broken
                pool.putconn(raw)
                if not broken:
                    raise
                if attempt == 2:
                    raise self._reader_unreachable(exc) from exc
                pool.check()  # drop the other dead connections before the second try
            except BaseException:
                pool.putconn(raw)
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _reader_timeout(self) -> float | None:
        """How long to wait for a reader connection: on a replica ``replica_wait_s``, or only
        :data:`RECHECK_WAIT_S` while its last failure is that recent; else the pool's own."""
        if not self.reads_replica:
            return None
        recent = time.monotonic() - self._reader_failed < self.replica_wait_s
        return RECHECK_WAIT_S if recent else self.replica_wait_s

    def check_reader(self) -> None:
        """``ReplicaUnavailableError`` unless the reader (``reader_url``) answers now; nothing without one."""
        if self._reader_pool is None:
            return
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._reader_pool.connection(timeout=self._reader_timeout()) as raw:
                raw.execute("SELECT 1")
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise self._reader_unreachable(exc) from exc

    def _catch_up(self, replica: Any) -> None:
        """Wait until ``replica`` has replayed what the primary has flushed now, or inside a
        :func:`.replay.replay_fence` what it had flushed at the request's first replica read."""
        fence = current_fence()
        if fence is None:
            position = self._primary_position()
        elif fence.reached(self.url, replica):
            return
        else:
            position = fence.position(self.url, self._primary_position)
        wait_for_replay(replica, position, timeout_s=self.replica_wait_s, where=self._reader_path)
        if fence is not None:
            fence.mark(self.url, replica)

    def _primary_position(self) -> str:
        """The primary's flushed WAL position (see :mod:`.replay`)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as primary:
                return primary_position(primary)
        except (psycopg.Error, PoolTimeout) as exc:
            raise CatalogUnavailableError(f"cannot reach the primary {self.path}: {exc}") from exc

    def check_integrity(self) -> list[str]:
        """Problems found in the catalog (PostgreSQL checks its own pages; this checks the schema)."""
        pending = pending_migrations(self.connection)
        return [f"migrations not applied: {pending}"] if pending else []
