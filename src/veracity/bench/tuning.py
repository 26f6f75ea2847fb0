"""The explainable reranker's pure parts over fused candidates, and tuning their weights.

Benchmarks have no governance metadata (trust, version, instructions are the
same for every candidate), so only the parts of
:class:`veracity.pipeline.rerank.ExplainableReranker` that can change an order are used,
computed as the engine does, plus the BM25 score that the engine's hits carry
as ``scores.lexical``:

- ``coverage``: best share of one sub-question's terms found in the document
  (:func:`veracity.pipeline.rerank.coverage`);
- ``fusion``: the fused RRF score divided by the best fused score of the query;
- ``semantic``: the query-document cosine, clipped at 0;
- ``lexical``: the BM25 score divided by the best BM25 score among the candidates.

Score = the weighted sum of the parts, ties by document id. :func:`tune_weights`
picks the weights by nDCG@10 on a *tuning* split (a train split, never the
evaluated queries) over a small grid.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..pipeline.rerank import RerankWeights, coverage
from ..text.questions import SubQuestion, split_subquestions

PARTS = ("coverage", "fusion", "semantic", "lexical")
COVERAGE_GRID = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)
SEMANTIC_GRID = (0.0, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4)
LEXICAL_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
FUSION_GRID = (1.0, 0.0)
_ENGINE = RerankWeights()


@dataclass(frozen=True)
class PartWeights:
    """Weights of the rerank parts (see the module docstring)."""

    coverage: float = _ENGINE.coverage
    fusion: float = _ENGINE.fusion
    semantic: float = _ENGINE.semantic
    lexical: float = 0.0

    def vector(self) -> np.ndarray:
        """The weights in :data:`PARTS` order."""
        return np.array([getattr(self, name) for name in PARTS], dtype=np.float64)

    def to_dict(self) -> dict[str, float]:
        """Plain data for reports."""
        return asdict(self)


def query_subquestions(
    text: str, analyzer: Callable[[str], list[str]], *, english: bool
) -> tuple[SubQuestion, ...]:
    """Sub-questions for coverage; with the English analyzer, one made of its stemmed terms.

    The engine's :func:`veracity.text.questions.split_subquestions` uses the zh/en
    tokenizer; English benchmarks index stemmed terms, so coverage must use
    them too or it would never match a stemmed document term.
    """
    if not english:
        return split_subquestions(text)
    terms = tuple(dict.fromkeys(analyzer(text)))
    return (SubQuestion(text=text, terms=terms),) if terms else ()


def candidate_parts(
    subquestions: Sequence[SubQuestion],
    fused: Sequence[tuple[str, float]],
    doc_terms: Mapping[str, frozenset[str]],
    cosines: Sequence[float],
    lexical: Mapping[str, float],
) -> np.ndarray:
    """``(len(fused), 4)`` array of the parts per candidate, in fused order."""
    best_fused = max((score for _, score in fused), default=0.0)
    best_lexical = max((lexical.get(doc_id, 0.0) for doc_id, _ in fused), default=0.0)
    rows = [
        (
            coverage(subquestions, doc_terms[doc_id]),
            score / best_fused if best_fused > 0 else 0.0,
            max(0.0, float(cosine)),
            lexical.get(doc_id, 0.0) / best_lexical if best_lexical > 0 else 0.0,
        )
        for (doc_id, score), cosine in zip(fused, cosines, strict=True)
    ]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(PARTS))


def rerank_order(ids: Sequence[str], parts: np.ndarray, weights: PartWeights) -> list[tuple[str, float]]:
    """Candidates reordered by the weighted sum of their parts, ties by id ascending."""
    scores = parts @ weights.vector() if len(ids) else np.zeros(0)
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    return [(ids[i], float(scores[i])) for i in order]


@dataclass(frozen=True)
class TuningSet:
    """Tuning queries packed for fast grid search: candidates sorted by id, padded."""

    parts: np.ndarray  # (queries, depth, parts); padding rows are all zero
    gains: np.ndarray  # (queries, depth); padding is 0
    valid: np.ndarray  # (queries, depth) bool
    ideal_dcg: np.ndarray  # (queries,)


def pack_tuning(
    candidates: Mapping[str, tuple[Sequence[str], np.ndarray]],
    qrels: Mapping[str, Mapping[str, int]],
) -> TuningSet:
    """Pack ``query id -> (candidate ids, parts)`` with the qrels' grades (IDCG@10 from qrels)."""
    items = [(q, ids, parts) for q, (ids, parts) in candidates.items() if qrels.get(q)]
    depth = max((len(ids) for _, ids, _ in items), default=1) or 1
    n = len(items)
    parts_arr = np.zeros((n, depth, len(PARTS)))
    gains = np.zeros((n, depth))
    valid = np.zeros((n, depth), dtype=bool)
    ideal = np.zeros(n)
    for row, (query_id, ids, parts) in enumerate(items):
        order = sorted(range(len(ids)), key=ids.__getitem__)  # stable sort then breaks ties by id
        relevant = qrels[query_id]
        parts_arr[row, : len(ids)] = parts[order] if len(ids) else 0
        gains[row, : len(ids)] = [float(relevant.get(ids[i], 0)) for i in order]
        valid[row, : len(ids)] = True
        top = sorted((float(g) for g in relevant.values() if g > 0), reverse=True)[:10]
        ideal[row] = sum(g / np.log2(r + 2) for r, g in enumerate(top))
    return TuningSet(parts_arr, gains, valid, ideal)


def mean_ndcg10(data: TuningSet, weights: np.ndarray) -> float:
    """Mean nDCG@10 of the reranked candidates over the packed queries."""
    if data.ideal_dcg.size == 0:
        return 0.0
    scores = np.where(data.valid, data.parts @ weights, -np.inf)
    top = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    discounts = 1.0 / np.log2(np.arange(2, 2 + top.shape[1]))
    dcg = np.take_along_axis(data.gains, top, axis=1) @ discounts
    return float(np.mean(dcg / np.where(data.ideal_dcg > 0, data.ideal_dcg, 1.0)))


def tune_weights(data: TuningSet) -> tuple[PartWeights, float, int]:
    """Best weights on the grid by mean nDCG@10, their score, and the grid size.

    Grid points are tried in a fixed order and a later point must beat the best
    by more than 1e-9 to replace it, so the result is deterministic.
    """
    best = (-1.0, PartWeights(coverage=0.0, fusion=1.0, semantic=0.0))
    count = 0
    for fusion, cov, sem, lex in itertools.product(FUSION_GRID, COVERAGE_GRID, SEMANTIC_GRID, LEXICAL_GRID):
        if fusion == cov == sem == lex == 0.0:
            continue
        count += 1
        weights = PartWeights(coverage=cov, fusion=fusion, semantic=sem, lexical=lex)
        score = mean_ndcg10(data, weights.vector())
        if score > best[0] + 1e-9:
            best = (score, weights)
    return best[1], best[0], count
