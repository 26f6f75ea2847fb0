"""What the service workers of one knowledge base share: cached answers and rate-limit buckets.

Two tables, one implementation (:class:`ServingTables`), the dialect a parameter:

- a **directory** keeps them in a side file, ``DIR/serving.sqlite``
  (:func:`open_side_file`), beside the catalog and never inside it: a cache
  write must not queue behind an ingest's transaction, and the file can be
  deleted at any time with nothing lost;
- a **PostgreSQL** knowledge base keeps them in its own database
  (:func:`in_database`; migration ``pg0006_serving``), so workers on any
  number of machines share them.

``serving_answers`` holds an answer's body (JSON) under the digest of its
cache key, with the tenant and the catalog state it was computed against.
The state is in the key, so nothing computed before a withdraw, an ingest or
a publish is found after it; :meth:`ServingTables.forget_before` and
:meth:`ServingTables.trim` keep the table small. A lookup names the tenant
as well as the key; on PostgreSQL it reads through the store's tenant-scoped
reads, so with a reader role row-level security hides every other tenant's
rows too. Writes (filing, trimming, buckets) go through the owner's pool:
the reader role stays ``SELECT``-only.

``serving_buckets`` holds each API key's token bucket; :meth:`ServingTables.update`
reads, changes and writes one bucket in one transaction that excludes every
other update of that key, in every process (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: a transaction-scoped advisory lock on the key), so a key's
allowance holds across workers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import apsw

from .connection import BUSY_TIMEOUT_MS

if TYPE_CHECKING:
    from .postgres.store import PostgresStore

__all__ = [
    "POSTGRESQL",
    "SERVING_FILE",
    "SQLITE",
    "Dialect",
    "InDatabase",
    "ServingTables",
    "SideFile",
    "in_database",
    "open_side_file",
]

SERVING_FILE: Final = "serving.sqlite"

SIDE_FILE_SCHEMA: Final = """
DROP TABLE IF EXISTS answers;  -- the layout before the tenant column (the file holds nothing to keep)
DROP TABLE IF EXISTS buckets;
CREATE TABLE IF NOT EXISTS serving_answers (
    key TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    index_generation INTEGER NOT NULL,
    catalog_revision INTEGER NOT NULL,
    written REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS serving_answers_written ON serving_answers (written);
CREATE TABLE IF NOT EXISTS serving_buckets (key_id TEXT PRIMARY KEY, tokens REAL NOT NULL, at REAL NOT NULL);
"""
"""The side file's tables (PostgreSQL's are a migration: :mod:`veracity.catalog.postgres.migrations`)."""

_LOCK_CLASS: Final = 7_303_011
"""First key of the two-key advisory locks below (two-key locks never meet the one-key writer lock)."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """The few statements where SQLite and PostgreSQL differ."""

    name: str
    bucket_lock: str | None
    """Run first in a bucket's transaction (parameter: the key id) so updates of one key queue;
    ``None`` where the write transaction already excludes every other writer."""
    upkeep_lock: str | None
    """Whether this worker may trim now (one boolean), so only one trims at a time; ``None``: as above."""


SQLITE: Final = Dialect("sqlite", None, None)
POSTGRESQL: Final = Dialect(
    "postgresql",
    bucket_lock=f"SELECT pg_advisory_xact_lock({_LOCK_CLASS}, hashtext(?))",
    upkeep_lock=f"SELECT pg_try_advisory_xact_lock({_LOCK_CLASS}, 0)",
)


class _Rows(Protocol):
    def fetchone(self) -> Any: ...


class _Statements(Protocol):
    """What runs a statement (``?`` parameters): an apsw connection or a :class:`PgConnection`."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> _Rows: ...


class _Place(Protocol):
    """Where the tables are: a read, and one write transaction on a connection of its own."""

    def read(self) -> AbstractContextManager[_Statements]: ...

    def write(self) -> AbstractContextManager[_Statements]: ...

    def close(self) -> None: ...


