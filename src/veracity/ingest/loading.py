"""Parse and chunk the files of one ingest ahead of the catalog writer, on worker processes.

Parsing, metadata resolution and chunking are pure functions of a file and the
ingest's options, and they are most of an ingest's CPU time (measured on synthetic
Markdown: parse ≈ 42%, chunk ≈ 8%; the catalog and index writes that must stay in
one process are the rest). :class:`SourceLoader` hands them to a process pool and
gives the results back **in file order**, so what the catalog, ledger and index
see, and in what order, is the same as a serial ingest's: only the waiting moves.

- Too few files for a pool to pay for its start (``PARALLEL_MIN_FILES``),
  ``jobs == 1``, or a process that cannot fork safely (see :func:`_can_fork`):
  everything runs in this process, as before.
- A file a worker could not load is loaded again here, so the error raised (and
  the ledger's reason) is exactly the serial one.
- Chunks cut by a worker are used only if the document the writer stores is the
  one the worker chunked (numbering a revision changes the id, and chunk ids
  derive from it); otherwise they are cut again here. The worker also judges
  them for injection (:mod:`veracity.ingest.verdicts`): a verdict is filed under its
  text and headings, which numbering does not change. And it tokenizes them for the
  lexical index (:mod:`veracity.index.ahead`), which the single writer did before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Final

from ..catalog.sources import RecordedFile
from ..index.ahead import joined_index_tokens
from ..model.contracts import Chunk, Document
from ..parse.batch import load_source
from ..parse.chunking import chunk_for_index
from ..parse.nodes import ParsedSource
from ..parse.pages import with_pages
from .fingerprints import file_fingerprint, options_key
from .sources import SourceFile
from .verdicts import judge_texts

__all__ = [
    "MAX_DEFAULT_JOBS",
    "PARALLEL_MIN_FILES",
    "Loaded",
    "Recorded",
    "SourceLoader",
    "Unparsed",
    "chunks_of",
    "default_jobs",
]

PARALLEL_MIN_FILES: Final = 64
"""Fewer files than this are loaded in this process: starting and feeding workers costs more."""

MAX_DEFAULT_JOBS: Final = 8
"""The default never takes more worker processes than this (the writer is serial past ≈ 3)."""

PR_SET_PDEATHSIG: Final = 1
"""Linux ``prctl`` option: the signal a process gets when its parent dies."""

FILES_PER_TASK: Final = 8
"""Files per task sent to a worker (fewer round trips than one file each)."""

FILES_AHEAD: Final = 256
"""Files handed to the workers ahead of the writer: about one catalog transaction's worth
(``veracity.ingest.run.FILES_PER_TRANSACTION``), so that the workers keep parsing while the
writer indexes what a transaction committed. With 64 files ahead (4 tasks a worker, 2 workers)
they sat idle then, and the writer waited for them 8 of the 33 s of an ingest of 100k chunks
(``benchmarks/bench_ingest.py``); with 256, 0.5 s."""

TASKS_PER_WORKER: Final = 2
"""Tasks in flight per worker at the least, however many workers there are."""

WORKER_STEPS: Final = ("load", "tokenize", "judge")
"""What the workers' CPU time is spent on: parse and chunk, index tokens, injection verdicts."""

Verdicts = list[tuple[str, tuple[str, ...]]]
Loaded = tuple[
    Document,
    ParsedSource,
    tuple[Chunk, ...] | None,
    Verdicts | None,
    tuple[str | None, ...] | None,
    str | None,
]
"""A loaded file: its document, its parse (from a worker, what the writer reads of it:
:func:`_for_writer`), the chunks a worker cut (``None``: not cut), the
injection verdicts it judged on them (:mod:`veracity.ingest.verdicts`; ``None``: not judged),
their index tokens (:func:`veracity.index.ahead.joined_index_tokens`; ``None``: not tokenized)
and the file's fingerprint (:mod:`veracity.ingest.fingerprints`; ``None``: none is kept)."""


@dataclass(frozen=True, slots=True)
class Unparsed:
    """A file not parsed: its fingerprint is the one recorded when it was last ingested."""

    recorded: RecordedFile
    fingerprint: str


