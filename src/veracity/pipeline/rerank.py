"""Rerankers: reorder fused candidates with a score you can read.

The default ``ExplainableReranker`` scores each candidate as a weighted sum of
named parts, all in [0, 1] and all kept in the hit's score breakdown:

- ``coverage``: best share of one sub-question's terms found in the chunk
  (text, heading path and document title);
- ``required``: share of the required facts the chunk carries;
- ``fusion``: the fused rank score, divided by the best fused score;
- ``semantic``: the dense channel's cosine, clipped at 0;
- ``trust``: official 1, community 0.4, untrusted 0;
- ``version_fit``: how squarely the document is written for the target
  version (:func:`version_fit`: 1 for an explicit range starting there, 0.5
  when it only reaches it through an open range);
- ``instruction``: 1 when a non-official text tries to give orders (a penalty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..model.contracts import Document, Hit, Query, Trust
from ..model.versions import parse_version
from ..text.questions import AnalyzedQuestion, SubQuestion
from ..text.tokens import tokenize
from .injection import instruction_signals

TRUST_VALUE = {Trust.OFFICIAL: 1.0, Trust.COMMUNITY: 0.4, Trust.UNTRUSTED: 0.0}


class Reranker(Protocol):
    """Reorders hits. Must keep exactly the hits it was given, rank them 1..n,
    set ``scores.rerank``, break ties by chunk id, and never look outside them."""

    name: str

    def rerank(
        self,
        query: Query,
        hits: Sequence[Hit],
        documents: Mapping[str, Document],
        *,
        question: AnalyzedQuestion,
    ) -> list[Hit]:
        """Return the same hits, reordered, with rerank scores set; ``question`` is ``query``'s text
        as analysed once for the ask (a reranker reads it there, never from ``query.text``)."""
        ...


def ranked(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` by rerank score, best first, ties by chunk id, ranked 1..n (what every reranker
    returns, and what the trust pools' reranked hits are merged into)."""
    ordered = sorted(hits, key=lambda h: (-(h.scores.rerank or 0.0), h.chunk.chunk_id))
    return [replace(hit, rank=rank) for rank, hit in enumerate(ordered, start=1)]


@dataclass(frozen=True, slots=True)
class RerankWeights:
    """Weights of the explainable reranker's parts (``instruction`` is subtracted)."""

    coverage: float = 0.40
    required: float = 0.10
    fusion: float = 0.20
    semantic: float = 0.15
    trust: float = 0.10
    version_fit: float = 0.05
    instruction: float = 0.50


def chunk_terms(hit: Hit, document: Document) -> frozenset[str]:
    """Tokens of a chunk's text, heading path and its document's title."""
    chunk = hit.chunk
    return frozenset(tokenize(" ".join((document.title, *chunk.heading_path, chunk.text))))


def coverage(subquestions: Sequence[SubQuestion], terms: frozenset[str]) -> float:
    """Best share of one sub-question's terms present in ``terms``."""
    best = 0.0
    for sub in subquestions:
        if sub.terms:
            best = max(best, sum(term in terms for term in sub.terms) / len(sub.terms))
    return best


def version_fit(document: Document, version: str | None) -> float:
    """How squarely ``document`` is written for the asked ``version``.

    1.0: its range starts at the target's version and has an explicit end;
    0.9: it starts there, open-ended; 0.75: an explicit range that holds the
    target; 0.5: an open range that reaches the target from an earlier
    version, no range at all, or no target version asked.
    """
    if not version or (document.version_min is None and document.version_max is None):
        return 0.5
    target = parse_version(version)
    low = parse_version(document.version_min) if document.version_min else None
    if low is not None and target[: len(low)] == low:
        return 1.0 if document.version_max else 0.9
    return 0.75 if document.version_max else 0.5


class ExplainableReranker:
    """Weighted sum of readable parts; see the module docstring."""

    name = "explainable-v1"

    def __init__(self, weights: RerankWeights | None = None) -> None:
        self.weights = weights or RerankWeights()

    def rerank(
        self,
        query: Query,
        hits: Sequence[Hit],
        documents: Mapping[str, Document],
        *,
        question: AnalyzedQuestion,
    ) -> list[Hit]:
        """Score and reorder ``hits``; ties break by chunk id."""
        subquestions = question.subquestions
        required = query.required_fact_ids or ()
        best_fusion = max((hit.scores.fusion or 0.0 for hit in hits), default=0.0)
        w = self.weights
        scored: list[Hit] = []
        for hit in hits:
            document = documents[hit.chunk.document_id]
            parts = {
                "coverage": coverage(subquestions, chunk_terms(hit, document)),
                "required": (
                    sum(f in hit.chunk.fact_ids for f in required) / len(required) if required else 0.0
                ),
                "fusion": (hit.scores.fusion or 0.0) / best_fusion if best_fusion > 0 else 0.0,
                "semantic": max(0.0, hit.scores.semantic or 0.0),
                "trust": TRUST_VALUE[document.trust],
                "version_fit": version_fit(document, query.version),
                # official text is never quarantined, so it is never penalised for its wording either
                "instruction": (
                    1.0
                    # read as the evidence gate reads it (with its headings): one verdict per chunk
                    if document.trust is not Trust.OFFICIAL
                    and instruction_signals(hit.chunk.text, hit.chunk.heading_path)
                    else 0.0
                ),
            }
            score = (
                w.coverage * parts["coverage"]
                + w.required * parts["required"]
                + w.fusion * parts["fusion"]
                + w.semantic * parts["semantic"]
                + w.trust * parts["trust"]
                + w.version_fit * parts["version_fit"]
                - w.instruction * parts["instruction"]
            )
            scores = replace(hit.scores, rerank=score, rerank_parts=tuple(sorted(parts.items())))
            scored.append(replace(hit, scores=scores))
        return ranked(scored)


class FusionOrderReranker:
    """Keeps the fused order (rerank score = fusion score); the 'no rerank' ablation."""

    name = "fusion-order"

    def rerank(
        self,
        query: Query,
        hits: Sequence[Hit],
        documents: Mapping[str, Document],
        *,
        question: AnalyzedQuestion,
    ) -> list[Hit]:
        """Return hits ordered by fusion score, ties by chunk id."""
        ordered = sorted(hits, key=lambda h: (-(h.scores.fusion or 0.0), h.chunk.chunk_id))
        return [
            replace(hit, rank=rank, scores=replace(hit.scores, rerank=hit.scores.fusion or 0.0))
            for rank, hit in enumerate(ordered, start=1)
        ]
