"""``VersionedIndex``: a search index stored in the catalog's database, in versions.

Two implementations share the registry, the write path and the contracts:
:class:`~veracity.index.sqlite.search.SQLiteSearchIndex` (FTS5 and sqlite-vec in
the knowledge base's file) and :class:`~veracity.index.postgres.search.PostgresSearchIndex`
(BM25 in SQL and pgvector in a PostgreSQL database). The knowledge-base layer
(open, ingest, lifecycle, reindex, status, the service) works with either
through this protocol; :func:`index_for` makes the one that fits a store.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, TypeGuard, runtime_checkable

from ..model.governance import EligibilityScope
from .dense import Embedder
from .snapshot import SearchBackend

__all__ = ["VersionedIndex", "index_for", "is_versioned"]


@runtime_checkable
class VersionedIndex(SearchBackend, Protocol):
    """A ``SearchBackend`` stored next to the catalog, following the published version (or pinned)."""

    k1: float
    b: float

    @property
    def store(self) -> Any:
        """The catalog store whose database holds the index."""
        ...

    @property
    def version(self) -> int:
        """The version read now."""
        ...

    @property
    def pinned(self) -> bool:
        """True when built for one version rather than following the pointer."""
        ...

    def stats(self) -> Any:
        """Counts and identity of the version (``IndexStats``)."""
        ...

    def vector_model(self) -> Any:
        """The recorded embedding model (``VectorModel``) or ``None``."""
        ...

    def check_embedder(self, embedder: Embedder) -> None:
        """``EmbedderMismatchError`` unless ``embedder`` made this index's vectors."""
        ...

    def sync(
        self,
        catalog: Any,
        embedder: Embedder | None,
        *,
        batch_chunks: int = ...,
        batch_size: int = ...,
        progress: Any = ...,
        tokens: Any = ...,
    ) -> Any:
        """Make the index match ``catalog`` (``SyncReport``; ``tokens``: an ``AheadTokens``)."""
        ...

    def refresh(self, catalog: Any, document_ids: Any) -> bool:
        """Bring every kept version's snapshot of ``document_ids`` in line with ``catalog``."""
        ...

    def add(self, items: Any, embedder: Embedder | None, *, tokens: Any = ...) -> Any:
        """Index the ``(document, chunks)`` of ``items`` not indexed yet (``SyncReport``)."""
        ...

    def ensure_model(self, tables: Any, model_id: str, dim: int) -> Any:
        """Record (or check) the embedding model of a version, inside a transaction."""
        ...

    def remove(self, document_ids: Any) -> int:
        """Remove documents from every kept version."""
        ...

    def eligible_document_ids(self, scope: EligibilityScope) -> set[str]:
        """The governance filter, in the database."""
        ...


def _protocol_members(protocol: type) -> frozenset[str]:
    """The public names ``protocol`` and the protocols it extends declare (methods, properties,
    annotated attributes)."""
    classes = [c for c in protocol.__mro__ if getattr(c, "_is_protocol", False) and c is not Protocol]
    names = {name for c in classes for name in (*vars(c), *getattr(c, "__annotations__", {}))}
    return frozenset(name for name in names if not name.startswith("_"))


_MISSING = object()


def is_versioned(index: object) -> TypeGuard[VersionedIndex]:
    """``isinstance(index, VersionedIndex)``, without reading the index's properties.

    On Python 3.11 an isinstance check against a runtime protocol calls ``hasattr`` for every
    member, which runs properties: the SQLite index's ``documents`` then loads every indexed
    document (a third of a second at 100k chunks, after every ingest, withdraw and delete, which
    write the manifest). This looks the members up statically, as Python 3.12 does.
    """
    return all(inspect.getattr_static(index, name, _MISSING) is not _MISSING for name in _VERSIONED_MEMBERS)


def index_for(store: Any, *, version: int | None = None, **options: Any) -> VersionedIndex:
    """The index of ``store``'s database: PostgreSQL's or SQLite's; ``version`` pins one version."""
    if getattr(store.connection, "dialect", "sqlite") == "postgresql":
        from .postgres.search import PostgresSearchIndex

        options.pop("dense_mode", None)  # a SQLite choice; PostgreSQL plans its own
        return PostgresSearchIndex(store, version=version, **options)
    from .sqlite.search import SQLiteSearchIndex

    return SQLiteSearchIndex(store, version=version, **options)


_VERSIONED_MEMBERS: frozenset[str] = _protocol_members(VersionedIndex)
