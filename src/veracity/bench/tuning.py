"""The explainable reranker's pure parts over fused candidates, and tuning its weights.

Benchmarks have no governance metadata (trust, version, instructions are the
same for every candidate), so only three parts of
:class:`veracity.rerank.ExplainableReranker` can change an order, and only they
are used here, computed exactly as the engine does:

- ``coverage``: best share of one sub-question's terms found in the document
  (:func:`veracity.rerank.coverage`);
- ``fusion``: the fused RRF score divided by the best fused score of the query;
- ``semantic``: the query-document cosine, clipped at 0.

Score = ``w.coverage * coverage + w.fusion * fusion + w.semantic * semantic``,
ties by document id. :func:`tune_weights` picks the weights by nDCG@10 on a
*tuning* split (a train split, never the test queries) with a small grid.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..questions import SubQuestion, split_subquestions
from ..rerank import RerankWeights, coverage

PARTS = ("coverage", "fusion", "semantic")
COVERAGE_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8)
SEMANTIC_GRID = (0.0, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)
FUSION_GRID = (0.0, 1.0)


def query_subquestions(
    text: str, analyzer: Callable[[str], list[str]], *, english: bool
) -> tuple[SubQuestion, ...]:
    """Sub-questions for coverage; with the English analyzer, one made of its stemmed terms.

    The engine's :func:`veracity.questions.split_subquestions` uses the zh/en
    tokenizer; English benchmarks index stemmed terms, so coverage must use
    them too or it would never match a stemmed document term.
    """
    if not english:
        return split_subquestions(text)
    terms = tuple(dict.fromkeys(analyzer(text)))
    return (SubQuestion(text=text, terms=terms, focus_nouns=()),) if terms else ()


def candidate_parts(
    subquestions: Sequence[SubQuestion],
    fused: Sequence[tuple[str, float]],
    doc_terms: Mapping[str, frozenset[str]],
    cosines: Sequence[float],
) -> np.ndarray:
    """``(len(fused), 3)`` array of (coverage, fusion, semantic) per candidate, in fused order."""
    best = max((score for _, score in fused), default=0.0)
    rows = [
        (
            coverage(subquestions, doc_terms[doc_id]),
            score / best if best > 0 else 0.0,
            max(0.0, float(cosine)),
        )
        for (doc_id, score), cosine in zip(fused, cosines, strict=True)
    ]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(PARTS))


def weight_vector(weights: RerankWeights) -> np.ndarray:
    """The (coverage, fusion, semantic) weights as an array."""
    return np.array([weights.coverage, weights.fusion, weights.semantic], dtype=np.float64)


def rerank_order(ids: Sequence[str], parts: np.ndarray, weights: RerankWeights) -> list[tuple[str, float]]:
    """Candidates reordered by the weighted sum of their parts, ties by id ascending."""
    scores = parts @ weight_vector(weights) if len(ids) else np.zeros(0)
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    return [(ids[i], float(scores[i])) for i in order]


@dataclass(frozen=True)
class TuningQuery:
    """One tuning query's candidates: ids (fused order), parts, and their relevance grades."""

    ids: tuple[str, ...]
    parts: np.ndarray
    gains: np.ndarray
    ideal_dcg: float


def tuning_query(ids: Sequence[str], parts: np.ndarray, relevant: Mapping[str, float]) -> TuningQuery:
    """Pack one query for :func:`tune_weights` (gains in candidate order, IDCG@10 from qrels)."""
    gains = np.array([float(relevant.get(doc_id, 0.0)) for doc_id in ids], dtype=np.float64)
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:10]
    idcg = float(sum(g / np.log2(r + 2) for r, g in enumerate(ideal)))
    return TuningQuery(tuple(ids), parts, gains, idcg)


def _mean_ndcg10(queries: Sequence[TuningQuery], w: np.ndarray) -> float:
    discounts = 1.0 / np.log2(np.arange(2, 12))
    total = 0.0
    for q in queries:
        if not q.ids or q.ideal_dcg <= 0:
            continue
        scores = q.parts @ w
        # candidates are pre-sorted by id in _by_id, so a stable sort breaks ties by id
        top = np.argsort(-scores, kind="stable")[:10]
        total += float(q.gains[top] @ discounts[: top.size]) / q.ideal_dcg
    return total / max(1, sum(1 for q in queries if q.ideal_dcg > 0))


def _by_id(query: TuningQuery) -> TuningQuery:
    order = sorted(range(len(query.ids)), key=query.ids.__getitem__)
    return TuningQuery(
        tuple(query.ids[i] for i in order), query.parts[order], query.gains[order], query.ideal_dcg
    )


def tune_weights(queries: Sequence[TuningQuery]) -> tuple[RerankWeights, float, int]:
    """Best weights on the grid by mean nDCG@10, their score, and the grid size.

    Ties between grid points go to the first one in grid order (fusion-only
    first), so the result is deterministic.
    """
    prepared = [_by_id(q) for q in queries]
    best: tuple[float, tuple[float, float, float]] = (-1.0, (0.0, 1.0, 0.0))
    count = 0
    for fusion, cov, sem in itertools.product(FUSION_GRID[::-1], COVERAGE_GRID, SEMANTIC_GRID):
        if fusion == cov == sem == 0.0:
            continue
        count += 1
        score = _mean_ndcg10(prepared, np.array([cov, fusion, sem]))
        if score > best[0] + 1e-12:
            best = (score, (cov, fusion, sem))
    cov, fusion, sem = best[1]
    weights = RerankWeights(
        coverage=cov, fusion=fusion, semantic=sem, required=0.0, trust=0.0, version_fit=0.0, instruction=0.0
    )
    return weights, best[0], count
