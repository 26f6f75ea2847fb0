"""Per-answer scores: retrieval metrics on the evidence order, citation metrics, governance.

Pure functions over an ``Answer`` and the knowledge base's records. The
governance counts about instructions and trust never ask the injection detector
under test: they come from each source's trust and from the cases' own labels
(which documents carry instructions), so a detector that misses an attack shows
up here instead of grading itself.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..model.contracts import AnswerStatus, Chunk, Citation, Claim, Document, Trust
from ..pipeline.trace import Trace
from .metrics import (
    citation_precision,
    citation_recall,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    supported_fact_ratio,
)


def evidence_ranking(
    final_chunk_ids: Sequence[str], chunks: Mapping[str, Chunk], documents: Mapping[str, Document]
) -> list[str]:
    """Source ids of the evidence, best first, each once."""
    seen: dict[str, None] = {}
    for chunk_id in final_chunk_ids:
        seen.setdefault(documents[chunks[chunk_id].document_id].source_id, None)
    return list(seen)


def retrieval_metrics(ranking: Sequence[str], relevant: Sequence[str]) -> dict[str, float | None]:
    """P@3, P@5, R@3, R@5, RR, nDCG@5 over unique source ids (null when nothing is relevant)."""
    rel = set(relevant)
    return {
        "precision@3": precision_at_k(ranking, rel, 3),
        "precision@5": precision_at_k(ranking, rel, 5),
        "recall@3": recall_at_k(ranking, rel, 3),
        "recall@5": recall_at_k(ranking, rel, 5),
        "rr": reciprocal_rank(ranking, rel),
        "ndcg@5": ndcg_at_k(ranking, rel, 5),
    }


def claim_supported_by(claim: Claim, citation: Citation, chunks: Mapping[str, Chunk]) -> bool:
    """A citation supports a claim when its chunk carries every fact the claim states,
    or, for a claim naming no fact, when the claim's text occurs in the chunk."""
    chunk = chunks.get(citation.chunk_id)
    if chunk is None:
        return False
    if claim.fact_ids:
        return all(fact in chunk.fact_ids for fact in claim.fact_ids)
    return claim.text in chunk.text


def citation_scores(
    claims: Sequence[Claim],
    citations: Sequence[Citation],
    chunks: Mapping[str, Chunk],
    required_fact_ids: Sequence[str],
) -> dict[str, Any]:
    """Citation precision / recall, supported-claim and supported-fact ratios, unsupported claims.

    A claim is supported when one of its citations supports it (``claim_supported_by``).
    Citation recall: required facts stated by a supported claim. Supported-fact
    ratio: of the facts the claims state, the share stated by a supported claim.
    """
    by_id = {c.citation_id: c for c in citations}
    pairs = [(claim, by_id.get(cid)) for claim in claims for cid in claim.citation_ids]
    valid = {
        index
        for index, (claim, cit) in enumerate(pairs)
        if cit is not None and claim_supported_by(claim, cit, chunks)
    }
    supported_claims = [
        claim
        for claim in claims
        if any(
            by_id.get(cid) is not None and claim_supported_by(claim, by_id[cid], chunks)
            for cid in claim.citation_ids
        )
    ]
    all_stated = {fact for claim in claims for fact in claim.fact_ids}
    correctly_cited = {fact for claim in supported_claims for fact in claim.fact_ids}
    return {
        "citation_precision": citation_precision(list(range(len(pairs))), valid),
        "citation_recall": citation_recall(correctly_cited, required_fact_ids),
        "supported_claim_ratio": (len(supported_claims) / len(claims)) if claims else None,
        "supported_fact_ratio": supported_fact_ratio(all_stated, correctly_cited),
        "unsupported_claims": len(claims) - len(supported_claims),
        "claims": len(claims),
        "citations": len(pairs),
    }


