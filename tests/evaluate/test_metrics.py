"""Metric functions: agreement with ranx, the None-when-undefined rule, edge cases."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veracity.evaluate.metrics import (
    aggregate,
    average_precision,
    citation_precision,
    citation_recall,
    dedup_ranking,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    round_metric,
    supported_fact_ratio,
)
from veracity.model.errors import ConfigError

POOL = [f"d{i:02d}" for i in range(30)]


def random_queries(seed: int, n: int = 150) -> dict[str, tuple[list[str], dict[str, int]]]:
    """Query id -> (ranking with repeats, graded judgments); every 10th query has none."""
    rng = random.Random(seed)
    queries = {}
    for q in range(n):
        ranking = rng.sample(POOL, rng.randint(1, 15))
        for _ in range(rng.randint(0, 3)):  # repeats: metrics count unique ids
            ranking.insert(rng.randrange(len(ranking) + 1), rng.choice(ranking))
        judged = {} if q % 10 == 0 else {d: rng.randint(1, 3) for d in rng.sample(POOL, rng.randint(1, 8))}
        queries[f"q{q:03d}"] = (ranking, judged)
    return queries


RANX_METRICS = {
    "precision": lambda ranked, rel, k: precision_at_k(ranked, rel, k),
    "recall": lambda ranked, rel, k: recall_at_k(ranked, rel, k),
    "mrr": lambda ranked, rel, k: reciprocal_rank(ranked, rel, k),
    "ndcg": lambda ranked, rel, k: ndcg_at_k(ranked, rel, k),
    "map": lambda ranked, rel, k: average_precision(ranked, rel, k),
}
CUTOFFS = (1, 3, 5, 10, 20)


@pytest.mark.slow  # ranx compiles its numba kernels on first use (~30-90 s cold)
@pytest.mark.filterwarnings("ignore:unsafe cast")  # numba, inside ranx
def test_metrics_match_ranx_per_query() -> None:
    ranx = pytest.importorskip("ranx")
    queries = random_queries(21)
    judged = {q: (ranking, rel) for q, (ranking, rel) in queries.items() if rel}
    qrels = ranx.Qrels({q: rel for q, (_, rel) in judged.items()})
    run = ranx.Run(
        {
            q: {d: float(100 - rank) for rank, d in enumerate(dedup_ranking(ranking))}
            for q, (ranking, _) in judged.items()
        }
    )
    names = [f"{metric}@{k}" for metric in RANX_METRICS for k in CUTOFFS]
    ranx.evaluate(qrels, run, names, return_mean=False, threads=1)
    for name in names:
        metric, k = name.split("@")
        for q, (ranking, rel) in judged.items():
            ours = RANX_METRICS[metric](ranking, rel, int(k))
            assert ours == pytest.approx(run.scores[name][q], abs=1e-12), (name, q)
            # binary judgments: same relevant set, grades dropped
            if metric != "ndcg":
                assert RANX_METRICS[metric](ranking, set(rel), int(k)) == pytest.approx(ours)


def test_undefined_is_none_never_zero() -> None:
    for ranking, rel in random_queries(22).values():
        for function in RANX_METRICS.values():
            value = function(ranking, rel, 5)
            assert (value is None) == (not rel)
    assert precision_at_k(["a"], {}, 3) is None
    assert recall_at_k(["a"], set(), 3) is None
    assert reciprocal_rank(["a"], []) is None
    assert average_precision(["a"], {"a": 0}) is None  # grade 0 is not relevant
    assert ndcg_at_k([], {"a": -1, "b": 0}, 3) is None
    # defined but zero: relevant documents exist and none was found
    assert precision_at_k([], {"a"}, 3) == 0.0
    assert reciprocal_rank(["b"], {"a"}) == 0.0


def test_precision_denominator_is_k_for_short_rankings() -> None:
    assert precision_at_k(["a", "b"], {"a", "b"}, 10) == pytest.approx(0.2)
    assert precision_at_k(["a", "a", "a"], {"a"}, 3) == pytest.approx(1 / 3)  # unique ids
    assert recall_at_k(["a", "b"], {"a", "b", "c", "d"}, 10) == pytest.approx(0.5)


def test_hand_checked_values() -> None:
    ranked = ["x", "a", "y", "b"]
    assert reciprocal_rank(ranked, {"a", "b"}) == 0.5
    assert reciprocal_rank(ranked, {"a", "b"}, k=1) == 0.0
    assert average_precision(ranked, {"a", "b", "c"}) == pytest.approx((1 / 2 + 2 / 4) / 3)
    graded = {"a": 3, "b": 1, "c": 2}
    dcg = 3 / math.log2(3) + 1 / math.log2(5)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(ranked, graded, 4) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["a", "c", "b"], graded, 3) == pytest.approx(1.0)


def test_dedup_ranking_keeps_first_occurrence() -> None:
    assert dedup_ranking(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]
    assert dedup_ranking([]) == []


@given(st.lists(st.sampled_from("abcdef"), max_size=12), st.sets(st.sampled_from("abcdef")))
def test_bounds_and_repeats(ranked: list[str], relevant: set[str]) -> None:
    for function in RANX_METRICS.values():
        value = function(ranked, relevant, 4)
        if not relevant:
            assert value is None
        else:
            assert value is not None and 0.0 <= value <= 1.0 + 1e-12
        assert function(ranked + ranked, relevant, 4) == value  # repeats change nothing


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3"])
def test_bad_cutoffs(k: object) -> None:
    with pytest.raises(ConfigError):
        precision_at_k(["a"], {"a"}, k)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        ndcg_at_k(["a"], {"a"}, k)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        reciprocal_rank(["a"], {"a"}, k)  # type: ignore[arg-type]


def test_relevant_as_a_string_is_refused() -> None:
    with pytest.raises(ConfigError):
        recall_at_k(["a"], "abc", 3)


def test_citation_precision() -> None:
    assert citation_precision([], {"c1"}) == 1.0  # no citations: nothing cited wrongly
    assert citation_precision(["c1", "c2", "c1", "zz"], {"c1", "c2"}) == 0.75
    assert citation_precision([1, 2, 3], {1}) == pytest.approx(1 / 3)
    with pytest.raises(ConfigError):
        citation_precision("c1", {"c1"})


def test_citation_recall_and_supported_fact_ratio() -> None:
    assert citation_recall(["f1", "f1", "f3"], ["f1", "f2"]) == 0.5
    assert citation_recall(["f1"], []) is None
    assert citation_recall([], ["f1"]) == 0.0
    assert supported_fact_ratio(["f1", "f2", "f2"], ["f2", "f9"]) == 0.5
    assert supported_fact_ratio([], ["f1"]) is None


def test_aggregate_and_rounding() -> None:
    assert aggregate([None, 0.5, None, 1.0]) == 0.75
    assert aggregate([None, None]) is None
    assert aggregate([]) is None
    assert aggregate([0.0]) == 0.0
    assert aggregate([0.1] * 10) == pytest.approx(0.1, abs=0)  # exact-rounded sum
    assert round_metric(2 / 3) == 0.6667
    assert round_metric(2 / 3, places=2) == 0.67
    assert round_metric(None) is None
