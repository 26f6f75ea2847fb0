"""Pure parts of the benchmark: rerank parts, weight tuning, the English analyzer."""

from __future__ import annotations

import numpy as np
import pytest

from veracity.bench.tuning import (
    PartWeights,
    candidate_parts,
    mean_ndcg10,
    pack_tuning,
    rerank_order,
    tune_weights,
)
from veracity.text.questions import SubQuestion


def test_parts_are_normalized_per_query() -> None:
    subq = (SubQuestion(text="q", terms=("cat", "purr")),)
    fused = [("d1", 0.03), ("d2", 0.015)]
    terms = {"d1": frozenset({"cat"}), "d2": frozenset({"cat", "purr"})}
    parts = candidate_parts(subq, fused, terms, [0.5, -0.2], {"d1": 4.0, "d2": 8.0})
    assert parts.tolist() == [[0.5, 1.0, 0.5, 0.5], [1.0, 0.5, 0.0, 1.0]]


def test_rerank_order_breaks_ties_by_id() -> None:
    parts = np.array([[1.0, 0, 0, 0], [1.0, 0, 0, 0], [0.5, 0, 0, 0]])
    order = rerank_order(["b", "a", "c"], parts, PartWeights(coverage=1.0, fusion=0.0, semantic=0.0))
    assert [doc for doc, _ in order] == ["a", "b", "c"]


def test_tuning_finds_the_part_that_ranks_relevant_first() -> None:
    # the fused order puts the relevant document last; only the semantic part knows better
    candidates = {}
    qrels = {}
    for q in range(5):
        ids = [f"q{q}-d{i}" for i in range(4)]
        parts = np.zeros((4, 4))
        parts[:, 1] = [1.0, 0.9, 0.8, 0.7]  # fusion
        parts[:, 2] = [0.1, 0.1, 0.1, 0.9]  # semantic
        candidates[str(q)] = (ids, parts)
        qrels[str(q)] = {ids[3]: 1}
    data = pack_tuning(candidates, qrels)
    fusion_only = mean_ndcg10(data, PartWeights(coverage=0, fusion=1, semantic=0).vector())
    assert fusion_only == pytest.approx(1 / np.log2(5))
    weights, best, grid = tune_weights(data)
    assert best == pytest.approx(1.0)
    assert weights.semantic > 0 and grid > 100


def test_english_analyzer_follows_lucene() -> None:
    pytest.importorskip("Stemmer")
    from veracity.text.english import tokenize_en

    text = "The cell's growth rates of 1,000 mice, e.g. in IL-6 studies; 数据库 abc"
    assert tokenize_en(text) == [
        "cell",
        "growth",
        "rate",
        "1,000",
        "mice",
        "e.g",
        "il",
        "6",
        "studi",
        "数据库",
        "abc",
    ]
