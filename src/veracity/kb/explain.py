"""An answer explained for people: the candidates with where they come from, and the decision.

The trace holds ids, scores and counts only. :func:`explain` joins it with the
catalog (chunk heading paths and pages, source ids) and the remembered source
paths into one row per candidate, in reranked order: its rank in each recall
channel, its fused and reranked score, and what the return gate and the
evidence step made of it (cited, evidence not cited, passed the gate but
below the evidence cut, dropped at the gate with the reason, quarantined,
duplicate).

It never shows more than the asker may see: every candidate was eligible
for the asker when recalled, and a candidate whose document the asker may no
longer see when the gate checked it (tenant or role) is counted, not shown;
documents excluded before scoring are counted by reason, as in the trace.

The decision part is the answer's status, reasons, missing facts and
uncovered sub-questions, plus, per sub-question, the answerability score
against its threshold, the question terms no evidence holds and every feature
of the decision, and what the retry did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..catalog.catalog import Catalog
from ..model.contracts import ExclusionReason, Principal
from ..model.errors import NotFoundError
from ..pipeline.outcome import Answer
from ..pipeline.render import page_label

__all__ = ["Candidate", "Explanation", "explain"]

HIDDEN = frozenset({ExclusionReason.TENANT, ExclusionReason.ROLE})


@dataclass(frozen=True, slots=True)
class Candidate:
    """One reranked candidate, located for a reader."""

    position: int
    chunk_id: str
    source_id: str
    path: str
    heading_path: tuple[str, ...]
    pages: str
    channel_ranks: tuple[tuple[str, int | None], ...]
    fused: float | None
    reranked: float | None
    outcome: str

    def as_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "position": self.position,
            "chunk_id": self.chunk_id,
            "source_id": self.source_id,
            "path": self.path,
            "heading_path": list(self.heading_path),
            "pages": self.pages,
            "ranks": dict(self.channel_ranks),
            "fused": None if self.fused is None else round(self.fused, 6),
            "reranked": None if self.reranked is None else round(self.reranked, 6),
            "outcome": self.outcome,
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    """An answer with its candidates located and its decision spelled out."""

    answer: Answer
    candidates: tuple[Candidate, ...]
    hidden_candidates: int
    excluded: tuple[tuple[str, int], ...]
    decision: tuple[tuple[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        """Plain data (the answer itself is rendered apart)."""
        answer = self.answer
        return {
            "candidates": [c.as_dict() for c in self.candidates],
            "hidden_candidates": self.hidden_candidates,
            "excluded_before_scoring": dict(self.excluded),
            "decision": {
                "status": answer.status.value,
                "reasons": list(answer.reasons),
                "missing_fact_ids": list(answer.missing_fact_ids),
                "uncovered_subquestions": list(answer.uncovered_subquestions),
                "features": dict(self.decision),
            },
        }


def _decision(answer: Answer) -> tuple[tuple[str, Any], ...]:
    """Per sub-question, the answer decision (score against threshold, missing terms, features)
    and what the retry did, from the trace (ids, numbers and the question's own words only)."""
    trace = answer.trace.to_dict(timings=False)
    entries: list[tuple[str, Any]] = [
        (f"sub-question {d['subquestion']}", d) for d in trace.get("decisions", [])
    ]
    if trace.get("retry"):
        entries.append(("retry", trace["retry"]))
    return tuple(entries)


def _outcomes(answer: Answer) -> dict[str, str]:
    trace = answer.trace
    outcome: dict[str, str] = {}
    for chunk_id in trace.final:
        outcome[chunk_id] = "evidence"
    for citation in answer.citations:
        outcome[citation.chunk_id] = f"cited [{citation.citation_id}]"
    for chunk_id in trace.duplicates:
        outcome[chunk_id] = "duplicate"
    for chunk_id, _ in trace.quarantined:
        outcome[chunk_id] = "quarantined"
    for chunk_id in trace.removed_by_caller:
        outcome[chunk_id] = "removed by caller"
    for chunk_id, reason in trace.gate_rejections:
        outcome[chunk_id] = f"dropped at gate: {reason}"
    return outcome


def explain(
    answer: Answer,
    catalog: Catalog,
    paths: Mapping[tuple[str, str], str] | None = None,
    *,
    limit: int | None = None,
) -> Explanation:
    """Explain ``answer`` (see the module docstring); ``limit`` keeps the first candidates and cited ones."""
    trace = answer.trace
    principal = Principal(tenant=trace.tenant, roles=frozenset(trace.roles))
    as_of = datetime.fromisoformat(trace.as_of)
    ranks = {name: {cid: rank for rank, (cid, _) in enumerate(pairs, 1)} for name, pairs in trace.channels}
    fused = dict(trace.fused)
    outcomes = _outcomes(answer)
    rows: list[Candidate] = []
    hidden = 0
    visible: dict[str, bool] = {}
    for chunk_id, score, _ in trace.reranked:
        try:
            chunk = catalog.store.get_chunk(chunk_id)
            document = catalog.store.get_document(chunk.document_id)
        except NotFoundError:
            hidden += 1  # gone from the catalog since: nothing left to show
            continue
        if chunk_id not in outcomes and document.document_id not in visible:
            verdict = catalog.resolve(document.document_id, principal, trace.target_version, as_of)
            visible[document.document_id] = verdict.primary_reason not in HIDDEN
        if not visible.get(document.document_id, True):
            hidden += 1
            continue
        rows.append(
            Candidate(
                position=len(rows) + 1,
                chunk_id=chunk_id,
                source_id=document.source_id,
                path=(paths or {}).get((document.tenant, document.source_id), ""),
                heading_path=chunk.heading_path,
                pages=page_label(chunk.page_start, chunk.page_end),
                channel_ranks=tuple((name, ranks[name].get(chunk_id)) for name in sorted(ranks)),
                fused=fused.get(chunk_id),
                reranked=score,
                outcome=outcomes.get(chunk_id, "below the evidence cut"),
            )
        )
    if limit is not None:
        rows = [row for row in rows if row.position <= limit or row.outcome.startswith("cited")]
    return Explanation(answer, tuple(rows), hidden, tuple(trace.excluded_counts.items()), _decision(answer))
