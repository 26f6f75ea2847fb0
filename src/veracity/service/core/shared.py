"""What the workers of one knowledge base share: answers and rate-limit buckets.

The tables and their SQL are :mod:`veracity.catalog.serving`: a directory's
side file (``DIR/serving.sqlite``), or a PostgreSQL knowledge base's own
database, so workers on several machines share them too. This module adds
what serving puts in them:

- :class:`SharedAnswers` (the second level of :class:`~veracity.service.core.cache.AnswerCache`):
  an answer as JSON (:mod:`veracity.model.codec`; reading it runs no code)
  under :meth:`CacheKey.digest <veracity.service.core.cache.CacheKey.digest>`, which
  holds the tenant, the roles and the catalog state: an answer computed
  before a withdraw, an ingest or a publish can never be found after it, by
  any worker, nor under another tenant's or another set of roles' key. Rows
  of older states are deleted when a worker first writes under a newer one;
  about ``max_entries`` rows are kept (trimmed every :data:`TRIM_EVERY`
  writes), oldest first out.
- the buckets: :class:`~veracity.catalog.serving.ServingTables` is a
  :class:`~veracity.service.core.rate_limits.Buckets` as it is (one transaction per request).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Final

from ...catalog.serving import SERVING_FILE, ServingTables, in_database, open_side_file
from ...catalog.store import DatabaseStore
from ...model.codec import from_plain, to_plain
from ...pipeline.outcome import Answer
from .cache import CacheKey

__all__ = ["SERVING_FILE", "TRIM_EVERY", "SharedAnswers", "open_shared"]

TRIM_EVERY: Final = 32
"""Writes between two trims to ``max_entries``: a worker may leave up to this many rows more."""


def open_shared(location: str | Path, store: DatabaseStore) -> ServingTables | None:
    """The shared tables of the knowledge base at ``location`` whose catalog ``store`` is open.

    A directory's side file (``None`` when it cannot be written: each worker then keeps
    its own), or, for a database, its own tables through ``store``'s pools.
    """
    if isinstance(location, str):
        from ...catalog.postgres.store import PostgresStore

        assert isinstance(store, PostgresStore), "a URL's store is a PostgresStore"
        return in_database(store)
    return open_side_file(Path(location))


class SharedAnswers:
    """Answers in the shared tables: the second level of :class:`~veracity.service.core.cache.AnswerCache`."""

    def __init__(self, tables: ServingTables, max_entries: int) -> None:
        """Rows in ``tables``, about ``max_entries`` of them."""
        self.tables = tables
        self.max_entries = max(0, int(max_entries))
        self._lock = threading.Lock()
        self._last: tuple[int, int] | None = None  # the state of this process's last write
        self._puts = 0

    def get(self, key: CacheKey) -> Answer | None:
        """The answer stored for ``key`` by any worker, or ``None``."""
        body = self.tables.answer(key.digest(), key.tenant)
        return None if body is None else from_plain(Answer, json.loads(body))

    def put(self, key: CacheKey, answer: Answer) -> None:
        """Store ``answer``; drop rows of older states and the oldest past ``max_entries``."""
        if self.max_entries == 0:
            return
        body = json.dumps(to_plain(answer), ensure_ascii=False, separators=(",", ":"))
        state = key.state
        current = (state.index_generation, state.catalog_revision)
        self.tables.file_answer(
            key.digest(), key.tenant, generation=current[0], revision=current[1],
            written=time.time(), body=body,
        )  # fmt: skip
        with self._lock:
            self._puts += 1
            newer, self._last = current != self._last, current
            due = self._puts % TRIM_EVERY == 0
        if newer:  # rows of older states can never be found again
            self.tables.forget_before(*current)
        if due:  # the oldest past max_entries, now and then
            self.tables.trim(self.max_entries)

    def clear(self) -> None:
        """Drop every stored answer (for every worker)."""
        self.tables.clear_answers()
