"""Where a failed case's relevant documents went: the layer that lost each one.

A case that fails says what the asker got ("status abstain, expected answer"); this says why, per
relevant document, by the first layer of the pipeline that left it out: governance before any
score (and for which reason), recall (no chunk among the candidates), the return gate, the
evidence cut, or the answer step (in the evidence but not cited). Read from the answer's trace and
the knowledge base's snapshot; nothing is asked again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..model.contracts import Document, Status
from ..model.governance import EligibilityScope, eligibility
from ..pipeline.outcome import Answer

__all__ = ["where_relevant_went"]


def where_relevant_went(
    relevant: Sequence[str],
    answer: Answer,
    documents: Mapping[str, Document],
    chunks_by_document: Mapping[str, Sequence[str]],
    scope: EligibilityScope,
) -> list[str]:
    """One line per relevant source id that the answer does not cite, naming where it was lost
    (``chunks_by_document``: each document's chunk ids, as the snapshot keeps them)."""
    trace = answer.trace
    tenant = scope.principal.tenant
    cited = {c.source_id for c in answer.citations}
    candidates = {cid for cid, _ in trace.fused} | {cid for _, pairs in trace.channels for cid, _ in pairs}
    rejected = {cid for cid, _ in trace.gate_rejections}
    evidence = set(trace.final)
    notes = []
    for source_id in relevant:
        if source_id in cited:
            continue
        revisions = [d for d in documents.values() if d.source_id == source_id and d.tenant == tenant]
        if not revisions:
            notes.append(f"relevant {source_id}: not in this knowledge base for the asker's tenant")
            continue
        current = [d for d in revisions if d.status is Status.ACTIVE] or revisions
        verdict = eligibility(current[-1], scope)
        if not verdict.eligible:
            reasons = ", ".join(reason.value for reason in verdict.reasons)
            notes.append(f"relevant {source_id}: excluded before scoring ({reasons})")
            continue
        own = {cid for d in revisions for cid in chunks_by_document.get(d.document_id, ())}
        if not own & candidates:
            notes.append(f"relevant {source_id}: not retrieved (no chunk among the candidates)")
        elif own & rejected and not own & evidence:
            notes.append(f"relevant {source_id}: dropped by the return gate")
        elif not own & evidence:
            notes.append(f"relevant {source_id}: retrieved, ranked below the evidence cut")
        else:
            notes.append(f"relevant {source_id}: in the evidence, not cited (the answer step)")
    return notes
