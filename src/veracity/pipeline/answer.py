"""Policy, extractive composer and claim/citation verification.

Policy:
- an unresolved conflict between eligible sources → abstain, citations kept;
- required facts given (a case, a caller): all present → answer, some →
  partial (missing ones listed, nothing said about them), none → abstain;
- otherwise each sub-question of the question is decided on its own
  (:mod:`veracity.pipeline.decision`): the best-scoring sentence of the
  evidence is its claim when the calibrated answerability model says the
  evidence covers it. All covered → answer, some → partial, none → abstain.

The composer is extractive: every claim is sentence(s) copied from the chunk it
cites, so a claim can never say more than its evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..model.contracts import AnswerStatus, Citation, Claim, Document, Hit, Trust
from ..model.errors import CitationError
from ..model.governance import NON_OFFICIAL_MARKED
from ..text.questions import AnalyzedQuestion, SubQuestion
from ..text.sentences import split_sentences
from .candidates import Candidate
from .decision import (
    AnswerInputs,
    Decision,
    decide,
    reported_model_turn,
    trust_tiers,
)
from .evidence import EvidencePacket
from .reading import reader_decide
from .rerank import TRUST_VALUE, version_fit


@dataclass(frozen=True, slots=True)
class Composition:
    """What the policy decided and the claims that go with it."""

    status: AnswerStatus
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    missing_fact_ids: tuple[str, ...]
    uncovered_subquestions: tuple[str, ...]
    reasons: tuple[str, ...]
    decisions: tuple[Decision, ...] = field(default=())


def _sentence_around(text: str, start: int, end: int) -> str:
    """The sentence(s) of ``text`` that overlap ``[start, end)``, joined as in the text."""
    spans = [s for s in split_sentences(text) if s[0] < end and start < s[1]]
    if not spans:
        return text[start:end]
    return text[spans[0][0] : spans[-1][1]]


def _facts_in(text: str, hit: Hit, documents: Mapping[str, Document]) -> tuple[str, ...]:
    document = documents[hit.chunk.document_id]
    return tuple(
        f.fact_id
        for f in document.facts
        if f.stance == "supports" and f.fact_id in hit.chunk.fact_ids and (f.quote in text or text in f.quote)
    )


def _claim_for_fact(fact_id: str, hit: Hit, documents: Mapping[str, Document]) -> str:
    document = documents[hit.chunk.document_id]
    quote = next(f.quote for f in document.facts if f.fact_id == fact_id and f.stance == "supports")
    position = hit.chunk.text.index(quote)
    return _sentence_around(hit.chunk.text, position, position + len(quote))


def _add_claim(
    claims: list[Claim],
    text: str,
    citation_id: int,
    fact_ids: tuple[str, ...],
    *,
    source_trust: str | None = None,
    subquestion: int | None = None,
) -> None:
    for index, claim in enumerate(claims):
        if claim.text == text:
            merged_facts = tuple(dict.fromkeys((*claim.fact_ids, *fact_ids)))
            claims[index] = replace(claim, fact_ids=merged_facts)
            return
    claims.append(
        Claim(
            text=text,
            citation_ids=(citation_id,),
            fact_ids=fact_ids,
            source_trust=source_trust,
            subquestion=subquestion,
        )
    )


def compose(
    question: AnalyzedQuestion,
    packet: EvidencePacket,
    documents: Mapping[str, Document],
    required_fact_ids: Sequence[str] | None = None,
    *,
    inputs: AnswerInputs | None = None,
) -> Composition:
    """Decide answer / partial / abstain and write the extractive claims for ``question`` (its
    sub-questions as analysed for the ask)."""
    if packet.unresolved_conflicts:
        return Composition(
            status=AnswerStatus.ABSTAIN,
            claims=(),
            citations=packet.citations,
            missing_fact_ids=packet.missing_fact_ids,
            uncovered_subquestions=(),
            reasons=tuple(f"conflict:{c.fact_id}" for c in packet.unresolved_conflicts),
        )
    claims: list[Claim] = []
    uncovered: list[str] = []
    decisions: list[Decision] = []
    related: list[int] = []
    notes: list[str] = []
    if required_fact_ids:
        for fact_id in required_fact_ids:
            holders = [
                h
                for h in packet.hits
                if fact_id in h.chunk.fact_ids and h.chunk.chunk_id not in packet.superseded_chunk_ids
            ]
            if not holders:
                continue
            hit = max(holders, key=lambda h: TRUST_VALUE[documents[h.chunk.document_id].trust])
            trust = documents[hit.chunk.document_id].trust
            text = _claim_for_fact(fact_id, hit, documents)
            citation = packet.citation_for(hit.chunk.chunk_id)
            _add_claim(
                claims,
                text,
                citation.citation_id,
                _facts_in(text, hit, documents),
                source_trust=None if trust is Trust.OFFICIAL else trust.value,
            )
        wanted, got = len(required_fact_ids), len(required_fact_ids) - len(packet.missing_fact_ids)
        reasons = tuple(f"missing_fact:{f}" for f in packet.missing_fact_ids)
    else:
        subquestions = question.subquestions
        usable = [h for h in packet.hits if h.chunk.chunk_id not in packet.superseded_chunk_ids]
        official, community = trust_tiers(usable, documents)
        settings = inputs or AnswerInputs()
        for index, sub in enumerate(subquestions):
            decision, best = _decide(index, sub, official, documents, settings)
            if best is None and community:
                second, found = _decide(index, sub, community, documents, settings, tier="community")
                if found is not None and settings.non_official == NON_OFFICIAL_MARKED:
                    decision, best = second, found
                elif found is not None:
                    related.append(packet.citation_for(found.hit.chunk.chunk_id).citation_id)
                    notes.append(f"related_non_official:{index}")
            decisions.append(decision)
            if best is None:
                uncovered.append(sub.text)
                continue
            citation = packet.citation_for(best.hit.chunk.chunk_id)
            marked = None if decision.tier == "official" else decision.tier
            facts = tuple(dict.fromkeys((*_facts_in(best.claim, best.hit, documents),
                                         *_facts_in(best.span, best.hit, documents))))  # fmt: skip
            _add_claim(
                claims, best.claim, citation.citation_id, facts, source_trust=marked, subquestion=index
            )
        wanted, got = len(subquestions), len(subquestions) - len(uncovered)
        reasons = tuple(
            f"uncovered:{index}" for index, sub in enumerate(subquestions) if sub.text in uncovered
        ) + tuple(notes)
    if wanted == 0 or got == 0:
        status = AnswerStatus.ABSTAIN
        claims = []
        reasons = (*reasons, "no_supported_claim")
    elif got < wanted:
        status = AnswerStatus.PARTIAL
    else:
        status = AnswerStatus.ANSWER
    renumbered_claims, cited = renumber(claims, packet.citations, related)
    target = inputs.version if inputs is not None else None
    reasons = (*reasons, *version_scopes(cited, documents, target))
    return Composition(
        status=status,
        claims=renumbered_claims,
        citations=cited,
        missing_fact_ids=packet.missing_fact_ids if required_fact_ids else (),
        uncovered_subquestions=tuple(uncovered),
        reasons=reasons,
        decisions=tuple(decisions),
    )


def _decide(
    index: int,
    sub: SubQuestion,
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    settings: AnswerInputs,
    *,
    tier: str = "official",
) -> tuple[Decision, Candidate | None]:
    """The reader's decision when there is a reader, else the logistic models'; a non-official
    claim that reports a model's turn is never said (it may be cited as related)."""
    if settings.reader is None:
        return decide(index, sub, hits, documents, settings, tier=tier)
    if not settings.reader.decides:  # the logistic models decide; the reader chooses the claim
        decision, best = decide(index, sub, hits, documents, settings, tier=tier)
        if decision.answered:
            _, chosen, _ = reader_decide(index, sub, hits, documents, settings.reader, -math.inf, tier=tier)
            best = chosen or best
    else:
        threshold = settings.reader.threshold_for(sub.language)
        decision, best, _ = reader_decide(index, sub, hits, documents, settings.reader, threshold, tier=tier)
    if best is not None and tier != "official" and reported_model_turn(best.claim):
        return replace(decision, answered=False), None
    return decision, best


