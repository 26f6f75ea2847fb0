"""Per-key request limits of a service: a token bucket per API key.

Each key may make ``per_minute`` requests a minute on average and up to
``burst`` at once. The buckets live in one process: a service with N workers
allows each key N times the rate (each worker counts its own requests).
Pure logic with an injectable clock, so tests need no sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..model.errors import ConfigError, RateLimitError

__all__ = ["RateLimit", "RateLimiter"]


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


class RateLimiter:
    """Token buckets by key id (see the module docstring)."""

    def __init__(
        self, limit: RateLimit | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """Buckets for ``limit``; ``clock`` returns seconds (monotonic)."""
        self.limit = limit or RateLimit()
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key id → (tokens, at)
        self._lock = threading.Lock()

    def take(self, key_id: str) -> None:
        """Spend one request of ``key_id``'s bucket or raise ``RateLimitError`` with ``retry_after``."""
        rate = self.limit.per_minute / 60.0
        if rate == 0:
            return
        with self._lock:
            now = self._clock()
            tokens, at = self._buckets.get(key_id, (float(self.limit.burst), now))
            tokens = min(float(self.limit.burst), tokens + (now - at) * rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                wait = (1.0 - tokens) / rate
                raise RateLimitError(
                    f"too many requests for this key (limit {self.limit.per_minute:g} a minute, "
                    f"bursts of {self.limit.burst}); retry in {wait:.1f} s",
                    retry_after=wait,
                )
            self._buckets[key_id] = (tokens - 1.0, now)
