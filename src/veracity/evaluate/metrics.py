"""Pure retrieval and citation metrics over ranked ids and relevance judgments.

Conventions, shared by every function here:

- **Undefined is ``None``, never 0.** A retrieval metric of a query with no
  relevant documents is undefined and returns ``None``; :func:`aggregate` skips
  ``None`` values, so undefined queries never drag a mean down (or up).
- **Rankings count unique ids.** A ranking is deduplicated first (the first
  occurrence of an id keeps its place, see :func:`dedup_ranking`); ranks are 1-based.
- **Relevance** is either a collection of relevant ids (binary) or a mapping
  ``id -> grade``; an id with grade > 0 is relevant, grade <= 0 is not.
  Binary metrics (precision, recall, reciprocal rank, average precision) only
  ask whether an id is relevant; :func:`ndcg_at_k` uses the grade as the gain.
- Cutoffs ``k`` are integers >= 1; anything else raises ``ConfigError``.

Definitions match trec_eval and ranx (``precision@k``, ``recall@k``,
``mrr@k``, ``ndcg@k`` with gain = grade and a log2 discount, ``map@k``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence

from ..model.errors import ConfigError

Relevance = Collection[str] | Mapping[str, float]
"""Relevant ids (binary) or ``id -> grade`` (graded; grade > 0 means relevant)."""


def dedup_ranking(ids: Iterable[str]) -> list[str]:
    """``ids`` with repeats removed, each id kept at its first position."""
    return list(dict.fromkeys(ids))


def _gains(relevant: Relevance) -> dict[str, float]:
    if isinstance(relevant, str):
        raise ConfigError("relevant must be a collection of ids or a mapping, not one string")
    if isinstance(relevant, Mapping):
        return {doc_id: float(grade) for doc_id, grade in relevant.items() if grade > 0}
    return dict.fromkeys(relevant, 1.0)


def _cutoff(k: int | None, *, optional: bool = False) -> int | None:
    if k is None and optional:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"cutoff k must be an integer >= 1, got {k!r}")
    return k


def _top(ranked: Iterable[str], k: int | None) -> list[str]:
    ranking = dedup_ranking(ranked)
    return ranking if k is None else ranking[:k]


def precision_at_k(ranked: Iterable[str], relevant: Relevance, k: int) -> float | None:
    """Relevant ids among the top ``k``, divided by ``k``.

    The denominator is always ``k``: a ranking shorter than ``k`` counts its
    missing positions as not relevant. ``None`` when nothing is relevant.
    """
    cutoff = _cutoff(k)
    gains = _gains(relevant)
    if not gains:
        return None
    return sum(doc_id in gains for doc_id in _top(ranked, cutoff)) / k


def recall_at_k(ranked: Iterable[str], relevant: Relevance, k: int) -> float | None:
    """Share of the relevant ids found in the top ``k``; ``None`` when nothing is relevant."""
    cutoff = _cutoff(k)
    gains = _gains(relevant)
    if not gains:
        return None
    return sum(doc_id in gains for doc_id in _top(ranked, cutoff)) / len(gains)


def reciprocal_rank(ranked: Iterable[str], relevant: Relevance, k: int | None = None) -> float | None:
    """``1 / rank`` of the first relevant id (within the top ``k`` if given), else 0.0.

    ``None`` when nothing is relevant. The mean over queries is MRR.
    """
    cutoff = _cutoff(k, optional=True)
    gains = _gains(relevant)
    if not gains:
        return None
    for rank, doc_id in enumerate(_top(ranked, cutoff), start=1):
        if doc_id in gains:
            return 1.0 / rank
    return 0.0


def average_precision(ranked: Iterable[str], relevant: Relevance, k: int | None = None) -> float | None:
    """Mean of precision at the rank of each relevant id retrieved (within ``k``).

    Divided by the number of relevant ids, retrieved or not (trec_eval's AP,
    ranx's ``map@k``). ``None`` when nothing is relevant.
    """
    cutoff = _cutoff(k, optional=True)
    gains = _gains(relevant)
    if not gains:
        return None
    hits = 0
    total = 0.0
    for rank, doc_id in enumerate(_top(ranked, cutoff), start=1):
        if doc_id in gains:
            hits += 1
            total += hits / rank
    return total / len(gains)


def ndcg_at_k(ranked: Iterable[str], relevant: Relevance, k: int) -> float | None:
    """Normalized discounted cumulative gain at ``k``.

    DCG = sum of ``gain / log2(rank + 1)`` over the top ``k``; gain is 1 for a
    relevant id (binary) or its grade (graded). The ideal DCG sorts every judged
    gain descending, so relevant ids that were never retrieved still lower the
    score. ``None`` when nothing is relevant.
    """
    cutoff = _cutoff(k)
    gains = _gains(relevant)
    if not gains:
        return None
    dcg = math.fsum(
        gains.get(doc_id, 0.0) / math.log2(rank + 1)
        for rank, doc_id in enumerate(_top(ranked, cutoff), start=1)
    )
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = math.fsum(gain / math.log2(rank + 1) for rank, gain in enumerate(ideal, start=1))
    return dcg / idcg


def citation_precision(citations: Sequence[Hashable], valid_ids: Collection[Hashable]) -> float:
    """Share of citations that point at a valid id (e.g. a chunk in the evidence).

    Every citation counts as given, repeats included. An answer that cites
    nothing has made no wrong citation, so the value is 1.0; whether it
    *should* have cited something is what :func:`citation_recall` measures.
    """
    if isinstance(citations, str):
        raise ConfigError("citations must be a sequence of ids, not one string")
    if not citations:
        return 1.0
    return sum(citation in valid_ids for citation in citations) / len(citations)


def citation_recall(cited_fact_ids: Iterable[str], required_fact_ids: Iterable[str]) -> float | None:
    """Share of the required facts that the answer's citations cover.

    Counted over unique fact ids. ``None`` when no fact is required.
    """
    required = set(required_fact_ids)
    if not required:
        return None
    return len(required & set(cited_fact_ids)) / len(required)


def supported_fact_ratio(stated_fact_ids: Iterable[str], supported_fact_ids: Iterable[str]) -> float | None:
    """Share of the facts an answer states that its evidence supports.

    Counted over unique fact ids. ``None`` when the answer states no fact.
    """
    stated = set(stated_fact_ids)
    if not stated:
        return None
    return len(stated & set(supported_fact_ids)) / len(stated)


def aggregate(values: Iterable[float | None]) -> float | None:
    """Mean of the defined (non-``None``) values; ``None`` when none is defined."""
    defined = [value for value in values if value is not None]
    if not defined:
        return None
    return math.fsum(defined) / len(defined)


def round_metric(value: float | None, places: int = 4) -> float | None:
    """``value`` rounded to ``places`` decimals for reports; ``None`` stays ``None``."""
    return None if value is None else round(value, places)