WRITTEN_FOR_TARGET = 0.9
"""``version_fit`` from which a document counts as written for the asked version."""


def version_scopes(
    citations: Sequence[Citation], documents: Mapping[str, Document], version: str | None
) -> tuple[str, ...]:
    """``version_scope:<id>`` for each citation of a document not written for the asked version.

    Such a document covers the asked version only through an open or wider
    range (a 3.2 page asked about 3.3): the answer must say which versions
    its source covers instead of presenting it as a statement about the target.
    """
    if not version:
        return ()
    scoped = []
    for citation in citations:
        document = documents[citation.document_id]
        bounded = document.version_min is not None or document.version_max is not None
        if bounded and version_fit(document, version) < WRITTEN_FOR_TARGET:
            scoped.append(f"version_scope:{citation.citation_id}")
    return tuple(scoped)


def renumber(
    claims: Sequence[Claim], citations: Sequence[Citation], related: Sequence[int] = ()
) -> tuple[tuple[Claim, ...], tuple[Citation, ...]]:
    """Number the cited citations 1..n in order of first use, then ``related``; drop the rest."""
    new_id: dict[int, int] = {}
    for claim in claims:
        for cid in claim.citation_ids:
            new_id.setdefault(cid, len(new_id) + 1)
    for cid in related:
        new_id.setdefault(cid, len(new_id) + 1)
    renumbered = tuple(replace(c, citation_ids=tuple(new_id[i] for i in c.citation_ids)) for c in claims)
    kept = sorted(
        (replace(c, citation_id=new_id[c.citation_id]) for c in citations if c.citation_id in new_id),
        key=lambda c: c.citation_id,
    )
    return renumbered, tuple(kept)


def verify_claims(claims: Sequence[Claim], citations: Sequence[Citation]) -> None:
    """Raise ``CitationError`` for a claim with no citation, a duplicate id, or an unknown id."""
    known = {c.citation_id for c in citations}
    for index, claim in enumerate(claims, start=1):
        if not claim.citation_ids:
            raise CitationError(f"claim {index} cites nothing; every claim needs at least one citation")
        if len(set(claim.citation_ids)) != len(claim.citation_ids):
            raise CitationError(f"claim {index} cites the same id twice: {list(claim.citation_ids)}")
        unknown = [cid for cid in claim.citation_ids if cid not in known]
        if unknown:
            raise CitationError(
                f"claim {index} cites {unknown}, which are not in the evidence (known: {sorted(known)})"
            )


def unsupported_claims(
    claims: Sequence[Claim], citations: Sequence[Citation], chunk_texts: Mapping[str, str]
) -> int:
    """Claims whose text is not found in any chunk they cite."""
    by_id = {c.citation_id: c for c in citations}
    count = 0
    for claim in claims:
        texts = [chunk_texts.get(by_id[cid].chunk_id, "") for cid in claim.citation_ids if cid in by_id]
        if not any(claim.text in text for text in texts):
            count += 1
    return count
