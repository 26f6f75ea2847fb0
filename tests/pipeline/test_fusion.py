"""Reciprocal rank fusion: hand-checked values, invariances, agreement with ranx."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veracity.model.errors import ConfigError
from veracity.pipeline.fusion import reciprocal_rank_fusion


def test_hand_checked_values() -> None:
    fused = reciprocal_rank_fusion({"lexical": ["a", "b", "c"], "semantic": ["c", "a"]}, k=60)
    assert fused == [
        ("a", pytest.approx(1 / 61 + 1 / 62)),
        ("c", pytest.approx(1 / 63 + 1 / 61)),
        ("b", pytest.approx(1 / 62)),
    ]
    assert fused[0][1] > fused[1][1] > fused[2][1]


def test_weights_and_k() -> None:
    fused = reciprocal_rank_fusion({"lexical": ["a", "b"], "semantic": ["b"]}, k=1, weights={"semantic": 3.0})
    assert fused == [("b", pytest.approx(1 / 3 + 3 / 2)), ("a", pytest.approx(1 / 2))]


def test_ties_break_by_id() -> None:
    fused = reciprocal_rank_fusion({"x": ["b", "a"], "y": ["a", "b"], "z": ["d"], "w": ["c"]})
    assert [doc_id for doc_id, _ in fused] == ["a", "b", "c", "d"]
    assert fused[0][1] == fused[1][1] and fused[2][1] == fused[3][1]


def test_empty_inputs() -> None:
    assert reciprocal_rank_fusion({}) == []
    assert reciprocal_rank_fusion({"lexical": [], "semantic": []}) == []


def test_duplicate_id_in_one_ranking_is_an_error() -> None:
    with pytest.raises(ValueError, match="twice"):
        reciprocal_rank_fusion({"lexical": ["a", "b", "a"]})


@pytest.mark.parametrize("k", [0, -1, float("nan"), float("inf"), True])
def test_k_must_be_positive(k: float) -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"lexical": ["a"]}, k=k)


def test_bad_weights_and_rankings() -> None:
    with pytest.raises(ConfigError, match="unknown channels"):
        reciprocal_rank_fusion({"lexical": ["a"]}, weights={"dense": 1.0})
    with pytest.raises(ConfigError):
        reciprocal_rank_fusion({"lexical": ["a"]}, weights={"lexical": -1.0})
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"lexical": "abc"})


ids = st.sampled_from([f"c{i}" for i in range(12)])
rankings = st.dictionaries(
    st.sampled_from(["lexical", "semantic", "sparse", "title", "recent"]),
    st.lists(ids, unique=True, max_size=10),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(rankings=rankings, seed=st.integers(0, 2**16), k=st.sampled_from([1, 2, 60, 0.5]))
def test_channel_order_does_not_matter(rankings: dict[str, list[str]], seed: int, k: float) -> None:
    channels = list(rankings.items())
    random.Random(seed).shuffle(channels)
    weights = {name: (i % 3) * 0.5 + 0.25 for i, name in enumerate(sorted(rankings))}
    expected = reciprocal_rank_fusion(rankings, k=k, weights=weights)
    shuffled = reciprocal_rank_fusion(dict(channels), k=k, weights=weights)
    assert shuffled == expected  # exact: scores are fsum'd, ties by id
    scores = [score for _, score in expected]
    assert scores == sorted(scores, reverse=True)
    assert {doc_id for doc_id, _ in expected} == {d for r in rankings.values() for d in r}


@pytest.mark.slow  # ranx compiles its numba kernels on first use (~30-90 s cold)
@pytest.mark.filterwarnings("ignore:unsafe cast")  # numba, inside ranx
def test_matches_ranx_rrf() -> None:
    ranx = pytest.importorskip("ranx")
    rng = random.Random(13)
    pool = [f"doc{i:03d}" for i in range(200)]
    channels = {name: rng.sample(pool, 50) for name in ("lexical", "semantic", "sparse")}
    runs = [
        ranx.Run({"q": {doc_id: float(100 - rank) for rank, doc_id in enumerate(ranking)}})
        for ranking in channels.values()
    ]
    combined = ranx.fuse(runs, norm=None, method="rrf").to_dict()["q"]
    ours = reciprocal_rank_fusion(channels)
    assert {doc_id for doc_id, _ in ours} == set(combined)
    for doc_id, score in ours:
        assert score == pytest.approx(combined[doc_id], abs=1e-12)
    theirs = sorted(combined.items(), key=lambda item: (-item[1], item[0]))
    assert [d for d, _ in ours] == [d for d, _ in theirs]
