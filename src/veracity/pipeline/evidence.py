"""The evidence packet: what may be said, what is missing, what was kept out.

From the gated hits it builds the answer context:

- duplicates dropped: a chunk whose text digest equals a kept one, or that
  overlaps a kept chunk of the same document, is not independent evidence;
- quarantine, per chunk (``injection.hold_back``): a chunk of a source that is
  not official and whose text gives orders never enters the answer context; nor
  does any other chunk of an ``untrusted`` page that gives orders (the bait that
  repeats the question to get the page retrieved). The other chunks of a
  ``community`` document (a thread, a wiki page with many authors) stay usable.
  Every held-back chunk is recorded with its reasons (signal names, no text);
- facts: which required facts the context holds and which it lacks;
- conflicts: a fact supported by one source and contradicted by another,
  settled by the first rule that separates the two sides completely: trust
  (every source of one side more trusted than every source of the other), then
  the asked version (a source written for that version beats one that covers
  it only through an open range), then recency (the newer ``valid_from``). The
  losing side's chunks are superseded for this question; a conflict no rule
  settles makes the policy abstain.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..model.contracts import Chunk, Citation, Document, Hit, Trust, sha256_hex
from .injection import hold_back
from .rerank import TRUST_VALUE, version_fit


@dataclass(frozen=True, slots=True)
class Conflict:
    """Sources that disagree on one fact, and which side a rule settles it for.

    ``resolved_by`` names the rule (``trust``, ``version``, ``recency``; empty
    when none settles it) and ``winner`` the side it favours (``supporting`` or
    ``contradicting``).
    """

    fact_id: str
    supporting_chunk_ids: tuple[str, ...]
    contradicting_chunk_ids: tuple[str, ...]
    resolved_by: str = ""
    winner: str = ""

    @property
    def resolved_by_trust(self) -> bool:
        """Whether trust settled it for the supporting side (the only outcome before other rules)."""
        return self.resolved_by == "trust" and self.winner == "supporting"

    @property
    def superseded_chunk_ids(self) -> tuple[str, ...]:
        """Chunks of the side that lost: never evidence for a claim about this question."""
        if self.winner == "supporting":
            return self.contradicting_chunk_ids
        if self.winner == "contradicting":
            return self.supporting_chunk_ids
        return ()


@dataclass(frozen=True, slots=True)
class EvidencePacket:
    """The answer context and everything decided while building it."""

    query_digest: str
    hits: tuple[Hit, ...]
    citations: tuple[Citation, ...]
    present_fact_ids: tuple[str, ...]
    missing_fact_ids: tuple[str, ...]
    quarantined: tuple[tuple[str, tuple[str, ...]], ...]
    duplicate_chunk_ids: tuple[str, ...]
    conflicts: tuple[Conflict, ...]
    packet_digest: str

    @property
    def unresolved_conflicts(self) -> tuple[Conflict, ...]:
        """Conflicts that no rule settles."""
        return tuple(c for c in self.conflicts if not c.resolved_by)

    @property
    def superseded_chunk_ids(self) -> frozenset[str]:
        """Chunks on the losing side of a settled conflict."""
        return frozenset(cid for c in self.conflicts for cid in c.superseded_chunk_ids)

    def citation_for(self, chunk_id: str) -> Citation:
        """The citation of a chunk in the packet; ``KeyError`` if it is not evidence."""
        for citation in self.citations:
            if citation.chunk_id == chunk_id:
                return citation
        raise KeyError(chunk_id)


def contradicted_fact_ids(chunk: Chunk, document: Document) -> tuple[str, ...]:
    """Facts that ``chunk`` asserts the opposite of (``stance: contradicts`` quotes it holds)."""
    return tuple(
        fact.fact_id
        for fact in document.facts
        if fact.stance == "contradicts" and fact.quote in chunk.text
    )


def _overlaps(a: Chunk, b: Chunk) -> bool:
    return a.document_id == b.document_id and a.start < b.end and b.start < a.end


def _dedup(hits: Sequence[Hit]) -> tuple[list[Hit], list[str]]:
    kept: list[Hit] = []
    dropped: list[str] = []
    digests: set[str] = set()
    for hit in hits:
        chunk = hit.chunk
        if chunk.content_digest in digests or any(_overlaps(chunk, k.chunk) for k in kept):
            dropped.append(chunk.chunk_id)
            continue
        digests.add(chunk.content_digest)
        kept.append(hit)
    return kept, dropped


def _settle(
    pro: Sequence[Hit], con: Sequence[Hit], documents: Mapping[str, Document], version: str | None
) -> tuple[str, str]:
    """``(rule, winner)`` for one conflict: trust, then the asked version, then recency."""

    def side(hits: Sequence[Hit], key: Callable[[Document], float]) -> tuple[float, float]:
        values = [key(documents[h.chunk.document_id]) for h in hits]
        return min(values), max(values)

    def trust(document: Document) -> float:
        return TRUST_VALUE[document.trust]

    def fit(document: Document) -> float:
        return version_fit(document, version) if version else 0.0

    def recency(document: Document) -> float:
        return document.valid_from.timestamp()

    for rule, key in (("trust", trust), ("version", fit), ("recency", recency)):
        (pro_low, pro_high), (con_low, con_high) = side(pro, key), side(con, key)
        if pro_low > con_high:
            return rule, "supporting"
        if con_low > pro_high:
            return rule, "contradicting"
    return "", ""


def _conflicts(
    hits: Sequence[Hit], documents: Mapping[str, Document], version: str | None = None
) -> tuple[Conflict, ...]:
    supporters: dict[str, list[Hit]] = {}
    contradicters: dict[str, list[Hit]] = {}
    for hit in hits:
        document = documents[hit.chunk.document_id]
        for fact_id in hit.chunk.fact_ids:
            supporters.setdefault(fact_id, []).append(hit)
        for fact_id in contradicted_fact_ids(hit.chunk, document):
            contradicters.setdefault(fact_id, []).append(hit)
    conflicts = []
    for fact_id in sorted(set(supporters) & set(contradicters)):
        pro, con = supporters[fact_id], contradicters[fact_id]
        rule, winner = _settle(pro, con, documents, version)
        conflicts.append(
            Conflict(
                fact_id=fact_id,
                supporting_chunk_ids=tuple(sorted(h.chunk.chunk_id for h in pro)),
                contradicting_chunk_ids=tuple(sorted(h.chunk.chunk_id for h in con)),
                resolved_by=rule,
                winner=winner,
            )
        )
    return tuple(conflicts)


def make_citation(citation_id: int, chunk: Chunk, document: Document) -> Citation:
    """Citation record for ``chunk`` of ``document``."""
    return Citation(
        citation_id=citation_id,
        document_id=document.document_id,
        source_id=document.source_id,
        revision=document.revision,
        chunk_id=chunk.chunk_id,
        heading_path=chunk.heading_path,
        start=chunk.start,
        end=chunk.end,
        chunk_digest=chunk.content_digest,
        page_start=chunk.page_start,
        page_end=chunk.page_end,
        boxes=chunk.boxes,
        ocr_confidence=chunk.ocr_confidence,
        ocr_numbers=chunk.ocr_numbers,
        version_min=document.version_min,
        version_max=document.version_max,
    )


def build_packet(
    query_digest: str,
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    required_fact_ids: Sequence[str] | None = None,
    *,
    top_k: int | None = None,
    min_score: float | None = None,
    version: str | None = None,
) -> EvidencePacket:
    """Turn gated, ranked hits into the evidence packet.

    Order: quarantine (over every gated candidate, so the trace shows each one
    caught), then duplicates, then ``min_score`` on the rerank score, then ``top_k`` for
    official sources and ``top_k`` for the others, in rank order.
    """
    clean: list[Hit] = []
    quarantined: list[tuple[str, tuple[str, ...]]] = []
    for hit in hits:
        reasons = hold_back(hit.chunk, documents[hit.chunk.document_id])
        if reasons:
            quarantined.append((hit.chunk.chunk_id, reasons))
        else:
            clean.append(hit)
    kept, duplicates = _dedup(clean)
    if min_score is not None:
        kept = [hit for hit in kept if (hit.scores.rerank or 0.0) >= min_score]
    if top_k is not None:
        # top_k per trust tier: many non-official pages on a topic never push the official
        # sources out of the evidence (official sources answer first; see pipeline.answer)
        official = [h for h in kept if documents[h.chunk.document_id].trust is Trust.OFFICIAL][:top_k]
        others = [h for h in kept if documents[h.chunk.document_id].trust is not Trust.OFFICIAL][:top_k]
        chosen = {h.chunk.chunk_id for h in (*official, *others)}
        kept = [h for h in kept if h.chunk.chunk_id in chosen]
    conflicts = _conflicts(kept, documents, version)
    overruled = {c.fact_id for c in conflicts if c.winner == "contradicting"}
    present = sorted({fact for hit in kept for fact in hit.chunk.fact_ids} - overruled)
    required = tuple(required_fact_ids or ())
    missing = tuple(fact for fact in required if fact not in present)
    citations = tuple(
        make_citation(index, hit.chunk, documents[hit.chunk.document_id])
        for index, hit in enumerate(kept, start=1)
    )
    digest_source = json.dumps(
        {
            "query": query_digest,
            "chunks": [[c.chunk_id, c.chunk_digest] for c in citations],
            "present": present,
            "missing": list(missing),
            "quarantined": [q[0] for q in quarantined],
        },
        sort_keys=True,
    )
    return EvidencePacket(
        query_digest=query_digest,
        hits=tuple(kept),
        citations=citations,
        present_fact_ids=tuple(present),
        missing_fact_ids=missing,
        quarantined=tuple(quarantined),
        duplicate_chunk_ids=tuple(duplicates),
        conflicts=conflicts,
        packet_digest=sha256_hex(digest_source),
    )
