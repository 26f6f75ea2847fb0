"""Single flight: concurrent calls for one key compute once; other keys never wait for it.

The gateway's cache misses go through :class:`SingleFlight`: the first
request for a key computes, requests for the same key that arrive meanwhile
wait for that result (and count as hits), and requests for other keys run at
the same time. A failure reaches every waiter as the same exception.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["SingleFlight"]

ValueT = TypeVar("ValueT")


class _Call(Generic[ValueT]):
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: ValueT | None = None
        self.error: BaseException | None = None


class SingleFlight(Generic[ValueT]):
    """See the module docstring."""

    def __init__(self) -> None:
        """No call in flight."""
        self._lock = threading.Lock()
        self._calls: dict[Hashable, _Call[ValueT]] = {}

    def run(self, key: Hashable, compute: Callable[[], ValueT]) -> tuple[ValueT, bool]:
        """``compute()``'s value for ``key`` and whether it was another caller's (shared)."""
        with self._lock:
            call = self._calls.get(key)
            leader = call is None
            if call is None:
                call = self._calls[key] = _Call()
        if not leader:
            call.done.wait()
            if call.error is not None:
                raise call.error
            return call.value, True  # type: ignore[return-value]
        try:
            call.value = compute()
        except BaseException as exc:
            call.error = exc
            raise
        finally:
            with self._lock:
                del self._calls[key]
            call.done.set()
        return call.value, False

    def in_flight(self) -> int:
        """How many keys are being computed now."""
        with self._lock:
            return len(self._calls)
