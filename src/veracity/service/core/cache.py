"""An answer cache scoped to who asks and to the state of the knowledge base.

The key (:class:`CacheKey`) holds everything an answer depends on: the
tenant, the sorted roles, the product version as asked, the moment bucket
(``as_of`` resolved, "now" to the minute), a digest of the question, the
published index version and its generation, and the catalog revision
(migration ``0014_catalog_revision``: a counter that triggers move on every
change to documents, tenant roles and settings). A withdraw, delete, ingest
or publish changes the revision or the index state, so no cached answer
outlives it, whichever process made the change; two principals whose roles
differ never share an entry.

Only answers computed with every component working are stored (a degraded
or denied answer is not), so a recovered embedder is used again at once.
The cache lives in one process; given a second level (the workers' shared
tables, :class:`veracity.service.core.shared.SharedAnswers`) it looks there on a miss
and writes there too, so an answer one worker computed is a hit on every
worker.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol

from ...catalog.state import catalog_revision
from ...catalog.store import DatabaseStore
from ...index.sqlite.versions import read_pointer
from ...model.contracts import sha256_hex
from ...pipeline.outcome import Answer

__all__ = [
    "AnswerCache",
    "CacheKey",
    "CacheStats",
    "CatalogState",
    "SecondLevel",
    "as_of_bucket",
    "catalog_state",
]

DEFAULT_ENTRIES: Final = 2048
"""Answers a service's in-process answer cache keeps, least recently used out first."""
BUCKET_SECONDS: Final = 60
"""``as_of=now`` is resolved to the start of its minute: answers asked within one minute share an entry."""


@dataclass(frozen=True, slots=True)
class CatalogState:
    """What a cached answer was computed against: the published index and the catalog revision."""

    index_version: int
    index_generation: int
    catalog_revision: int


def catalog_state(store: DatabaseStore) -> CatalogState:
    """The current state, read in one snapshot (a few microseconds)."""
    with store.read():
        version, generation = read_pointer(store.connection)
        revision = catalog_revision(store.connection)
    return CatalogState(version, generation, revision)


def as_of_bucket(moment: datetime | None = None) -> datetime:
    """``moment`` (default now) floored to :data:`BUCKET_SECONDS`, in UTC."""
    current = (moment or datetime.now(UTC)).astimezone(UTC)
    seconds = int(current.timestamp()) // BUCKET_SECONDS * BUCKET_SECONDS
    return datetime.fromtimestamp(seconds, UTC)


@dataclass(frozen=True, slots=True)
class CacheKey:
    """Everything a cached answer depends on (see the module docstring)."""

    tenant: str
    roles: tuple[str, ...]
    version: str
    as_of: str
    question_digest: str
    state: CatalogState

    @classmethod
    def of(
        cls,
        *,
        tenant: str,
        roles: Sequence[str],
        version: str | None,
        as_of: datetime,
        question: str,
        state: CatalogState,
    ) -> CacheKey:
        """The key of one question; ``version=None`` means the tenant's default."""
        return cls(
            tenant=tenant,
            roles=tuple(sorted(set(roles))),
            version="" if version is None else version.strip(),
            as_of=as_of.astimezone(UTC).isoformat(),
            question_digest=sha256_hex(question.strip()),
            state=state,
        )

    def digest(self) -> str:
        """The whole key as one digest (what the workers' shared tables file an answer under).

        The parts are encoded as a JSON list, roles a list of their own, so no two keys
        share a digest by how their parts split: roles ``("a,b",)`` and ``("a", "b")`` differ.
        """
        state = self.state
        parts = [
            self.tenant, list(self.roles), self.version, self.as_of, self.question_digest,
            state.index_version, state.index_generation, state.catalog_revision,
        ]  # fmt: skip
        return sha256_hex(json.dumps(parts, ensure_ascii=False, separators=(",", ":")))


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counts and latencies since the process started."""

    entries: int
    hits: int
    misses: int
    mean_hit_ms: float | None
    mean_miss_ms: float | None

    @property
    def hit_rate(self) -> float | None:
        """Hits over lookups; ``None`` before the first lookup."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else None

    def as_dict(self) -> dict[str, Any]:
        """Plain data."""
        rate = self.hit_rate
        return {
            "entries": self.entries,
            "hits": self.hits,
            "misses": self.misses,
            "hit_rate": None if rate is None else round(rate, 4),
            "mean_hit_ms": None if self.mean_hit_ms is None else round(self.mean_hit_ms, 3),
            "mean_miss_ms": None if self.mean_miss_ms is None else round(self.mean_miss_ms, 3),
        }


