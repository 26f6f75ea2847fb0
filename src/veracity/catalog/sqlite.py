"""``SQLiteStore``: the embedded catalog, one SQLite file opened through apsw.

Schema comes from named migrations (:mod:`veracity.catalog.migrations`).
Datetimes are stored as ISO-8601 UTC text with microseconds (so they sort as
text); tuples as JSON arrays. Only bound parameters reach SQL. A re-entrant
lock serializes the calls of one store; writes hold the file's writer lock
(:mod:`veracity.catalog.lock`) and take SQLite's write lock up front (``BEGIN
IMMEDIATE``), so compare-and-set holds across processes too; reads take a WAL
snapshot and never wait for a writer.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Final

import apsw

from .batch_reads import BatchReads
from .faults import on_read_only_media, read_only_error, storage_faults
from .lock import OnWait, Wait, WriterInfo, current_writer, hold_writer, lock_path
from .migrations import connect, migrate, pending_migrations
from .queries import CatalogQueries
from .verdicts import VerdictQueries

__all__ = ["BULK_CACHE_KIB", "BULK_WAL_PAGES", "SQLiteStore", "connect"]

BULK_CACHE_KIB: Final = 65_536
"""Page cache of the connection during :meth:`SQLiteStore.bulk_writes`, in KiB (SQLite's default is
2 MiB). An ingest of 100k chunks updates B-trees (chunks, documents, the index's rows, the FTS
segments) far larger than 2 MiB, and each page evicted between two transactions is read again."""

BULK_WAL_PAGES: Final = 10_000
"""WAL pages between two automatic checkpoints during :meth:`SQLiteStore.bulk_writes` (SQLite's
default is 1,000). A checkpoint copies every page changed since the last one into the database
file; the same index pages change in every transaction of an ingest, so checkpointing ten times
less often writes each of them fewer times. The WAL file grows to about 40 MB meanwhile."""


class SQLiteStore(CatalogQueries, VerdictQueries, BatchReads):
    """A ``Store`` in one SQLite database; see :class:`veracity.catalog.store.Store` for the semantics.

    Writes hold the file's writer lock (:mod:`veracity.catalog.lock`); ``writer_wait``
    and ``on_wait`` say how a write waits for another writer. Reads (``read``)
    take a WAL snapshot and never wait for one. Storage faults (disk full,
    read-only, permission denied, a damaged file) surface as
    :class:`~veracity.model.errors.StorageError` naming the file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        writer_wait: Wait = True,
        on_wait: OnWait | None = None,
    ) -> None:
        """Open (or create) the catalog at ``path`` and bring its schema up to date.

        Migrating holds the writer lock; an up-to-date database is opened without it.
        """
        self.path = os.fspath(path)
        self.lock_file = lock_path(self.path)
        self.writer_wait: Wait = writer_wait
        self.on_wait = on_wait
        self._lock = threading.RLock()
        self.read_only = False
        with storage_faults(self.path):
            try:
                self._conn = connect(path)
            except apsw.CantOpenError:
                if not on_read_only_media(self.path):
                    raise
                self._conn = connect(path, immutable=True)  # readers still read; writes say read-only
                self.read_only = True
        try:
            with storage_faults(self.path, self._conn):
                if pending_migrations(self._conn):
                    with self.writer("migrate"):
                        migrate(self._conn)
        except BaseException:
            self._conn.close()
            raise

    @property
    def connection(self) -> apsw.Connection:
        """The underlying apsw connection (for derived indexes living in the same file)."""
        return self._conn

    def current_writer(self) -> WriterInfo | None:
        """Who holds this file's writer lock now, if anyone (read without taking it)."""
        return current_writer(self.lock_file)

    def close(self) -> None:
        """Close the connection; the store is unusable afterwards."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """Settings for a long run of write transactions on this connection (an ingest), put back
        when it ends: a page cache of :data:`BULK_CACHE_KIB` and a checkpoint every
        :data:`BULK_WAL_PAGES` WAL pages; then, when the WAL has grown past the restored
        setting, one checkpoint that waits for no reader.

        Durability is unchanged (each transaction still commits to the WAL); only when its pages
        reach the database file changes. Measured in ``benchmarks/bench_hybrid_100k.py``."""
        with self._lock:
            cache, pages = self._pragma_int("cache_size"), self._pragma_int("wal_autocheckpoint")
            self._conn.execute(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {BULK_WAL_PAGES}")
        try:
            yield
        finally:
            with self._lock:
                self._conn.execute(f"PRAGMA cache_size = {cache}")
                self._conn.execute(f"PRAGMA wal_autocheckpoint = {pages}")
                if not self._conn.in_transaction and not self.read_only and self._wal_pages() > pages:
                    # what the next commit would do under the restored setting; a small WAL stays as
                    # it would have (its pages go to the database file at the next checkpoint, which
                    # on a full disk is the one that fails); a checkpoint that fails loses nothing
                    with suppress(apsw.Error):
                        self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _wal_pages(self) -> int:
        """Pages the WAL file has room for (its header is 32 bytes, each frame 24 and a page)."""
        try:
            size = os.path.getsize(self.path + "-wal")
        except OSError:
            return 0
        return max(0, (size - 32) // (self._pragma_int("page_size") + 24))

    def _pragma_int(self, name: str) -> int:
        value = self._conn.execute(f"PRAGMA {name}").fetchall()[0][0]
        return value if isinstance(value, int) else int(str(value))

    # -- transactions --------------------------------------------------------

    @contextmanager
    def writer(self, command: str = "write", *, wait: Wait | None = None) -> Iterator[None]:
        """Hold this file's writer lock for a whole operation (re-entrant; see :mod:`veracity.catalog.lock`).

        ``command`` is what other writers are told they wait for; ``wait``
        overrides ``writer_wait`` for this call.
        """
        if self.read_only:
            raise read_only_error(self.path, "opened read-only from a read-only file system")
        lock = hold_writer(
            self.lock_file, command, wait=self.writer_wait if wait is None else wait, on_wait=self.on_wait
        )
        with storage_faults(self.lock_file or self.path):  # the lock file may not be creatable
            lock.__enter__()
        try:
            yield
        finally:
            lock.__exit__(None, None, None)  # releasing does not look at the block's exception

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """See :meth:`veracity.catalog.store.Store.transaction`; the outermost block holds the lock.

        It holds the writer lock too, then SQLite's write lock (``BEGIN
        IMMEDIATE``). A storage fault rolls the whole transaction back and is
        raised as a ``StorageError``, never as an error about a savepoint.
        """
        with self._lock:
            if self._conn.in_transaction:
                yield from self._savepoint()
                return
            with self.writer(), storage_faults(self.path, self._conn):
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:  # SQLite may have rolled back already
                        self._conn.execute("ROLLBACK")
                    raise

    def _savepoint(self) -> Iterator[None]:
        """A nested block: a savepoint, rolled back alone if the block raises."""
        self._depth = getattr(self, "_depth", 0) + 1
        name = f"veracity_{self._depth}"
        try:
            self._conn.execute(f"SAVEPOINT {name}")
            try:
                yield
            except BaseException:
                # After a disk-full or I/O error SQLite has already rolled the whole transaction
                # back and the savepoint is gone: the original error is the one to report.
                if self._conn.in_transaction:
                    try:
                        self._conn.execute(f"ROLLBACK TO {name}")
                        self._conn.execute(f"RELEASE {name}")
                    except apsw.Error:
                        pass
                raise
            self._conn.execute(f"RELEASE {name}")
        finally:
            self._depth -= 1

    @contextmanager
    def read(self) -> Iterator[None]:
        """A consistent read snapshot (deferred; never takes or waits for a write lock); nests.

        Everything read in the block comes from one WAL snapshot: a writer that
        commits meanwhile is seen by the next ``read``, never half-way.
        """
        with self._lock:
            if self._conn.in_transaction:
                yield
                return
            with storage_faults(self.path, self._conn):
                self._conn.execute("BEGIN DEFERRED")
                try:
                    yield
                finally:
                    if self._conn.in_transaction:
                        self._conn.execute("COMMIT")

    def check_integrity(self) -> list[str]:
        """Problems ``PRAGMA integrity_check`` finds in the file (empty when it is sound)."""
        with self.read(), storage_faults(self.path, self._conn):
            rows = self._conn.execute("PRAGMA integrity_check").fetchall()
        found = [str(row[0]) for row in rows]
        return [] if found == ["ok"] else found
