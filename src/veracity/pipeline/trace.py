"""The trace: every decision of one question, as ids, digests, counts and timings.

It never holds document text (no chunk text, title or heading). Documents a
principal may not see (excluded for ``role``) are only counted, never named;
documents of other tenants are out of scope and not even counted. Even that
count tells an asker that hidden documents exist or just arrived, so it goes
only to the operator's view (:attr:`Audience.OPERATOR`, the audit trail and
the evaluation reports), never to what the asker receives (:attr:`Audience.ASKER`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from ..model.contracts import parse_enum


class Audience(StrEnum):
    """Who a trace is rendered for: the asker, or an operator auditing the system."""

    ASKER = "asker"
    OPERATOR = "operator"


ScoredIds = tuple[tuple[str, float], ...]


def _rounded(pairs: ScoredIds, places: int = 6) -> list[list[Any]]:
    return [[chunk_id, round(score, places)] for chunk_id, score in pairs]


TracedDecision = tuple[int, float, bool, tuple[tuple[str, float], ...], tuple[str, ...], float, str]
"""One sub-question's decision as the trace keeps it (see :attr:`Trace.decisions`)."""


@dataclass(frozen=True, slots=True)
class Trace:
    """What the pipeline did for one question; see the module docstring."""

    query_digest: str
    tenant: str
    roles: tuple[str, ...]
    target_version: str | None
    as_of: str
    eligible_documents: int = 0
    eligible_chunks: int = 0
    excluded: tuple[tuple[str, str, str], ...] = ()
    excluded_hidden: int = 0
    channels: tuple[tuple[str, ScoredIds], ...] = ()
    fused: ScoredIds = ()
    reranked: tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] = ()
    gate_rejections: tuple[tuple[str, str], ...] = ()
    gate_hidden: int = 0
    removed_by_caller: tuple[str, ...] = ()
    quarantined: tuple[tuple[str, tuple[str, ...]], ...] = ()
    duplicates: tuple[str, ...] = ()
    final: tuple[str, ...] = ()
    conflicts: tuple[tuple[str, str, str], ...] = ()
    present_fact_ids: tuple[str, ...] = ()
    missing_fact_ids: tuple[str, ...] = ()
    packet_digest: str = ""
    status: str = ""
    reasons: tuple[str, ...] = ()
    decisions: tuple[TracedDecision, ...] = ()
    """Per sub-question: index, answerability score, answered, features, the question's own
    terms no evidence holds, the threshold the score was held against, and the sources that
    decided it (``official`` or ``community``)."""
    retry: tuple[tuple[str, str], ...] = ()
    composer: tuple[tuple[str, str], ...] = ()
    """What wrote the claims when it was not the extractive composer: name, model, outcome
    (``verified``, ``partly_verified``, ``fallback_extractive``, ``llm_unavailable``, ...),
    counts. Empty for an extractive answer, so its trace is unchanged."""
    dropped_claims: tuple[tuple[int, str], ...] = ()
    """Written claims that failed verification: their index in the model's text (1-based) and
    the reason (never the claim's text)."""
    timings_ms: tuple[tuple[str, float], ...] = field(default=())
    """``(stage, ms)`` in the order they ran; a stage comes once per trust pool and once more per
    retry (:func:`~veracity.pipeline.retry.retry`), and :meth:`to_dict` sums its entries."""

    @property
    def stage_ms(self) -> dict[str, float]:
        """Milliseconds per stage, its entries summed, in the order the stages first ran."""
        summed: dict[str, float] = {}
        for stage, ms in self.timings_ms:
            summed[stage] = summed.get(stage, 0.0) + ms
        return summed

    @property
    def filtered_before_score(self) -> int:
        """Documents of the tenant excluded before any scoring (named or hidden)."""
        return len(self.excluded) + self.excluded_hidden

    @property
    def excluded_counts(self) -> dict[str, int]:
        """Exclusions per reason; hidden ones are counted under ``role``."""
        counts: dict[str, int] = {}
        for _, _, reason in self.excluded:
            counts[reason] = counts.get(reason, 0) + 1
        if self.excluded_hidden:
            counts["role"] = counts.get("role", 0) + self.excluded_hidden
        return dict(sorted(counts.items()))

    def to_dict(self, *, timings: bool = True, audience: Audience | str = Audience.ASKER) -> dict[str, Any]:
        """Plain JSON-able form. ``timings=False`` for byte-identical reports.

        ``audience=ASKER`` (the default) leaves out every count of documents the
        asker may not see (``excluded_hidden``, ``gate_hidden``, the ``role``
        share of ``excluded_counts`` and of ``filtered_before_score``);
        ``OPERATOR`` keeps them.
        """
        view = parse_enum(Audience, audience, what="trace audience")
        data = asdict(self)
        data["channels"] = {name: _rounded(pairs) for name, pairs in self.channels}
        data["fused"] = _rounded(self.fused)
        data["reranked"] = [
            {"chunk_id": cid, "score": round(score, 6), "parts": {k: round(v, 6) for k, v in parts}}
            for cid, score, parts in self.reranked
        ]
        data["excluded"] = [
            {"source_id": sid, "document_id": did, "reason": reason}
            for sid, did, reason in self.excluded
        ]
        if view is Audience.OPERATOR:
            data["excluded_counts"] = self.excluded_counts
            data["filtered_before_score"] = self.filtered_before_score
        else:
            del data["excluded_hidden"], data["gate_hidden"]
            named: dict[str, int] = {}
            for _, _, reason in self.excluded:
                named[reason] = named.get(reason, 0) + 1
            data["excluded_counts"] = dict(sorted(named.items()))
            data["filtered_before_score"] = len(self.excluded)
        data["gate_rejections"] = [{"chunk_id": c, "reason": r} for c, r in self.gate_rejections]
        data["quarantined"] = [{"chunk_id": c, "signals": list(s)} for c, s in self.quarantined]
        data["conflicts"] = [
            {"fact_id": f, "resolved_by": rule or None, "winner": winner or None}
            for f, rule, winner in self.conflicts
        ]
        data["retry"] = dict(self.retry)
        if self.composer:
            data["composer"] = dict(self.composer)
            data["dropped_claims"] = [{"claim": index, "reason": why} for index, why in self.dropped_claims]
        else:
            del data["composer"], data["dropped_claims"]
        data["decisions"] = [
            {
                "subquestion": index,
                "score": round(score, 6),
                "threshold": round(threshold, 6),
                "answered": answered,
                "sources": tier,
                "missing_terms": list(missing),
                "features": {name: round(value, 6) for name, value in features},
            }
            for index, score, answered, features, missing, threshold, tier in self.decisions
        ]
        if timings:
            data["timings_ms"] = {stage: round(ms, 3) for stage, ms in self.stage_ms.items()}
        else:
            del data["timings_ms"]
        return data
