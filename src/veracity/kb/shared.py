"""What the workers of one knowledge base share: answers and rate-limit buckets, in one side file.

``DIR/serving.sqlite`` (beside the catalog, never inside it: a cache write
must not queue behind an ingest's transaction, and the file can be deleted at
any time with nothing lost) holds two tables:

- ``answers``: an answer by the digest of its :class:`~veracity.kb.cache.CacheKey`,
  with the catalog state it was computed against, as JSON
  (:mod:`veracity.model.codec`; reading it runs no code). The state is in the
  key, so an answer computed before a withdraw, an ingest or a publish can
  never be found after it, by any worker; rows of older states are deleted
  when a worker first writes under a newer one. About ``max_entries`` rows
  are kept (trimmed every :data:`TRIM_EVERY` writes), oldest first out.
- ``buckets``: each key's rate-limit bucket, updated in one write transaction
  per request, so a key's allowance holds across workers.

A PostgreSQL knowledge base has no directory: its workers keep their caches
and buckets in their own processes (see the PostgreSQL issue for sharing them
in the database).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import apsw

from ..catalog.connection import BUSY_TIMEOUT_MS
from ..model.codec import from_plain, to_plain
from ..pipeline.outcome import Answer
from .cache import CacheKey

__all__ = ["SERVING_FILE", "SharedAnswers", "SharedBuckets", "open_serving"]

SERVING_FILE: Final = "serving.sqlite"
TRIM_EVERY: Final = 32
"""Writes between two trims to ``max_entries``: a worker may leave up to this many rows more."""
SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    index_generation INTEGER NOT NULL,
    catalog_revision INTEGER NOT NULL,
    written REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_written ON answers (written);
CREATE TABLE IF NOT EXISTS buckets (key_id TEXT PRIMARY KEY, tokens REAL NOT NULL, at REAL NOT NULL);
"""


def open_serving(directory: Path) -> apsw.Connection | None:
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
        connection.execute(SCHEMA)
    except (apsw.Error, OSError):
        connection.close()
        return None
    return connection


class SharedAnswers:
    """The ``answers`` table: the second level of :class:`~veracity.kb.cache.AnswerCache`."""

    def __init__(self, connection: apsw.Connection, max_entries: int) -> None:
        """Rows in ``connection``'s file, at most ``max_entries``."""
        self.connection = connection
        self.max_entries = max(0, int(max_entries))
        self._lock = threading.Lock()
        self._last: tuple[int, int] | None = None  # the state of this process's last write
        self._puts = 0

    def get(self, key: CacheKey) -> Answer | None:
        """The answer stored for ``key`` by any worker, or ``None``."""
        with self._lock:
            row = self.connection.execute(
                "SELECT body FROM answers WHERE key = ?", (key.digest(),)
            ).fetchone()
        return None if row is None else from_plain(Answer, json.loads(row[0]))

    def put(self, key: CacheKey, answer: Answer) -> None:
        """Store ``answer``; drop rows of older states and the oldest past ``max_entries``."""
        if self.max_entries == 0:
            return
        body = json.dumps(to_plain(answer), ensure_ascii=False, separators=(",", ":"))
        state = key.state
        current = (state.index_generation, state.catalog_revision)
        with self._lock, self.connection:
            self.connection.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                (key.digest(), state.index_generation, state.catalog_revision, time.time(), body),
            )
            self._puts += 1
            if current != self._last:  # rows of older states can never be found again
                self.connection.execute(
                    "DELETE FROM answers WHERE index_generation < ? OR catalog_revision < ?", current
                )
                self._last = current
            if self._puts % TRIM_EVERY == 0:  # the oldest past max_entries, now and then
                self.connection.execute(
                    "DELETE FROM answers WHERE key IN "
                    "(SELECT key FROM answers ORDER BY written DESC LIMIT -1 OFFSET ?)",
                    (self.max_entries,),
                )

    def clear(self) -> None:
        """Drop every stored answer (for every worker)."""
        with self._lock, self.connection:
            self.connection.execute("DELETE FROM answers")


class SharedBuckets:
    """The ``buckets`` table (a :class:`~veracity.kb.limits.Buckets`)."""

    def __init__(self, connection: apsw.Connection) -> None:
        """Buckets in ``connection``'s file."""
        self.connection = connection
        self._lock = threading.Lock()

    def update(
        self, key_id: str, change: Callable[[tuple[float, float] | None], tuple[float, float]]
    ) -> None:
        """Read, change and write ``key_id``'s bucket in one immediate transaction."""
        with self._lock:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                row = self.connection.execute(
                    "SELECT tokens, at FROM buckets WHERE key_id = ?", (key_id,)
                ).fetchone()
                tokens, at = change(None if row is None else (float(row[0]), float(row[1])))
                self.connection.execute(
                    "INSERT OR REPLACE INTO buckets VALUES (?, ?, ?)", (key_id, tokens, at)
                )
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")
