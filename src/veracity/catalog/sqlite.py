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

import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import apsw

from ..model.contracts import Chunk, Document, Status
from ..model.errors import StaleWriteError, ValidationError
from .faults import on_read_only_media, read_only_error, storage_faults
from .lock import OnWait, Wait, WriterInfo, current_writer, hold_writer, lock_path
from .migrations import connect, migrate, pending_migrations
from .queries import CatalogQueries
from .rows import insert_document, select_documents
from .store import check_put, check_successor, iter_unique, same_content

__all__ = ["SQLiteStore", "connect"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class SQLiteStore(CatalogQueries):
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

    # -- injection verdicts (veracity.pipeline.injection) ---------------------

    def stored_signals(self, key: str) -> tuple[str, ...] | None:
        """The signals stored under ``key``, or ``None``."""
        with self.read():
            sql = "SELECT signals FROM injection_verdicts WHERE key = ?"
            row = self._conn.execute(sql, (key,)).fetchone()
        return None if row is None else tuple(json.loads(row[0]))

    def store_signals(self, verdicts: Sequence[tuple[str, tuple[str, ...]]]) -> None:
        """Keep each ``(key, signals)`` (a key already stored keeps its verdict: the key fixes it)."""
        if not verdicts:
            return
        rows = [(key, json.dumps(list(signals))) for key, signals in verdicts]
        with self.transaction():
            self._conn.executemany("INSERT OR IGNORE INTO injection_verdicts VALUES (?, ?)", rows)

    def delete_signals(self, keys: Sequence[str]) -> None:
        """Forget the verdicts under ``keys`` (a deleted document's: digests of its text)."""
        with self.transaction():
            self._conn.executemany("DELETE FROM injection_verdicts WHERE key = ?", [(key,) for key in keys])

    def stored_verdict_keys(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` have a stored verdict."""
        found: set[str] = set()
        with self.read():
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                sql = f"SELECT key FROM injection_verdicts WHERE key IN ({marks})"
                found.update(str(row[0]) for row in self._conn.execute(sql, tuple(part)))
        return found

    # -- documents -----------------------------------------------------------

    def put_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """See :meth:`veracity.catalog.store.Store.put_document`."""
        with self.transaction():
            if self._check_new(document, chunks):
                self._insert(document, chunks)

    def supersede(
        self,
        old_document_id: str,
        new_document: Document,
        new_chunks: Sequence[Chunk],
        expected_catalog_revision: int,
    ) -> int:
        """See :meth:`veracity.catalog.store.Store.supersede`."""
        with self.transaction():
            status, revision = self._cas(old_document_id, expected_catalog_revision)
            old = self._select_documents("document_id = ?", (old_document_id,))[0]
            check_successor(old, new_document)
            target = Status.RETIRED if status is Status.ACTIVE else status
            revision = self._apply_status(old_document_id, status, revision, target)
            if self._check_new(new_document, new_chunks):
                self._insert(new_document, new_chunks)
            return revision

    # -- roles ---------------------------------------------------------------

    def put_roles(self, tenant: str, roles: frozenset[str] | set[str] | Sequence[str]) -> None:
        """See :meth:`veracity.catalog.store.Store.put_roles`."""
        names = list(iter_unique(roles, tenant=tenant))
        with self.transaction():
            self._conn.execute("DELETE FROM tenant_roles WHERE tenant = ?", (tenant,))
            self._conn.executemany(
                "INSERT INTO tenant_roles (tenant, role) VALUES (?, ?)",
                [(tenant, role) for role in names],
            )

    def roles(self, tenant: str) -> frozenset[str]:
        """See :meth:`veracity.catalog.store.Store.roles`."""
        with self.read():
            rows = self._conn.execute("SELECT role FROM tenant_roles WHERE tenant = ?", (tenant,)).fetchall()
        return frozenset(str(row[0]) for row in rows)

    # -- internals -----------------------------------------------------------

    def _cas(self, document_id: str, expected: int) -> tuple[Status, int]:
        status, revision = self._require(document_id)
        if revision != expected:
            raise StaleWriteError(
                f"document {document_id!r} is at catalog revision {revision}, "
                f"not {expected}; read it again and retry"
            )
        return status, revision

    def _apply_status(self, document_id: str, old: Status, revision: int, new: Status) -> int:
        if old is new:
            return revision
        self._conn.execute(
            "UPDATE documents SET status = ?, catalog_revision = catalog_revision + 1, "
            "updated_at = ? WHERE document_id = ? AND catalog_revision = ?",
            (new.value, _now(), document_id, revision),
        )
        if self._conn.changes() != 1:  # cannot happen under the write lock; refuse if it does
            raise StaleWriteError(f"document {document_id!r} changed during the update; retry")
        return revision + 1

    def _select_documents(self, where: str, params: tuple[Any, ...]) -> list[Document]:
        """Documents matching a fixed ``where`` clause (callers pass only literal SQL)."""
        return select_documents(self._conn, where, params)

    def _check_new(self, document: Document, chunks: Sequence[Chunk]) -> bool:
        """Validate a put; ``False`` when it is an identical re-put (nothing to do)."""
        check_put(document, chunks)
        existing = self._select_documents("document_id = ?", (document.document_id,))
        if existing:
            same_content(existing[0], self.get_chunks(document.document_id), document, chunks)
            return False
        if chunks:
            owned = self._conn.execute(
                "SELECT chunk_id, document_id FROM chunks "
                "WHERE chunk_id IN (SELECT value FROM json_each(?)) ORDER BY chunk_id LIMIT 1",
                (json.dumps([chunk.chunk_id for chunk in chunks]),),
            ).fetchone()
            if owned is not None:
                raise ValidationError(
                    f"chunk {owned[0]!r} already belongs to document {owned[1]!r}",
                    document=document.source_id,
                    field="chunk_id",
                )
        return True

    def _insert(self, document: Document, chunks: Sequence[Chunk]) -> None:
        insert_document(self._conn, document, chunks, _now())
