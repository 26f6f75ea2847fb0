"""Policy, extractive composer and claim/citation verification.

Policy:
- an unresolved conflict between eligible sources → abstain, citations kept;
- required facts given (a case, a caller): all present → answer, some →
  partial (missing ones listed, nothing said about them), none → abstain;
- otherwise each sub-question of the question must be covered by one evidence
  chunk: enough of its terms, and every noun it asks about present somewhere in
  the evidence. All covered → answer, some → partial, none → abstain.

The composer is extractive: every claim is sentence(s) copied from the chunk it
cites, so a claim can never say more than its evidence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..model.contracts import AnswerStatus, Citation, Claim, Document, Hit
from ..model.errors import CitationError
from ..text.questions import SubQuestion, split_subquestions
from ..text.sentences import split_sentences
from ..text.tokens import tokenize
from .evidence import EvidencePacket
from .rerank import TRUST_VALUE, chunk_terms

SUBQUESTION_COVERAGE = 0.5
_QUESTION = re.compile(r"[？?]\s*$")


@dataclass(frozen=True, slots=True)
class Composition:
    """What the policy decided and the claims that go with it."""

    status: AnswerStatus
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    missing_fact_ids: tuple[str, ...]
    uncovered_subquestions: tuple[str, ...]
    reasons: tuple[str, ...]


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
        if f.stance == "supports"
        and f.fact_id in hit.chunk.fact_ids
        and (f.quote in text or text in f.quote)
    )


def _claim_for_fact(fact_id: str, hit: Hit, documents: Mapping[str, Document]) -> str:
    document = documents[hit.chunk.document_id]
    quote = next(f.quote for f in document.facts if f.fact_id == fact_id and f.stance == "supports")
    position = hit.chunk.text.index(quote)
    return _sentence_around(hit.chunk.text, position, position + len(quote))


def _best_sentence(sub: SubQuestion, hit: Hit, documents: Mapping[str, Document]) -> str | None:
    text = hit.chunk.text
    document = documents[hit.chunk.document_id]
    quote_spans = [
        (text.index(f.quote), text.index(f.quote) + len(f.quote))
        for f in document.facts
        if f.stance == "supports" and f.fact_id in hit.chunk.fact_ids
    ]
    best: tuple[float, int, str] | None = None
    for start, end in split_sentences(text):
        if _QUESTION.search(text[start:end]):
            continue  # a question asserts nothing; it can never be a claim
        tokens = set(tokenize(text[start:end]))
        score = sum(term in tokens for term in sub.terms) / len(sub.terms)
        if any(qs < end and start < qe for qs, qe in quote_spans):
            score += 0.5
        if best is None or score > best[0]:
            best = (score, start, text[start:end])
    return best[2] if best is not None and best[0] > 0 else None


def _covering_hit(
    sub: SubQuestion,
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    evidence_terms: frozenset[str],
) -> Hit | None:
    if any(noun not in evidence_terms for noun in sub.focus_nouns):
        return None
    candidates = []
    for hit in hits:
        terms = chunk_terms(hit, documents[hit.chunk.document_id])
        share = sum(term in terms for term in sub.terms) / len(sub.terms)
        if share >= SUBQUESTION_COVERAGE:
            trust = TRUST_VALUE[documents[hit.chunk.document_id].trust]
            candidates.append((-trust, -share, hit.rank, hit.chunk.chunk_id, hit))
    return min(candidates)[-1] if candidates else None


def _add_claim(claims: list[Claim], text: str, citation_id: int, fact_ids: tuple[str, ...]) -> None:
    for index, claim in enumerate(claims):
        if claim.text == text:
            merged_facts = tuple(dict.fromkeys((*claim.fact_ids, *fact_ids)))
            claims[index] = Claim(text=text, citation_ids=claim.citation_ids, fact_ids=merged_facts)
            return
    claims.append(Claim(text=text, citation_ids=(citation_id,), fact_ids=fact_ids))


def compose(
    question: str,
    packet: EvidencePacket,
    documents: Mapping[str, Document],
    required_fact_ids: Sequence[str] | None = None,
) -> Composition:
    """Decide answer / partial / abstain and write the extractive claims."""
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
    if required_fact_ids:
        for fact_id in required_fact_ids:
            hit = next((h for h in packet.hits if fact_id in h.chunk.fact_ids), None)
            if hit is None:
                continue
            text = _claim_for_fact(fact_id, hit, documents)
            citation = packet.citation_for(hit.chunk.chunk_id)
            _add_claim(claims, text, citation.citation_id, _facts_in(text, hit, documents))
        wanted, got = len(required_fact_ids), len(required_fact_ids) - len(packet.missing_fact_ids)
        reasons = tuple(f"missing_fact:{f}" for f in packet.missing_fact_ids)
    else:
        subquestions = split_subquestions(question)
        evidence_terms = frozenset().union(
            *(chunk_terms(h, documents[h.chunk.document_id]) for h in packet.hits)
        )
        for sub in subquestions:
            hit = _covering_hit(sub, packet.hits, documents, evidence_terms)
            if hit is None:
                uncovered.append(sub.text)
                continue
            sentence = _best_sentence(sub, hit, documents)
            if sentence is None:
                uncovered.append(sub.text)
                continue
            citation = packet.citation_for(hit.chunk.chunk_id)
            _add_claim(claims, sentence, citation.citation_id, _facts_in(sentence, hit, documents))
        wanted, got = len(subquestions), len(subquestions) - len(uncovered)
        reasons = tuple(
            f"uncovered:{index}" for index, sub in enumerate(subquestions) if sub.text in uncovered
        )
    if wanted == 0 or got == 0:
        status = AnswerStatus.ABSTAIN
        claims = []
        reasons = (*reasons, "no_supported_claim")
    elif got < wanted:
        status = AnswerStatus.PARTIAL
    else:
        status = AnswerStatus.ANSWER
    renumbered_claims, cited = _renumber(claims, packet.citations)
    return Composition(
        status=status,
        claims=renumbered_claims,
        citations=cited,
        missing_fact_ids=packet.missing_fact_ids if required_fact_ids else (),
        uncovered_subquestions=tuple(uncovered),
        reasons=reasons,
    )


def _renumber(
    claims: Sequence[Claim], citations: Sequence[Citation]
) -> tuple[tuple[Claim, ...], tuple[Citation, ...]]:
    """Number the cited citations 1..n in order of first use; drop the uncited."""
    new_id: dict[int, int] = {}
    for claim in claims:
        for cid in claim.citation_ids:
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
            raise CitationError(
                f"claim {index} cites nothing; every claim needs at least one citation"
            )
        if len(set(claim.citation_ids)) != len(claim.citation_ids):
            raise CitationError(
                f"claim {index} cites the same id twice: {list(claim.citation_ids)}"
            )
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
        texts = [
            chunk_texts.get(by_id[cid].chunk_id, "") for cid in claim.citation_ids if cid in by_id
        ]
        if not any(claim.text in text for text in texts):
            count += 1
    return count
