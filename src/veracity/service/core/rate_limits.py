"""Per-key request limits of a service: a token bucket per API key.

Each key may make ``per_minute`` requests a minute on average and up to
``burst`` at once. Where the buckets live is a :class:`Buckets`: in this
process (:class:`ProcessBuckets`), or in the tables every worker of one
knowledge base shares (:class:`veracity.catalog.serving.ServingTables`: a
directory's side file or a database's table), so that N workers do not allow
a key N times its rate. The arithmetic is one pure
function (:func:`spend`) with an injectable clock, so tests need no sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ...model.errors import ConfigError, RateLimitError

__all__ = ["Buckets", "ProcessBuckets", "RateLimit", "RateLimiter", "spend"]


@dataclass(frozen=True, slots=True)
class RateLimit:
    """``per_minute`` requests a minute on average, ``burst`` at once; ``per_minute=0`` is no limit."""

    per_minute: float = 600.0
    burst: int = 60

    def __post_init__(self) -> None:
        if self.per_minute < 0 or self.burst < 1:
            raise ConfigError(
                f"a rate limit needs per_minute >= 0 and burst >= 1, got {self.per_minute} and {self.burst}"
            )


def spend(limit: RateLimit, bucket: tuple[float, float] | None, now: float) -> tuple[float, float | None]:
    """One request against ``bucket`` (tokens, when last updated; ``None``: full).

    Returns the tokens left at ``now`` and ``None``, or, when no whole token is
    left, the tokens at ``now`` and the seconds until one is.
    """
    rate = limit.per_minute / 60.0
    tokens, at = bucket if bucket is not None else (float(limit.burst), now)
    tokens = min(float(limit.burst), tokens + max(0.0, now - at) * rate)
    if tokens < 1.0:
        return tokens, (1.0 - tokens) / rate
    return tokens - 1.0, None


class Buckets(Protocol):
    """Where the buckets of one service live."""

    def update(
        self, key_id: str, change: Callable[[tuple[float, float] | None], tuple[float, float]]
    ) -> None:
        """Replace ``key_id``'s bucket by ``change(current)``, atomically for every sharer."""
        ...


class ProcessBuckets:
    """Buckets in this process's memory (a service with one worker, or nothing shared)."""

    def __init__(self) -> None:
        """No bucket yet."""
        self._buckets: dict[str, tuple[float, float]] = {}  # key id → (tokens, at)
        self._lock = threading.Lock()

    def update(
        self, key_id: str, change: Callable[[tuple[float, float] | None], tuple[float, float]]
    ) -> None:
        """See :meth:`Buckets.update`."""
        with self._lock:
            self._buckets[key_id] = change(self._buckets.get(key_id))


class RateLimiter:
    """Token buckets by key id (see the module docstring)."""

    def __init__(
        self,
        limit: RateLimit | None = None,
        *,
        clock: Callable[[], float] = time.time,
        buckets: Buckets | None = None,
    ) -> None:
        """Buckets for ``limit`` in ``buckets`` (default: this process); ``clock`` returns seconds.

        The default clock is wall time, which every process on the machine reads alike.
        """
        self.limit = limit or RateLimit()
        self._clock = clock
        self.buckets: Buckets = buckets if buckets is not None else ProcessBuckets()

    def take(self, key_id: str) -> None:
        """Spend one request of ``key_id``'s bucket or raise ``RateLimitError`` with ``retry_after``."""
        if self.limit.per_minute == 0:
            return
        now = self._clock()
        refused: list[float] = []

        def change(bucket: tuple[float, float] | None) -> tuple[float, float]:
            refused.clear()
            tokens, wait = spend(self.limit, bucket, now)
            if wait is not None:
                refused.append(wait)
            return tokens, now

        self.buckets.update(key_id, change)
        if refused:
            raise RateLimitError(
                f"too many requests for this key (limit {self.limit.per_minute:g} a minute, "
                f"bursts of {self.limit.burst}); retry in {refused[0]:.1f} s",
                retry_after=refused[0],
            )
