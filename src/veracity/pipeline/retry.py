"""One bounded retry when the evidence did not cover what was asked.

When a question (without required facts) is not fully answered, it is
rewritten once from what the question and the evidence already hold, and the
uncovered part is asked again through the whole pipeline (eligibility, recall,
return gate, decision); nothing the retry finds skips a gate.

Rewrites:

- *typos*: a question word that no evidence chunk holds is
  replaced by the evidence's word within Damerau–Levenshtein distance 1
  (2 for words of 8 letters or more; Chinese words of 3 characters or more,
  distance 1). The dense channel usually still finds the right chunks for a
  misspelt word, so their words are the dictionary (``SMAL`` → ``SAML``);
- *other languages and near-synonyms*: such a word is replaced by the
  evidence word the embedder puts closest to it, when close enough
  (:data:`SYNONYM_COSINE`): an English question over Chinese documents is
  decided on the documents' own words, with no translation model;
- *sub-questions*: each uncovered sub-question of a compound question is asked
  on its own, so the evidence is chosen for it alone.

The budget is one retry round per question (at most :data:`MAX_RETRIES`
retrievals); the trace records what was rewritten (counts only, never text),
which sub-questions the retry answered and why it stopped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from ..model.contracts import AnswerStatus, Citation, Claim, Query
from ..text.function_words import CHINESE_FUNCTION_WORDS, ENGLISH_FUNCTION_WORDS
from ..text.scripts import is_han
from ..text.tokens import STOPWORDS, surface_tokens
from .answer import renumber, version_scopes
from .decision import evidence_terms, trust_tiers
from .outcome import Answer
from .retrieve import Retrieval
from .trace import TracedDecision

MAX_RETRIES: Final = 3
"""Retrievals one retry round may run (one per uncovered sub-question, at most this many)."""


def edit_distance(left: str, right: str, limit: int) -> int:
    """Optimal-string-alignment distance (a swap of two neighbours costs 1), capped at ``limit + 1``."""
    if abs(len(left) - len(right)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, start=1):
        current = [i] + [0] * len(right)
        for j, b in enumerate(right, start=1):
            cost = 0 if a == b else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a == right[j - 2] and left[i - 2] == b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _limit(word: str) -> int:
    if word.isascii():
        if not word.isalpha() or len(word) < 4:
            return 0
        return 2 if len(word) >= 8 else 1
    return 1 if len(word) >= 3 and all(is_han(ch) for ch in word) else 0


def typo_fixes(
    question_words: Iterable[tuple[str, str]], missing: Collection[str], evidence_texts: Iterable[str]
) -> dict[str, str]:
    """``{question word: evidence word}`` for question words (``(surface, token)`` pairs, as
    :attr:`veracity.text.questions.AnalyzedQuestion.words`) whose token is ``missing`` (no
    evidence chunk holds it; see above)."""
    vocabulary: Counter[str] = Counter()
    for text in evidence_texts:
        vocabulary.update(surface for surface, _ in surface_tokens(text))
    fixes: dict[str, str] = {}
    for surface, token in question_words:
        limit = _limit(surface)
        if not limit or surface in vocabulary or token not in missing:
            continue
        best: tuple[int, int, str] | None = None
        for word, count in vocabulary.items():
            if word == surface or _limit(word) == 0:
                continue
            distance = edit_distance(surface, word, limit)
            if distance <= limit and (best is None or (distance, -count, word) < best):
                best = (distance, -count, word)
        if best is not None:
            fixes[surface] = best[2]
    return fixes


SYNONYM_COSINE: Final = 0.7
"""Cosine (the index's embedder, word against word) from which an evidence word stands in for a
question word the evidence lacks: translations clear it (member → 成员 0.92, plan → 计划 0.89,
deleted → 删除 0.84, limit → 上限 0.84), while antonyms and loose neighbours, which embedders
also put close, stay below (免费 → 付费 0.62, 取消 → 删除 0.63, delete → 保留 0.53)."""


def _content_words(text: str) -> list[str]:
    function_words = CHINESE_FUNCTION_WORDS | ENGLISH_FUNCTION_WORDS | STOPWORDS
    words = []
    for surface, _ in surface_tokens(text):
        cjk = all(is_han(ch) for ch in surface)
        word = cjk or surface.replace("-", "").isalpha()  # hyphenated words count (sign-on)
        if surface in function_words or (cjk and len(surface) < 2) or not word:
            continue
        words.append(surface)
    return words


def synonym_fixes(
    question_words: Iterable[tuple[str, str]],
    missing: Collection[str],
    evidence_texts: Iterable[str],
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    *,
    skip: Iterable[str] = (),
) -> dict[str, str]:
    """``{question word: evidence word}`` through the embedder, for question words (``(surface,
    token)`` pairs) whose token is ``missing`` from the evidence (other languages,
    near-synonyms); see :data:`SYNONYM_COSINE`."""
    skipped = set(skip)
    wanted = [
        surface
        for surface, token in question_words
        if surface not in skipped and token in missing and surface in _content_words(surface)
    ]
    wanted = list(dict.fromkeys(wanted))
    vocabulary = sorted({w for text in evidence_texts for w in _content_words(text)} - set(wanted))
    if not wanted or not vocabulary:
        return {}
    similarities = embed(wanted) @ embed(vocabulary).T
    fixes: dict[str, str] = {}
    for row, surface in enumerate(wanted):
        best = int(np.argmax(similarities[row]))
        if similarities[row, best] >= SYNONYM_COSINE:
            fixes[surface] = vocabulary[best]
    return fixes


def rewrite(text: str, fixes: Mapping[str, str]) -> str:
    """``text`` with each misspelt word replaced (matched case-insensitively as a whole token)."""
    if not fixes:
        return text
    pieces = []
    position = 0
    lowered = text.lower()
    for surface, replacement in sorted(fixes.items(), key=lambda item: lowered.find(item[0])):
        found = lowered.find(surface, position)
        if found < 0:
            continue
        pieces.append(text[position:found])
        pieces.append(replacement)
        position = found + len(surface)
    pieces.append(text[position:])
    return "".join(pieces)


@dataclass(frozen=True, slots=True)
class Part:
    """What one sub-question's retry produced: its claims and the citations they use."""

    index: int
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    decisions: tuple[TracedDecision, ...] = ()
    """The retried question's own decisions (its trace's), the first of which decided this part."""


def merge_parts(
    claims: Sequence[Claim], citations: Sequence[Citation], parts: Sequence[Part]
) -> tuple[tuple[Claim, ...], tuple[Citation, ...]]:
    """Claims and citations with the parts' appended (each part's claims answer its sub-question);
    a chunk cited twice keeps one number; citations no claim uses any more are dropped."""
    merged_claims = list(claims)
    merged_citations = list(citations)
    by_chunk = {c.chunk_id: c.citation_id for c in merged_citations}
    for part in parts:
        numbers: dict[int, int] = {}
        for citation in part.citations:
            if citation.chunk_id not in by_chunk:
                by_chunk[citation.chunk_id] = len(merged_citations) + 1
                merged_citations.append(replace(citation, citation_id=by_chunk[citation.chunk_id]))
            numbers[citation.citation_id] = by_chunk[citation.chunk_id]
        for claim in part.claims:
            if any(existing.text == claim.text for existing in merged_claims):
                continue
            ids = tuple(dict.fromkeys(numbers[cid] for cid in claim.citation_ids))
            merged_claims.append(replace(claim, citation_ids=ids, subquestion=part.index))
    return tuple(merged_claims), tuple(merged_citations)


def decided_by_retry(
    decisions: Sequence[TracedDecision], parts: Sequence[Part]
) -> tuple[TracedDecision, ...]:
    """The trace's decisions with each part the retry answered decided as the retry decided it
    (so an explanation never says "not covered" for what the answer then says)."""
    retried = {p.index: p.decisions[0] for p in parts if p.decisions}
    return tuple((d[0], *retried[d[0]][1:]) if d[0] in retried else d for d in decisions)


def status_of(answered: int, total: int) -> AnswerStatus:
    """Answer when every sub-question is answered, partial when some are, else abstain."""
    if total == 0 or answered == 0:
        return AnswerStatus.ABSTAIN
    return AnswerStatus.ANSWER if answered == total else AnswerStatus.PARTIAL


def settled(answer: Answer) -> bool:
    """Nothing to retry: every sub-question answered by official sources, or a conflict abstain."""
    if any(r.startswith("conflict:") for r in answer.reasons):
        return True
    official = all(d[2] and d[6] == "official" for d in answer.trace.decisions)
    return answer.status is AnswerStatus.ANSWER and official


def retry(
    query: Query,
    retrieval: Retrieval,
    answer: Answer,
    ask_again: Callable[[str], Answer],
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
) -> Answer:
    """One bounded retry of the sub-questions that are not covered, or covered only by a
    community source (an official answer found by the retry replaces that claim)."""
    subquestions = retrieval.question.subquestions
    targets = [d[0] for d in answer.trace.decisions if not d[2] or d[6] != "official"]
    official, _ = trust_tiers(retrieval.packet.hits, retrieval.documents)
    official_tokens, official_text = evidence_terms(official, retrieval.documents)
    missing = {
        term
        for index in targets
        for term in subquestions[index].terms
        if term not in official_tokens and term not in official_text
    }
    evidence = [official_text] if official_text else []
    fixes = typo_fixes(retrieval.question.words, missing, evidence)
    fixes |= synonym_fixes(retrieval.question.words, missing, evidence, embed, skip=fixes)
    single = len(subquestions) == 1
    if not targets or (single and not fixes):
        return replace(answer, trace=replace(answer.trace, retry=(("stop", "no_rewrite"),)))
    answered_before = {d[0] for d in answer.trace.decisions if d[2]}
    parts: list[Part] = []
    for index in targets[:MAX_RETRIES]:
        retried = ask_again(rewrite(query.text if single else subquestions[index].text, fixes))
        from_official = all(c.source_trust is None for c in retried.claims)
        if retried.status is AnswerStatus.ANSWER and (index not in answered_before or from_official):
            parts.append(Part(index, retried.claims, retried.citations, decisions=retried.trace.decisions))
    replaced = {p.index for p in parts if p.index in answered_before}
    kept_claims = [c for c in answer.claims if not (c.source_trust and c.subquestion in replaced)]
    used = {cid for claim in answer.claims for cid in claim.citation_ids}
    related = [c.citation_id for c in answer.citations if c.citation_id not in used]
    claims, citations = renumber(*merge_parts(kept_claims, answer.citations, parts), related)
    answered = answered_before | {p.index for p in parts}
    status = status_of(len(answered), len(subquestions))
    newly = {f"uncovered:{p.index}" for p in parts}
    reasons = tuple(
        r
        for r in answer.reasons
        if not (r.startswith("version_scope:") or r in newly)
        and not (r == "no_supported_claim" and status is not AnswerStatus.ABSTAIN)
    )
    reasons = (*reasons, *version_scopes(citations, retrieval.documents, query.version))
    trace = replace(
        answer.trace,
        decisions=decided_by_retry(answer.trace.decisions, parts),
        status=status.value,
        reasons=reasons,
        retry=(
            ("rewritten_words", str(len(fixes))),
            ("retrievals", str(min(len(targets), MAX_RETRIES))),
            ("answered", ",".join(str(p.index) for p in parts)),
            ("stop", "answered" if len(parts) == len(targets) else "not_covered"),
        ),
    )
    return replace(
        answer,
        status=status,
        claims=claims,
        citations=citations,
        uncovered_subquestions=tuple(s.text for i, s in enumerate(subquestions) if i not in answered),
        reasons=reasons,
        trace=trace,
    )
