"""Whole write operations hold the knowledge base's writer lock from start to end.

An ingest writes in many transactions (one per batch of files, then the index
in batches); a reindex builds, verifies and publishes in several. Each
transaction takes the writer lock on its own (:meth:`SQLiteStore.transaction
<veracity.catalog.sqlite.SQLiteStore.transaction>`), but two operations whose
transactions interleave still collide (both decide a document is new, both
index it). :func:`writing` holds the lock across a whole operation, so a second
writer waits for the first to finish (or, told not to wait, says who holds it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING

from ..catalog.sqlite import SQLiteStore
from ..catalog.store import DatabaseStore

if TYPE_CHECKING:
    from ..pipeline.engine import Engine

__all__ = ["writing"]


@contextmanager
def writing(kb: Engine, command: str, *, bulk: bool = False) -> Iterator[None]:
    """Hold ``kb``'s writer lock for the block, naming ``command`` to writers that wait.

    Re-entrant; a no-op for a catalog that is not a SQLite file (nothing else can write it).
    ``bulk``: the block writes many transactions (an ingest), with a SQLite catalog's
    settings for that (:meth:`SQLiteStore.bulk_writes <veracity.catalog.sqlite.SQLiteStore.bulk_writes>`).
    """
    store = kb.catalog.store
    if not isinstance(store, DatabaseStore):
        yield
        return
    settings = store.bulk_writes() if bulk and isinstance(store, SQLiteStore) else nullcontext()
    with store.writer(command), settings:
        yield