class ServingTables:
    """The workers' shared tables (see the module docstring); thread-safe."""

    def __init__(self, place: _Place, dialect: Dialect) -> None:
        """Tables at ``place`` (from :func:`open_side_file` or :func:`in_database`)."""
        self.place = place
        self.dialect = dialect

    # -- answers ----------------------------------------------------------------------------

    def answer(self, key: str, tenant: str) -> str | None:
        """The body filed under ``key`` for ``tenant`` by any worker, or ``None``."""
        with self.place.read() as connection:
            row = connection.execute(
                "SELECT body FROM serving_answers WHERE key = ? AND tenant = ?", (key, tenant)
            ).fetchone()
        return None if row is None else str(row[0])

    def file_answer(
        self, key: str, tenant: str, *, generation: int, revision: int, written: float, body: str
    ) -> None:
        """File ``body`` under ``key`` (replacing what was there), computed at that state."""
        with self.place.write() as connection:
            connection.execute(
                "INSERT INTO serving_answers "
                "(key, tenant, index_generation, catalog_revision, written, body) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET tenant = excluded.tenant, "
                "index_generation = excluded.index_generation, catalog_revision = excluded.catalog_revision, "
                "written = excluded.written, body = excluded.body",
                (key, tenant, generation, revision, written, body),
            )

    def forget_before(self, generation: int, revision: int) -> None:
        """Drop the answers of older states (their keys can never be asked again)."""
        with self.place.write() as connection:
            if self._may_upkeep(connection):
                connection.execute(
                    "DELETE FROM serving_answers WHERE index_generation < ? OR catalog_revision < ?",
                    (generation, revision),
                )

    def trim(self, keep: int) -> None:
        """Drop the oldest answers past the ``keep`` newest (a tie on the time written drops both)."""
        with self.place.write() as connection:
            if self._may_upkeep(connection):
                connection.execute(
                    "DELETE FROM serving_answers WHERE written <= "
                    "(SELECT written FROM serving_answers ORDER BY written DESC LIMIT 1 OFFSET ?)",
                    (max(0, int(keep)),),
                )

    def clear_answers(self) -> None:
        """Drop every stored answer (for every worker)."""
        with self.place.write() as connection:
            connection.execute("DELETE FROM serving_answers")

    def _may_upkeep(self, connection: _Statements) -> bool:
        # two workers deleting overlapping rows in different orders could deadlock on PostgreSQL;
        # one trims, the others skip (the next write trims again)
        if self.dialect.upkeep_lock is None:
            return True
        return bool(connection.execute(self.dialect.upkeep_lock).fetchone()[0])

    # -- buckets (a veracity.service.core.rate_limits.Buckets) ------------------------------

    def update(
        self, key_id: str, change: Callable[[tuple[float, float] | None], tuple[float, float]]
    ) -> None:
        """Replace ``key_id``'s bucket by ``change(current)``, in one transaction that no other
        update of that key overlaps (in any process)."""
        with self.place.write() as connection:
            if self.dialect.bucket_lock is not None:
                connection.execute(self.dialect.bucket_lock, (key_id,))
            row = connection.execute(
                "SELECT tokens, at FROM serving_buckets WHERE key_id = ?", (key_id,)
            ).fetchone()
            tokens, at = change(None if row is None else (float(row[0]), float(row[1])))
            connection.execute(
                "INSERT INTO serving_buckets (key_id, tokens, at) VALUES (?, ?, ?) "
                "ON CONFLICT (key_id) DO UPDATE SET tokens = excluded.tokens, at = excluded.at",
                (key_id, tokens, at),
            )

    def close(self) -> None:
        """Close what this object opened (the side file; a database's store is its owner's to close)."""
        self.place.close()


# -- a directory: the side file -------------------------------------------------------------


class SideFile:
    """One apsw connection to a side file of the knowledge base (``serving.sqlite``,
    ``conversations.sqlite``), one thread at a time."""

    def __init__(self, connection: apsw.Connection) -> None:
        self.connection = connection
        self._lock = threading.Lock()

    @contextmanager
    def read(self) -> Iterator[_Statements]:
        with self._lock:
            yield self.connection

    @contextmanager
    def write(self) -> Iterator[_Statements]:
        with self._lock:  # IMMEDIATE: the write lock at once, so read-then-write holds across processes
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                yield self.connection
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")

    def close(self) -> None:
        self.connection.close()


def open_side_file(directory: Path) -> ServingTables | None:
    """The side file of the knowledge base in ``directory``, created when missing; ``None`` when
    it cannot be written there (a read-only folder: each worker then keeps its own).

    Durability is not needed (losing it loses cached answers and refills buckets), so
    commits do not wait for the disk.
    """
    try:
        connection = apsw.Connection(str(directory / SERVING_FILE))
    except (apsw.Error, OSError):
        return None
    try:
        connection.set_busy_timeout(BUSY_TIMEOUT_MS)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute(SIDE_FILE_SCHEMA)
    except (apsw.Error, OSError):
        connection.close()
        return None
    return ServingTables(SideFile(connection), SQLITE)


# -- a database: its own tables ---------------------------------------------------------------


class InDatabase:
    """A PostgreSQL store's pools: scoped reads as the store reads, writes on a connection of their own."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store

    @contextmanager
    def read(self) -> Iterator[_Statements]:
        # the store's read: the reader role and the tenant of acting_for() when set (row-level security)
        with self.store.read():
            yield self.store.connection

    @contextmanager
    def write(self) -> Iterator[_Statements]:
        # never the thread's block connection (it may be the reader role's, or inside a snapshot)
        with self.store.connection.own() as connection, connection.raw() as raw, raw.transaction():
            yield connection

    def close(self) -> None:
        pass


def in_database(store: PostgresStore) -> ServingTables:
    """The tables in ``store``'s database (its migrations made them); the store stays the caller's."""
    return ServingTables(InDatabase(store), POSTGRESQL)