class SecondLevel(Protocol):
    """Where answers are looked up after this process's own entries (shared by workers)."""

    def get(self, key: CacheKey) -> Answer | None:
        """The stored answer for ``key`` or ``None``."""
        ...

    def put(self, key: CacheKey, answer: Answer) -> None:
        """Store ``answer`` under ``key``."""
        ...

    def clear(self) -> None:
        """Drop every stored answer."""
        ...


class AnswerCache:
    """A thread-safe LRU of answers by :class:`CacheKey`; entries of an older state are dropped."""

    def __init__(self, max_entries: int = DEFAULT_ENTRIES, *, second: SecondLevel | None = None) -> None:
        """Keep at most ``max_entries`` answers (0 turns caching off); ``second``: see the module."""
        self.max_entries = max(0, int(max_entries))
        self.second = second if self.max_entries else None
        self._entries: OrderedDict[CacheKey, Answer] = OrderedDict()
        self._lock = threading.Lock()
        self._state: CatalogState | None = None
        self._hits = self._misses = 0
        self._hit_seconds = self._miss_seconds = 0.0

    def get(self, key: CacheKey) -> Answer | None:
        """The cached answer for ``key``, or ``None`` (count the outcome with :meth:`record`)."""
        with self._lock:
            current = self._follow(key.state)
            answer = self._entries.get(key) if current else None
            if answer is not None:
                self._entries.move_to_end(key)
                return answer
        if not current or self.second is None:
            return None
        answer = self.second.get(key)
        if answer is not None:
            self._keep(key, answer)
        return answer

    def put(self, key: CacheKey, answer: Answer) -> None:
        """Store ``answer`` under ``key`` (unless its state is already older than one seen)."""
        if self._keep(key, answer) and self.second is not None:
            self.second.put(key, answer)

    def _keep(self, key: CacheKey, answer: Answer) -> bool:
        with self._lock:
            if self.max_entries == 0 or not self._follow(key.state):
                return False
            self._entries[key] = answer
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            return True

    def record(self, *, hit: bool, seconds: float) -> None:
        """Count one request as a hit or a miss, with its time."""
        with self._lock:
            if hit:
                self._hits += 1
                self._hit_seconds += seconds
            else:
                self._misses += 1
                self._miss_seconds += seconds

    def _follow(self, state: CatalogState) -> bool:
        """Drop every entry when the knowledge base moved on (they can never match again).

        False for a state older than one already seen (a request that read it
        just before a change): it neither finds nor clears anything.
        """
        seen = self._state
        if state == seen:
            return True
        if seen is not None and (
            state.index_generation < seen.index_generation or state.catalog_revision < seen.catalog_revision
        ):
            return False
        self._entries.clear()
        self._state = state
        return True

    def clear(self) -> None:
        """Drop every entry, the second level's too (counts stay)."""
        with self._lock:
            self._entries.clear()
        if self.second is not None:
            self.second.clear()

    def stats(self) -> CacheStats:
        """Counts and mean latencies."""
        with self._lock:
            return CacheStats(
                entries=len(self._entries),
                hits=self._hits,
                misses=self._misses,
                mean_hit_ms=self._hit_seconds / self._hits * 1000 if self._hits else None,
                mean_miss_ms=self._miss_seconds / self._misses * 1000 if self._misses else None,
            )
