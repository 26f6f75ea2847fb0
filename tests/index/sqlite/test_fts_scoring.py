"""BM25 over FTS5 postings: the ways of summing and of locating postings give equal scores.

Postings that carry their positions (``with_positions``, cached by the index) and
postings that do not, and query postings summed per chunk slot (many postings) or
grouped by sorting (few), must give exactly the same positions and scores.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veracity.index.sqlite import fts
from veracity.index.sqlite.fts import Postings, bm25_scores, with_positions


def corpus(seed: int, chunks: int, terms: int) -> tuple[np.ndarray, np.ndarray, list[Postings], np.ndarray]:
    rng = np.random.default_rng(seed)
    keys = np.sort(rng.choice(10 * chunks, size=chunks, replace=False)).astype(np.int64)
    lengths = rng.integers(5, 400, size=chunks).astype(np.int64)
    postings = []
    for t in range(terms):
        share = rng.uniform(0.001, 0.9)
        picked = np.sort(rng.choice(chunks, size=max(1, int(share * chunks)), replace=False))
        frequencies = rng.integers(1, 9, size=picked.size).astype(np.int64)
        postings.append(Postings(f"t{t}", keys[picked], frequencies))
    allowed = rng.random(chunks) < rng.uniform(0.05, 1.0)
    return keys, lengths, postings, allowed


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), chunks=st.integers(1, 3000), terms=st.integers(1, 6))
def test_summing_and_locating_give_equal_scores(seed: int, chunks: int, terms: int) -> None:
    keys, lengths, postings, allowed = corpus(seed, chunks, terms)
    tokens = [p.term for p in postings] + [postings[0].term]  # a repeated term counts twice
    located = [with_positions(p, keys) for p in postings]
    results = []
    for share in (10**9, 1):  # always sort and group; always sum per slot
        for given_postings in (postings, located):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(fts, "DENSE_SUM_SHARE", share)
                results.append(bm25_scores(given_postings, tokens, keys=keys, lengths=lengths,
                                           allowed=allowed, k1=1.2, b=0.75))  # fmt: skip
    first_positions, first_scores = results[0]
    for positions, scores in results[1:]:
        assert np.array_equal(positions, first_positions)
        assert np.array_equal(scores, first_scores)  # bit for bit: the same additions in the same order


def test_postings_outside_the_tenant_are_refused() -> None:
    keys = np.array([2, 4, 6], dtype=np.int64)
    with pytest.raises(LookupError, match="outside the tenant index"):
        stray = Postings("x", np.array([4, 5], dtype=np.int64), np.array([1, 1], dtype=np.int64))
        with_positions(stray, keys)
