"""PostgreSQL connections as the rest of veracity reads and writes them.

The catalog, knowledge-base and index-registry SQL is written once, with ``?``
parameters, for SQLite (apsw). :class:`PgConnection` gives PostgreSQL the same
face: ``execute(sql, params)`` returning rows that can be fetched or iterated,
``executemany``, ``changes()`` and ``in_transaction``. Parameters are rewritten
to psycopg's ``%s`` (outside quoted literals) once per statement text. Only
portable SQL passes through it; what differs (DDL, FTS, vectors) lives in the
PostgreSQL modules themselves.

Statements run on the connection that the store has bound to the calling
thread for a transaction or a read (:class:`~veracity.catalog.postgres.store.PostgresStore`),
or, outside those blocks, on a pooled connection in autocommit mode.

**Pool sizes.** Each store has one pool per role (the owner's, and the
reader's when set), opened with one connection and grown on demand up to its
size: :data:`DEFAULT_POOL_SIZE`, or what :func:`pool_size` sets for the stores
opened inside it. A service worker sizes them by its answering threads
(:func:`worker_connections`): an engine is used by one thread at a time, so
its store needs :data:`ENGINE_CONNECTIONS`; the store every request reads
(keys, the catalog state, the shared cache and buckets) gets
:func:`side_connections`, and requests beyond it wait their turn for a connection.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any, Final

from ...model.errors import CatalogUnavailableError
from .location import display_url, require_driver

__all__ = [
    "DEFAULT_POOL_SIZE",
    "ENGINE_CONNECTIONS",
    "PgConnection",
    "Rows",
    "make_pool",
    "pool_size",
    "side_connections",
    "to_pyformat",
    "worker_connections",
]

DEFAULT_POOL_SIZE: Final = 8
"""A pool's size outside :func:`pool_size` (a command line tool, a test)."""
ENGINE_CONNECTIONS: Final = 2
"""A pool of a store one engine reads at a time: its block's connection, and one spare."""

_POOL_SIZE: ContextVar[int | None] = ContextVar("veracity_pool_size", default=None)


@contextmanager
def pool_size(connections: int) -> Iterator[None]:
    """Pools opened in the block (by any store) hold at most ``connections`` each."""
    token = _POOL_SIZE.set(max(1, int(connections)))
    try:
        yield
    finally:
        _POOL_SIZE.reset(token)


def side_connections(threads: int) -> int:
    """The pool of a worker's light reads and shared tables: one per answering thread, and two more
    (cache hits and key checks keep going while every thread answers)."""
    return max(1, int(threads)) + 2


def worker_connections(threads: int) -> int:
    """The most connections a worker with ``threads`` answering threads holds per role:
    an engine per thread and the gateway's own, plus the side pool (``3 * threads + 4``)."""
    return (max(1, int(threads)) + 1) * ENGINE_CONNECTIONS + side_connections(threads)


@functools.lru_cache(maxsize=4096)
def to_pyformat(sql: str) -> str:
    """``sql`` with ``?`` parameters as ``%s`` and literal ``%`` doubled, quoted text left alone."""
    out: list[str] = []
    quote: str | None = None
    comment = False
    for char in sql:
        if comment:  # a "--" comment may hold quotes or question marks of its own
            comment = char != "\n"
            out.append("%%" if char == "%" else char)
            continue
        if quote is None and char == "-" and out and out[-1] == "-":
            comment = True
            out.append(char)
            continue
        if quote is not None:
            out.append("%%" if char == "%" else char)
            if char == quote:
                quote = None
            continue
        if char in ("'", '"'):
            quote = char
            out.append(char)
        elif char == "?":
            out.append("%s")
        elif char == "%":
            out.append("%%")
        else:
            out.append(char)
    return "".join(out)


class Rows:
    """The rows of one statement, already fetched (so the connection can go back to its pool)."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        """The first row, or ``None``."""
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        """Every row."""
        return self._rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)


def make_pool(
    url: str, *, max_size: int | None = None, configure: Callable[[Any], None] | None = None
) -> Any:
    """A psycopg ``ConnectionPool`` on ``url`` (autocommit connections; opened and checked now).

    ``max_size``: by default :func:`pool_size`'s, else :data:`DEFAULT_POOL_SIZE`.
    """
    if max_size is None:
        max_size = _POOL_SIZE.get() or DEFAULT_POOL_SIZE
    require_driver()
    import psycopg
    from psycopg_pool import ConnectionPool

    def prepare(connection: Any) -> None:
        connection.autocommit = True
        if configure is not None:
            configure(connection)

    pool = ConnectionPool(
        url, min_size=1, max_size=max_size, configure=prepare, open=False, name="veracity",
        kwargs={"application_name": "veracity"},
    )  # fmt: skip
    try:
        pool.open(wait=True, timeout=30)
    except (psycopg.Error, Exception) as exc:
        pool.close()
        raise CatalogUnavailableError(f"cannot connect to {display_url(url)}: {exc}") from exc
    return pool


class PgConnection:
    """An apsw-like connection over PostgreSQL (see the module docstring)."""

    def __init__(self, bound: Callable[[], Any], borrow: Callable[[], AbstractContextManager[Any]]) -> None:
        """``bound()``: the calling thread's block connection (or ``None``); ``borrow()`` lends one."""
        self._bound = bound
        self._borrow = borrow
        self._changes = 0

    dialect = "postgresql"
    """What SQL this connection speaks (apsw connections have no such attribute: SQLite)."""

    @property
    def in_transaction(self) -> bool:
        """True inside a store transaction or read block of this thread."""
        return self._bound() is not None

    def changes(self) -> int:
        """Rows changed by this thread's last ``execute`` (as apsw's ``changes()``)."""
        return self._changes

    def _run(self, connection: Any, sql: str, params: Sequence[Any] | None) -> Rows:
        with connection.cursor() as cursor:
            cursor.execute(to_pyformat(sql), tuple(params) if params else None)
            rows = cursor.fetchall() if cursor.description is not None else []
            self._changes = max(cursor.rowcount, 0)
            return Rows(rows, self._changes)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Rows:
        """Run one statement (``?`` parameters) and return its rows."""
        connection = self._bound()
        if connection is not None:
            return self._run(connection, sql, params)
        with self._borrow() as borrowed:
            return self._run(borrowed, sql, params)

    @contextmanager
    def raw(self) -> Iterator[Any]:
        """The psycopg connection statements run on now (the block's, or a borrowed one)."""
        connection = self._bound()
        if connection is not None:
            yield connection
            return
        with self._borrow() as borrowed:
            yield borrowed

    @contextmanager
    def own(self) -> Iterator[PgConnection]:
        """A pooled connection of its own for the block, never this thread's block connection.

        For tables no writer orders (the workers' shared cache and buckets): their writes
        must not join a read snapshot or a catalog transaction, nor wait for the writer lock.
        """
        with self._borrow() as borrowed:
            yield PgConnection(lambda: borrowed, self._borrow)

    def copy_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
        """``COPY table (columns) FROM STDIN`` of ``rows`` (text format); returns the rows written."""
        count = 0
        with self.raw() as connection, connection.cursor() as cursor:
            with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
        return count

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each parameter row (pipelined by psycopg)."""
        batch = [tuple(row) for row in rows]
        if not batch:
            return
        connection = self._bound()
        if connection is not None:
            with connection.cursor() as cursor:
                cursor.executemany(to_pyformat(sql), batch)
            return
        with self._borrow() as borrowed, borrowed.transaction(), borrowed.cursor() as cursor:
            cursor.executemany(to_pyformat(sql), batch)
