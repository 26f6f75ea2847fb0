"""Answering sessions: a few engines on one knowledge base, one per request at a time.

An engine's catalog connection may not be used by two threads at once, so a
gateway that answered with one engine answered one question at a time, and a
cache hit for one key could queue behind a miss for another. A
:class:`SessionPool` holds up to ``size`` engines opened on the same
knowledge base (each its own connection, reading its own WAL snapshots, as a
worker process would), sharing the embedder and the language-model composer.
A request takes the session that has waited longest and gives it back; when
all are busy it waits its turn in arrival order (``queue.Queue`` wakes waiters
first come, first served), so the slowest requests are not starved by newer
ones.

Each session loads its own index state (the tenant's vector matrix stays
resident per session), so ``size`` trades memory for concurrency. The work
of an answer that releases the GIL (SQLite, numpy, the embedding model) then
overlaps; the pure-Python stages run one at a time per process, and
``veracity serve --workers`` adds processes for those.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ...kb.local import LocalKnowledgeBase

__all__ = ["AnswerSession", "SessionPool"]


@dataclass(frozen=True, slots=True)
class AnswerSession:
    """One engine for answering, and the same engine answering from BM25 alone (dense down)."""

    kb: LocalKnowledgeBase
    lexical: LocalKnowledgeBase

    def close(self) -> None:
        """Close its knowledge base (the lexical one shares the connection) and its reranker's threads."""
        self.kb.close()
        close_reranker = getattr(self.kb.engine.reranker, "close", None)
        if callable(close_reranker):
            close_reranker()


class SessionPool:
    """See the module docstring."""

    def __init__(self, open_session: Callable[[], AnswerSession], size: int) -> None:
        """Open sessions with ``open_session`` when needed, at most ``size`` (≥ 1)."""
        if size < 1:
            raise ValueError(f"a session pool needs at least one session, got {size}")
        self.size = size
        self._open_session = open_session
        self._idle: queue.Queue[AnswerSession] = queue.Queue()
        self._lock = threading.Lock()
        self._opened: list[AnswerSession] = []
        self._reserved = 0  # sessions opened or being opened
        self._closed = False

    @contextmanager
    def session(self) -> Iterator[AnswerSession]:
        """A session for the block: an idle one, a new one while fewer than ``size`` exist, else
        the next one freed."""
        taken = self._take()
        try:
            yield taken
        finally:
            self._idle.put(taken)

    def _take(self) -> AnswerSession:
        if self._closed:
            raise RuntimeError("the session pool is closed")
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            grow = self._reserved < self.size
            self._reserved += grow
        if not grow:
            return self._idle.get()
        try:
            opened = self._open_session()
        except BaseException:
            with self._lock:
                self._reserved -= 1
            raise
        with self._lock:
            self._opened.append(opened)
        return opened

    def fill(self) -> None:
        """Open every session now (a service does, so its first questions do not pay for it)."""
        taken = []
        try:
            while True:
                with self._lock:
                    if self._reserved >= self.size:
                        break
                taken.append(self._take())
        finally:
            for session in taken:
                self._idle.put(session)

    @property
    def opened(self) -> int:
        """Sessions opened so far."""
        with self._lock:
            return len(self._opened)

    def close(self) -> None:
        """Close every session (call when no request is running)."""
        with self._lock:
            self._closed = True
            opened, self._opened = self._opened, []
        for session in opened:
            session.close()
