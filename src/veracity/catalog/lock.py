"""One writer at a time per knowledge base: an advisory lock file beside the database.

Every write to a catalog file (ingest, withdraw, retire, delete, reindex,
publish, rollback, change events, migrations) holds the *writer lock* of that
file, ``catalog.sqlite.lock``: an exclusive ``flock`` taken by one process,
re-entrant for the thread that holds it, and waited for (on a condition) by
other threads of the same process. The kernel releases it when its process
dies, even by ``kill -9``, so a crashed writer never leaves the knowledge base
locked. While it holds the lock, a writer's pid, command and start time are
in the file, so a second writer can say whom it waits for.

Readers never take it: they read a WAL snapshot (``SQLiteStore.read``) and
never wait for a writer. SQLite's own write lock still serializes the
transactions underneath; this lock makes whole operations (a multi-batch
ingest, a reindex) exclusive, so two of them never interleave their batches.

``wait``: ``True`` waits as long as it takes, ``False`` raises
:class:`~veracity.model.errors.WriterBusyError` at once, a number of seconds
waits at most that long. ``on_wait(holder)`` is called once when waiting
starts (``holder`` is ``None`` when the file could not be read yet).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from ..model.errors import WriterBusyError

try:  # POSIX; elsewhere only SQLite's own lock serializes writers
    import fcntl
except ImportError:  # pragma: no cover - not on the supported platforms
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_SUFFIX", "OnWait", "Wait", "WriterInfo", "current_writer", "hold_writer", "lock_path"]

LOCK_SUFFIX: Final = ".lock"
POLL_SECONDS: Final = 0.05
"""How often a process waiting for the knowledge base's writer lock tries again, in seconds."""

Wait = bool | float
"""``True``: wait as long as it takes; ``False``: do not wait; seconds: wait at most that long."""


@dataclass(frozen=True, slots=True)
class WriterInfo:
    """Who holds a writer lock: process id, command, since when (ISO UTC), on which host."""

    pid: int
    command: str
    since: str
    host: str = ""

    def describe(self) -> str:
        """``pid 4242, ingest, since 2026-08-27T16:00:00Z``."""
        return f"pid {self.pid}, {self.command}, since {self.since}"


OnWait = Callable[[WriterInfo | None], None]


def lock_path(database: str) -> str | None:
    """The lock file of a database file; ``None`` for an in-memory database (nothing to share)."""
    if database in ("", ":memory:") or database.startswith("file::memory:") or "mode=memory" in database:
        return None
    return database + LOCK_SUFFIX


def current_writer(path: str | None) -> WriterInfo | None:
    """Who holds the lock file ``path`` now, if anyone (read without taking it)."""
    if path is None or fcntl is None or not os.path.exists(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_info(path)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@dataclass
class _Held:
    """A lock this process holds (or is taking): its file, owning thread and depth."""

    owner: int
    depth: int
    fd: int | None = None
    info: WriterInfo | None = None


_HELD: dict[str, _Held] = {}
_CONDITION = threading.Condition()


def _read_info(path: str) -> WriterInfo | None:
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.loads(handle.read() or "null")
        return WriterInfo(int(raw["pid"]), str(raw["command"]), str(raw["since"]), str(raw.get("host", "")))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _busy(path: str, holder: WriterInfo | None, waited: float) -> WriterBusyError:
    folder = os.path.dirname(path) or "."
    who = holder.describe() if holder else "another process"
    after = f" after waiting {waited:.0f} s" if waited >= 1 else ""
    return WriterBusyError(
        f"another writer holds the knowledge base in {folder!r} ({who}){after}; "
        "run the command again when it has finished (without --no-wait it waits)",
        holder=holder.describe() if holder else None,
    )


def _deadline(wait: Wait) -> float | None:
    """Monotonic time to give up at; ``None`` for never."""
    if wait is True:
        return None
    return time.monotonic() + (0.0 if wait is False else max(0.0, float(wait)))


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


@contextmanager
def hold_writer(
    path: str | None, command: str, *, wait: Wait = True, on_wait: OnWait | None = None
) -> Iterator[None]:
    """Hold the writer lock file ``path`` for the block (see the module docstring)."""
    if path is None or fcntl is None:
        yield
        return
    key = os.path.realpath(path)
    me = threading.get_ident()
    deadline = _deadline(wait)
    started = time.monotonic()
    told = False
    with _CONDITION:
        held = _HELD.get(key)
        if held is not None and held.owner == me:
            held.depth += 1
            reentered = True
        else:
            reentered = False
            while key in _HELD:  # another thread of this process writes
                other = _HELD[key]
                left = _remaining(deadline)
                if left is not None and left <= 0:
                    raise _busy(path, other.info, time.monotonic() - started)
                if on_wait is not None and not told:
                    on_wait(other.info)
                    told = True
                _CONDITION.wait(timeout=left)
            _HELD[key] = held = _Held(owner=me, depth=1)
    if not reentered:
        try:
            held.fd, held.info = _take(path, command, deadline, started, on_wait if not told else None)
        except BaseException:
            with _CONDITION:
                del _HELD[key]
                _CONDITION.notify_all()
            raise
    try:
        yield
    finally:
        with _CONDITION:
            held.depth -= 1
            if held.depth == 0:
                _release(held)
                del _HELD[key]
                _CONDITION.notify_all()


def _take(
    path: str, command: str, deadline: float | None, started: float, on_wait: OnWait | None
) -> tuple[int, WriterInfo]:
    """Open and ``flock`` the file (polling while another process holds it); write who holds it."""
    assert fcntl is not None
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            left = _remaining(deadline)
            if left is not None and left <= 0:
                raise _busy(path, _read_info(path), time.monotonic() - started)
            if on_wait is not None:
                on_wait(_read_info(path))
                on_wait = None
            time.sleep(POLL_SECONDS if left is None else min(POLL_SECONDS, left))
        info = WriterInfo(
            pid=os.getpid(),
            command=command,
            since=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            host=socket.gethostname(),
        )
        payload = json.dumps(
            {"pid": info.pid, "command": info.command, "since": info.since, "host": info.host}
        )
        os.ftruncate(fd, 0)
        os.pwrite(fd, payload.encode("utf-8"), 0)
        return fd, info
    except BaseException:
        os.close(fd)
        raise


def _release(held: _Held) -> None:
    if held.fd is None:
        return
    assert fcntl is not None
    try:
        os.ftruncate(held.fd, 0)  # a reader of the file must not name a writer that has gone
    except OSError:
        pass
    fcntl.flock(held.fd, fcntl.LOCK_UN)
    os.close(held.fd)
    held.fd = None
