"""What every stored search index starts with, whichever engine holds it (SQLite, PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ...model.contracts import Chunk, parse_enum
from ..quantized import DEFAULT_OVERSAMPLE, MIN_CANDIDATES, QUANTIZED_MIN_ROWS
from .resident import DenseMode
from .tables import IndexTables
from .views import ChunksView, IndexState

__all__ = ["OpenedIndex"]


class OpenedIndex:
    """A mixin: the constructor both engines' indexes share; :meth:`_attach` adds an engine's own."""

    def __init__(
        self,
        store: Any,
        *,
        version: int | None = None,
        dense_mode: DenseMode | str = DenseMode.RESIDENT,
        k1: float = 1.2,
        b: float = 0.75,
        **_: Any,
    ) -> None:
        """Use the index of ``store``'s database: the published version, or ``version`` when given."""
        self._store = store
        self._conn = store.connection
        self._pinned = IndexTables(version) if version is not None else None
        self.dense_mode = parse_enum(DenseMode, dense_mode, what="dense mode")
        self.k1, self.b = float(k1), float(b)
        self._lock = threading.RLock()
        self._cache: IndexState | None = None
        self.chunks: Mapping[str, Chunk] = ChunksView(self._conn, self._state)
        self.sql_exact_max: int | None = None  # None: decide by the plan's own cost rule
        self.quantized_min_rows: int | None = QUANTIZED_MIN_ROWS  # None: always exact
        self.oversample = DEFAULT_OVERSAMPLE
        self.min_candidates = MIN_CANDIDATES  # Hamming candidates kept whatever k
        self.last_dense_plan = ""
        self._attach(store)

    def _state(self) -> IndexState:  # pragma: no cover - defined by the index
        raise NotImplementedError

    def _attach(self, store: Any) -> None:
        """The engine's own state (none by default)."""