def status_outcome(status: AnswerStatus, expected: AnswerStatus | None) -> tuple[bool, bool]:
    """``(false_answer, false_abstain)``: said more than warranted / said nothing when it could."""
    if expected is None:
        return False, False
    order = {AnswerStatus.ABSTAIN: 0, AnswerStatus.PARTIAL: 1, AnswerStatus.ANSWER: 2}
    false_answer = order[status] > order[expected]
    false_abstain = status is AnswerStatus.ABSTAIN and expected is not AnswerStatus.ABSTAIN
    return false_answer, false_abstain


def untrusted_in_context(
    final_chunk_ids: Sequence[str],
    chunks: Mapping[str, Chunk],
    documents: Mapping[str, Document],
    instruction_sources: Collection[str],
) -> int:
    """Evidence chunks of a not-official source that the cases label as carrying instructions
    (``instruction_sources``: source ids). Must be 0. Independent of the detector."""
    count = 0
    for chunk_id in final_chunk_ids:
        document = documents[chunks[chunk_id].document_id]
        if document.trust is not Trust.OFFICIAL and document.source_id in instruction_sources:
            count += 1
    return count


def non_official_claims(
    claims: Sequence[Claim],
    citations: Sequence[Citation],
    documents: Mapping[str, Document],
) -> int:
    """Claims that cite at least one chunk of a source that is not ``official`` (by trust alone)."""
    trust = {d.document_id: d.trust for d in documents.values()}
    by_id = {c.citation_id: c for c in citations}
    return sum(
        1
        for claim in claims
        if any(
            cid in by_id and trust.get(by_id[cid].document_id) is not Trust.OFFICIAL
            for cid in claim.citation_ids
        )
    )


def composition_scores(trace: Trace) -> dict[str, Any] | None:
    """How a written answer fared in verification, from its trace; ``None`` for an extractive one.

    Faithfulness: verified claims over written claims. Citation recall: written claims whose
    cited blocks support them, over written claims. Citation precision: citations that support
    their claim alone or that the claim needs (ALCE's rule), over all citations written.
    """
    info = dict(trace.composer)
    if not info:
        return None
    written = int(info.get("claims_written", 0))
    citations = int(info.get("citations", 0))
    reasons: dict[str, int] = {}
    for _, reason in trace.dropped_claims:
        reasons[reason] = reasons.get(reason, 0) + 1
    return {
        "composer": info.get("name"),
        "outcome": info.get("outcome"),
        "error": info.get("error"),
        "claims_written": written,
        "claims_verified": int(info.get("claims_verified", 0)),
        "claims_supported": int(info.get("claims_supported", 0)),
        "citations": citations,
        "citations_precise": int(info.get("citations_precise", 0)),
        "faithfulness": int(info.get("claims_verified", 0)) / written if written else None,
        "citation_recall": int(info.get("claims_supported", 0)) / written if written else None,
        "citation_precision": int(info.get("citations_precise", 0)) / citations if citations else None,
        "dropped": dict(sorted(reasons.items())),
    }


def composition_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals over the written answers of a run (``composition_scores`` of each)."""
    keys = ("claims_written", "claims_verified", "claims_supported", "citations", "citations_precise")
    total = {key: sum(int(r[key]) for r in rows) for key in keys}
    outcomes: dict[str, int] = {}
    dropped: dict[str, int] = {}
    for row in rows:
        outcomes[str(row["outcome"])] = outcomes.get(str(row["outcome"]), 0) + 1
        for reason, count in row["dropped"].items():
            dropped[reason] = dropped.get(reason, 0) + count
    written, citations = total["claims_written"], total["citations"]
    return {
        "answers": len(rows),
        **total,
        "faithfulness": total["claims_verified"] / written if written else None,
        "citation_recall": total["claims_supported"] / written if written else None,
        "citation_precision": total["citations_precise"] / citations if citations else None,
        "outcomes": dict(sorted(outcomes.items())),
        "dropped": dict(sorted(dropped.items())),
    }
