"""Bringing the search index up to the catalog during and after an ingest.

The index is derived from the catalog, so it is written only from what a catalog
transaction has committed. Without a model step (a lexical-only index, no embedder),
what each transaction wrote is indexed right after it commits: the writer would
otherwise wait there for the parse workers, and the index phase after the last file
ran on one core while the workers sat idle (a quarter of an ingest's wall time,
measured on the synthetic corpus of ``benchmarks/bench_ingest.py``). With an
embedder, everything is indexed after the last file, under the ``index`` progress
stage: embedding is the long step, and its bar says so.

Either way a final :meth:`~veracity.index.versioned.VersionedIndex.sync` follows,
which indexes whatever is not indexed yet and carries removals and governance
changes (a revision's retired predecessor, pruned sources) into every kept version.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields

from ..index.ahead import AheadTokens
from ..index.sqlite.search import SyncReport
from ..index.versioned import VersionedIndex, is_versioned
from ..model.contracts import Chunk, Document
from ..pipeline.engine import Engine

__all__ = ["IndexFeed", "summed"]

Progress = Callable[[str, int, int], None]


def summed(reports: Sequence[SyncReport]) -> SyncReport:
    """One report that adds up every count and timing of ``reports``."""
    return SyncReport(**{f.name: sum(getattr(r, f.name) for r in reports) for f in fields(SyncReport)})


class IndexFeed:
    """Indexes an ingest's committed writes: as they commit when it can, the rest at the end."""

    def __init__(self, kb: Engine, tokens: AheadTokens) -> None:
        """``tokens``: the index tokens the parse workers computed (taken once each)."""
        self._kb = kb
        self._tokens = tokens
        backend = kb.snapshot
        self._versioned = backend if is_versioned(backend) else None
        self._early: VersionedIndex | None = None
        if self._versioned is not None and kb.embedder is None and self._versioned.vector_model() is None:
            self._early = self._versioned
        self._reports: list[SyncReport] = []

    def committed(self, written: Sequence[tuple[Document, Sequence[Chunk]]]) -> None:
        """Index ``written`` (documents a catalog transaction has just committed) when the index
        is lexical only; otherwise the final :meth:`finish` indexes them."""
        if self._early is not None and written:
            self._reports.append(self._early.add(written, None, tokens=self._tokens))

    def finish(self, progress: Progress | None) -> SyncReport:
        """Make the index match the catalog; the report counts what :meth:`committed` indexed too."""
        backend = self._versioned
        if backend is None:
            self._kb.reindex()
            return summed(self._reports)
        callback = (lambda done, total: progress("index", done, total)) if progress else None
        final = backend.sync(self._kb.catalog, self._kb.embedder, progress=callback, tokens=self._tokens)
        return summed([*self._reports, final])
