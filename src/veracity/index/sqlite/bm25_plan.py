"""BM25 over cached postings: the lexical plan both SQL indexes run.

The engine supplies a term's postings (``_read_postings``: FTS5 in SQLite, the
segment rows of ``ix<v>_postings`` in PostgreSQL); the rest is shared. Per
index generation the tenant's chunk arrays (:class:`~.views.TenantView`) and the
postings of the terms queries asked for are kept in memory, up to
:data:`POSTINGS_CACHE_ENTRIES`; each query builds the eligibility mask of its
documents over the tenant's chunks and scores with :func:`.fts.bm25_scores`,
statistics over the eligible chunks only, so a chunk the asker may not see
changes none of the asker's scores and gets no score of its own.

A mixin: :class:`~.entry.SearchEntry` checks the arguments before ``_lexical`` or
``_frequencies`` run; the index supplies ``_conn`` and ``_read_postings``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from operator import itemgetter
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .entry import Among, Frequencies, Hits, best_first
from .fts import Postings, bm25_scores, posting_positions, with_positions
from .views import IndexState, TenantView, load_doc_keys, load_tenant_view

__all__ = ["POSTINGS_CACHE_ENTRIES", "PostingsBM25"]

POSTINGS_CACHE_ENTRIES: Final = 2_000_000
"""Postings (chunk key + term frequency) kept in memory per index generation (~32 MB); the database
is read again for terms not kept. Frequent terms are the costly ones to read and the ones queries repeat."""


class PostingsBM25:
    """``_lexical`` and ``_frequencies`` over cached postings (see the module docstring)."""

    _conn: Any
    k1: float
    b: float

    def _read_postings(self, state: IndexState, view: TenantView, terms: Sequence[str]) -> Iterable[Postings]:
        """Postings of each of ``terms`` (distinct, sorted) in ``view``'s tenant; keys among ``view.keys``."""
        raise NotImplementedError

    def _doc_keys(self, state: IndexState) -> dict[str, int]:
        """Document id → the integer key the index's rows carry, read once per generation."""
        if state.doc_keys is None:
            state.doc_keys = load_doc_keys(self._conn, state.tables)
        return state.doc_keys

    def _postings(self, state: IndexState, view: TenantView, tokens: Sequence[str]) -> list[Postings]:
        """Postings of the distinct ``tokens`` (sorted), cached per generation up to a size bound."""
        cache = state.postings
        missing = sorted({t for t in tokens if (view.tenant, t) not in cache})
        state.postings_hits += len(set(tokens)) - len(missing)
        for found in self._read_postings(state, view, missing):
            found = with_positions(found, view.keys)  # once per generation, not per query
            if state.postings_size + found.keys.size > POSTINGS_CACHE_ENTRIES:
                cache.clear()
                state.postings_size = 0
            cache[(view.tenant, found.term)] = found
            state.postings_size += found.keys.size
        state.postings_reads += len(missing)
        return [cache[(view.tenant, t)] for t in sorted(set(tokens)) if (view.tenant, t) in cache]

    def _tenant(self, state: IndexState, tenant: str) -> TenantView | None:
        if tenant not in state.tenants:
            state.tenants[tenant] = load_tenant_view(self._conn, state.tables, tenant)
        return state.tenants[tenant]

    def _allowed(
        self, state: IndexState, view: TenantView, eligible: Collection[str]
    ) -> npt.NDArray[np.bool_]:
        cached = state.eligible
        if cached is not None and cached[2] == view.tenant and cached[0] == eligible:
            return cached[1]
        doc_keys = self._doc_keys(state)
        ids = list(eligible)
        found: Sequence[int]
        try:  # one C-level lookup for the common case where every id is indexed
            found = itemgetter(*ids)(doc_keys) if len(ids) > 1 else [doc_keys[d] for d in ids]
        except KeyError:
            found = [doc_keys[d] for d in ids if d in doc_keys]
        keys = np.asarray(found, dtype=np.int64)
        limit = int(max(view.doc_keys.max(initial=0), keys.max(initial=0))) + 1
        documents = np.zeros(limit, dtype=bool)
        documents[keys] = True
        mask = documents[view.doc_keys]
        state.eligible = (frozenset(eligible), mask, view.tenant)
        return mask

    def _eligible_rows(
        self, state: IndexState, among: Among
    ) -> tuple[TenantView, npt.NDArray[np.bool_]] | None:
        """The tenant's chunks and which of them are eligible; ``None`` when none is."""
        view = self._tenant(state, among.tenant)
        if view is None or view.keys.size == 0:
            return None
        allowed = self._allowed(state, view, among.eligible_document_ids)
        return (view, allowed) if allowed.any() else None

    def _top(
        self, view: TenantView, positions: npt.NDArray[np.intp], scores: npt.NDArray[np.floating], k: int
    ) -> Hits:
        """Best ``k`` by score, ties by chunk id (every boundary tie is kept before the cut)."""
        if positions.size > k:
            cut = positions.size - k
            kth = np.partition(scores, cut)[cut]
            keep = scores >= kth
            positions, scores = positions[keep], scores[keep]
        ids = view.chunk_ids
        return best_first([ids[p] for p in positions.tolist()], scores.tolist(), k)

    def _lexical(self, state: IndexState, among: Among, query_tokens: Sequence[str], k: int) -> Hits:
        """BM25 over the tenant's postings, for :meth:`.entry.SearchEntry.lexical_search`."""
        found = self._eligible_rows(state, among)
        if found is None:
            return []
        view, allowed = found
        positions, scores = bm25_scores(
            self._postings(state, view, query_tokens),
            query_tokens,
            keys=view.keys,
            lengths=view.lengths,
            allowed=allowed,
            k1=self.k1,
            b=self.b,
        )
        keep = scores > 0
        return self._top(view, positions[keep], scores[keep], k)

    def _frequencies(self, state: IndexState, among: Among, terms: Sequence[str]) -> Frequencies:
        """Counts from the tenant's postings, for :meth:`.entry.SearchEntry.document_frequencies`."""
        found = dict.fromkeys(terms, 0)
        eligible = self._eligible_rows(state, among)
        if eligible is None:
            return 0, found
        view, allowed = eligible
        for posting in self._postings(state, view, list(terms)):
            found[posting.term] = int(allowed[posting_positions(posting, view.keys)].sum())
        return int(allowed.sum()), found