def default_jobs() -> int:
    """Worker processes when none are asked for: the usable CPUs, at most ``MAX_DEFAULT_JOBS``."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_DEFAULT_JOBS, usable or 1))


def _can_fork() -> bool:
    """Whether worker processes may be forked from this one.

    Forked, not spawned: a spawned worker runs the caller's main module again, which
    breaks every script without an ``if __name__ == "__main__"`` guard. Forking is
    sound on Linux (macOS frameworks refuse it) when no other thread could hold a lock
    the child needs: CPython resets its own (imports, logging) at a fork, so only
    non-daemon threads are refused (a service's request threads may be tokenizing);
    daemon helpers such as a progress bar's refresher never touch what a worker runs.
    A worker never touches the parent's database connection and leaves by
    ``os._exit``, so no SQLite handle is used or closed on the child's side.
    """
    if sys.platform != "linux":
        return False
    main = threading.main_thread()
    return all(thread is main or thread.daemon for thread in threading.enumerate())


def _die_with_parent(parent: int) -> None:
    """Worker start: exit when the writer does, even killed (``kill -9`` sends nothing to a pool).

    An orphaned worker would wait on its task queue forever, holding the writer's
    standard streams open.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not glibc-like: workers then end when their queue closes
        pass
    if os.getppid() != parent:  # the writer died before the line above took effect
        os._exit(1)


_KNOWN: set[str] = set()
"""In a worker: the ids of the documents the catalog held when the ingest began."""
_RECORDED: dict[tuple[str, str], RecordedFile] = {}
"""In a worker: what each file was when last ingested (:mod:`veracity.ingest.fingerprints`)."""


def _start_worker(parent: int, known: frozenset[str], recorded: dict[tuple[str, str], RecordedFile]) -> None:
    """Worker start: die with the writer; remember which documents the catalog holds and what the
    files were (handed over by the fork, not pickled with every task)."""
    _die_with_parent(parent)
    _KNOWN.clear()
    _KNOWN.update(known)
    _RECORDED.clear()
    _RECORDED.update(recorded)


def chunks_of(document: Document, parsed: ParsedSource, cut: tuple[Chunk, ...] | None) -> tuple[Chunk, ...]:
    """The chunks ``document`` is stored with: ``cut`` when a worker cut them from this very
    document (numbering a revision changes the id the chunk ids derive from), else cut now."""
    if cut and cut[0].document_id == document.document_id:
        return cut
    return with_pages(chunk_for_index(document), parsed)


def _for_writer(parsed: ParsedSource) -> ParsedSource:
    """What the writer reads of a parse: its diagnostics (for the ledger) and, for a source with
    pages, the body and nodes :func:`with_pages` re-reads when a numbered revision is cut again.
    A source without pages goes back without them (its nodes were most of what a worker pickled
    and the writer unpickled, and ``with_pages`` returns a pageless source's chunks as given)."""
    if any(node.page is not None for node in parsed.nodes):
        return parsed
    return replace(parsed, body="", nodes=(), metadata={})


Recorded = Mapping[tuple[str, str], RecordedFile]
"""What each file was when last ingested, by ``(root, path)`` (:attr:`.sources.SourceFile.location`)."""


def _fingerprinted(
    file: SourceFile, options: dict[str, Any], key: str | None, recorded: Recorded
) -> tuple[Document, ParsedSource, str | None] | Unparsed:
    """The file parsed, with its fingerprint (``None``: ``key`` is, or the source has pages), or
    :class:`Unparsed` when the fingerprint is the one ``recorded``."""
    fingerprint = file_fingerprint(file.path, key) if key is not None else None
    found = recorded.get(file.location) if fingerprint is not None else None
    if found is not None and fingerprint == found.fingerprint:
        return Unparsed(found, fingerprint)
    return _parsed(file, options, fingerprint)


def _parsed(
    file: SourceFile, options: dict[str, Any], fingerprint: str | None
) -> tuple[Document, ParsedSource, str | None]:
    document, parsed = load_source(file.path, relative=file.source, **options)
    return document, parsed, fingerprint if parsed.diagnostics.pages_total is None else None


def _load_in_worker(
    file: SourceFile, options: dict[str, Any], key: str | None, judge: bool, spent: dict[str, float]
) -> Loaded | Unparsed | None:
    """Load and chunk one file (and, with ``judge``, judge it for injection); ``None`` when it
    fails (the writer loads it again to raise). Adds the CPU seconds of each step to ``spent``."""
    try:
        start = time.process_time()
        found = _fingerprinted(file, options, key, _RECORDED)
        if isinstance(found, Unparsed):
            spent["load"] += time.process_time() - start
            return found
        document, parsed, fingerprint = found
        parsed_for_writer = _for_writer(parsed)
        if document.document_id in _KNOWN:  # stored already: the writer needs neither chunks nor tokens
            spent["load"] += time.process_time() - start
            return document, parsed_for_writer, None, None, None, fingerprint
        chunks = chunks_of(document, parsed, None)
        loaded = time.process_time()
        tokens = tuple(joined_index_tokens(chunk) for chunk in chunks)
        tokenized = time.process_time()
        verdicts = judge_texts(document, chunks) if judge else None
        spent["load"] += loaded - start
        spent["tokenize"] += tokenized - loaded
        spent["judge"] += time.process_time() - tokenized
        return document, parsed_for_writer, chunks, verdicts, tokens, fingerprint
    except Exception:
        return None


LoadedBatch = tuple[list[Loaded | Unparsed | None], dict[str, float]]
"""A task's files loaded (``None``: failed in the worker) and the CPU seconds spent on each step."""


def _load_batch(
    batch: list[SourceFile], options: dict[str, Any], key: str | None, judge: bool
) -> LoadedBatch:
    spent = dict.fromkeys(WORKER_STEPS, 0.0)
    return [_load_in_worker(file, options, key, judge, spent) for file in batch], spent


class SourceLoader:
    """Loads the files of one ingest in order, ahead of the writer when there are enough of them.

    At most :data:`FILES_AHEAD` files (or ``TASKS_PER_WORKER × jobs`` tasks, when more) are
    parsed but not yet written, so memory stays bounded however far the workers could run
    ahead of the writer.
    """

    def __init__(
        self,
        files: Sequence[SourceFile],
        options: dict[str, Any],
        *,
        jobs: int | None = None,
        judge: bool = True,
        known: Callable[[], frozenset[str]] | None = None,
        recorded: Recorded | None = None,
    ) -> None:
        """``judge``: workers judge the chunks for injection too (when the store keeps verdicts).
        ``known``: the ids of the documents the catalog holds, asked for when workers start; a
        file that loads as one of them is stored already (unchanged), so its worker neither
        chunks, tokenizes nor judges it. ``recorded``: what the files were when last ingested
        (:mod:`veracity.ingest.fingerprints`); a file whose fingerprint is the recorded one is
        :class:`Unparsed`. ``None``: no fingerprints (a catalog that keeps no sources)."""
        self._options = options
        self._judge = judge
        self._recorded = dict(recorded or {})
        self._key = options_key(options) if recorded is not None else None
        self.jobs = default_jobs() if jobs is None else max(1, int(jobs))
        self._tasks_ahead = max(FILES_AHEAD // FILES_PER_TASK, TASKS_PER_WORKER * self.jobs)
        self._executor: ProcessPoolExecutor | None = None
        self._batches: Iterator[list[SourceFile]] = iter(())
        self._pending: deque[tuple[list[SourceFile], Future[LoadedBatch]]] = deque()
        self.worker_seconds = dict.fromkeys(WORKER_STEPS, 0.0)
        """CPU seconds the workers spent on each of :data:`WORKER_STEPS` for the files handed out."""
        self._ready: deque[tuple[SourceFile, Loaded | Unparsed | None]] = deque()
        if self.jobs > 1 and len(files) >= PARALLEL_MIN_FILES and _can_fork():
            self._executor = ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_start_worker,
                initargs=(os.getpid(), known() if known is not None else frozenset(), self._recorded),
            )
            starts = range(0, len(files), FILES_PER_TASK)
            self._batches = (list(files[i : i + FILES_PER_TASK]) for i in starts)
            self._fill()

    def _fill(self) -> None:
        assert self._executor is not None
        while len(self._pending) < self._tasks_ahead:
            batch = next(self._batches, None)
            if batch is None:
                return
            self._pending.append(
                (batch, self._executor.submit(_load_batch, batch, self._options, self._key, self._judge))
            )

    @property
    def parallel(self) -> bool:
        """Whether worker processes load the files."""
        return self._executor is not None

    def load(self, file: SourceFile) -> Loaded | Unparsed:
        """The next file's document, parse and chunks (or :class:`Unparsed`); files must be asked
        for in the given order."""
        found: Loaded | Unparsed | None = None
        if self._executor is not None:
            if not self._ready:
                batch, future = self._pending.popleft()
                results, spent = future.result()
                self._ready.extend(zip(batch, results, strict=True))
                for step, seconds in spent.items():
                    self.worker_seconds[step] += seconds
                self._fill()
            expected, found = self._ready.popleft()
            if expected.source != file.source:
                raise RuntimeError(f"files asked out of order: {file.source!r}, expected {expected.source!r}")
        if found is None:
            here = _fingerprinted(file, self._options, self._key, self._recorded)
            if isinstance(here, Unparsed):
                return here
            document, parsed, fingerprint = here
            return document, parsed, None, None, None, fingerprint
        return found

    def parse(self, file: SourceFile) -> Loaded:
        """``file`` parsed in this process, whatever was recorded of it (an :class:`Unparsed` file
        whose document is no longer the latest revision of its source)."""
        fingerprint = file_fingerprint(file.path, self._key) if self._key is not None else None
        document, parsed, kept = _parsed(file, self._options, fingerprint)
        return document, parsed, None, None, None, kept

    def close(self) -> None:
        """Stop the workers (files not yet asked for are dropped)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
            self._pending.clear()
            self._ready.clear()

    def __enter__(self) -> SourceLoader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
