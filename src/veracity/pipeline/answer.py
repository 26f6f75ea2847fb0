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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ..model.contracts import AnswerStatus, Citation, Claim, Document, Hit
from ..model.errors import CitationError
from ..text.questions import SubQuestion, split_subquestions
from ..text.sentences import split_sentences
from ..text.tokens import tokenize
from .decision import AnswerModel, decision_features, rank_candidates, shipped_model
from .evidence import EvidencePacket
from .rerank import version_fit
from .sentences import Embed, TermWeights, candidates

WRITTEN_FOR_TARGET = 0.9
"""``version_fit`` from which a document counts as written for the asked version."""


@dataclass(frozen=True, slots=True)
class AnswerInputs:
    """What the answer step needs beyond the packet: term statistics, vectors, the model."""

    weights: TermWeights = field(default_factory=lambda: TermWeights(chunks=0, frequencies={}))
    question_vector: npt.NDArray[np.float32] | None = None
    embed: Embed | None = None
    model: AnswerModel | None = None
    target_version: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """How one sub-question was decided: its answerability score, the verdict, the features."""

    index: int
    score: float
    answered: bool
    features: tuple[tuple[str, float], ...]


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
        if f.stance == "supports"
        and f.fact_id in hit.chunk.fact_ids
        and (f.quote in text or text in f.quote)
    )


def _claim_for_fact(fact_id: str, hit: Hit, documents: Mapping[str, Document]) -> str:
    document = documents[hit.chunk.document_id]
    quote = next(f.quote for f in document.facts if f.fact_id == fact_id and f.stance == "supports")
    position = hit.chunk.text.index(quote)
    return _sentence_around(hit.chunk.text, position, position + len(quote))


def _decide(
    index: int,
    sub: SubQuestion,
    packet: EvidencePacket,
    documents: Mapping[str, Document],
    inputs: AnswerInputs,
    evidence: tuple[frozenset[str], str],
) -> tuple[Decision, Hit | None, str | None]:
    """Score the evidence's sentences for ``sub`` and decide whether the best one is said."""
    model = inputs.model or shipped_model()
    usable = [h for h in packet.hits if h.chunk.chunk_id not in packet.superseded_chunk_ids]
    found = candidates(
        sub,
        usable,
        documents,
        inputs.weights,
        question_vector=inputs.question_vector,
        embed=inputs.embed,
    )
    ranked = rank_candidates(model.sentence, found)
    features = decision_features(sub, [r for r, _ in ranked], evidence[0], evidence[1], inputs.weights)
    score = model.decision.probability(features)
    answered = bool(ranked) and score >= model.threshold
    decision = Decision(
        index=index, score=score, answered=answered, features=tuple(sorted(features.items()))
    )
    if not answered:
        return decision, None, None
    best = ranked[0][1]
    return decision, best.hit, best.claim


def _evidence_terms(packet: EvidencePacket, documents: Mapping[str, Document]) -> tuple[frozenset[str], str]:
    """Tokens and text of every evidence chunk with its heading path and document title."""
    parts = []
    for hit in packet.hits:
        document = documents[hit.chunk.document_id]
        parts.append(" ".join((document.title, *hit.chunk.heading_path, hit.chunk.text)))
    text = "\n".join(parts)
    return frozenset(tokenize(text)), text


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
    *,
    inputs: AnswerInputs | None = None,
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
    decisions: list[Decision] = []
    if required_fact_ids:
        for fact_id in required_fact_ids:
            hit = next(
                (
                    h
                    for h in packet.hits
                    if fact_id in h.chunk.fact_ids and h.chunk.chunk_id not in packet.superseded_chunk_ids
                ),
                None,
            )
            if hit is None:
                continue
            text = _claim_for_fact(fact_id, hit, documents)
            citation = packet.citation_for(hit.chunk.chunk_id)
            _add_claim(claims, text, citation.citation_id, _facts_in(text, hit, documents))
        wanted, got = len(required_fact_ids), len(required_fact_ids) - len(packet.missing_fact_ids)
        reasons = tuple(f"missing_fact:{f}" for f in packet.missing_fact_ids)
    else:
        subquestions = split_subquestions(question)
        evidence = _evidence_terms(packet, documents)
        for index, sub in enumerate(subquestions):
            decision, hit, sentence = _decide(
                index, sub, packet, documents, inputs or AnswerInputs(), evidence
            )
            decisions.append(decision)
            if hit is None or sentence is None:
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
    target = inputs.target_version if inputs is not None else None
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


def version_scopes(
    citations: Sequence[Citation], documents: Mapping[str, Document], target_version: str | None
) -> tuple[str, ...]:
    """``version_scope:<id>`` for each citation of a document not written for the asked version.

    Such a document covers the asked version only through an open or wider
    range (a 3.2 page asked about 3.3): the answer must say which versions
    its source covers instead of presenting it as a statement about the target.
    """
    if not target_version:
        return ()
    scoped = []
    for citation in citations:
        document = documents[citation.document_id]
        bounded = document.version_min is not None or document.version_max is not None
        if bounded and version_fit(document, target_version) < WRITTEN_FOR_TARGET:
            scoped.append(f"version_scope:{citation.citation_id}")
    return tuple(scoped)


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
