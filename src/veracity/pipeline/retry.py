"""One bounded retry when the evidence did not cover what was asked.

When a question (without required facts) is not fully answered, it is
rewritten once from what the question and the evidence already hold, and the
uncovered part is asked again through the whole pipeline (eligibility, recall,
return gate, decision); nothing the retry finds skips a gate.

Rewrites:

- *typos*: a question word that no chunk the principal may use holds is
  replaced by the evidence's word within Damerau–Levenshtein distance 1
  (2 for words of 8 letters or more; Chinese words of 3 characters or more,
  distance 1). The dense channel usually still finds the right chunks for a
  misspelt word, so their words are the dictionary (``SMAL`` → ``SAML``);
- *sub-questions*: each uncovered sub-question of a compound question is asked
  on its own, so the evidence is chosen for it alone.

The budget is one retry round per question (at most :data:`MAX_RETRIES`
retrievals); the trace records what was rewritten (counts only, never text),
which sub-questions the retry answered and why it stopped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from ..model.contracts import AnswerStatus, Citation, Claim
from ..text.tokens import surface_tokens
from .sentences import TermWeights

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
    return 1 if len(word) >= 3 and all("\u3400" <= ch <= "\u9fff" for ch in word) else 0


def typo_fixes(question: str, weights: TermWeights, evidence_texts: Iterable[str]) -> dict[str, str]:
    """``{question word: evidence word}`` for question words no usable chunk holds (see above)."""
    vocabulary: Counter[str] = Counter()
    for text in evidence_texts:
        vocabulary.update(surface for surface, _ in surface_tokens(text))
    fixes: dict[str, str] = {}
    for surface, token in surface_tokens(question):
        limit = _limit(surface)
        if not limit or surface in vocabulary or weights.seen(token):
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


def merge_parts(
    claims: Sequence[Claim], citations: Sequence[Citation], parts: Sequence[Part]
) -> tuple[tuple[Claim, ...], tuple[Citation, ...]]:
    """Claims and citations with the parts' appended; a chunk cited twice keeps one number."""
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
            merged_claims.append(replace(claim, citation_ids=ids))
    return tuple(merged_claims), tuple(merged_citations)


def status_of(answered: int, total: int) -> AnswerStatus:
    """Answer when every sub-question is answered, partial when some are, else abstain."""
    if total == 0 or answered == 0:
        return AnswerStatus.ABSTAIN
    return AnswerStatus.ANSWER if answered == total else AnswerStatus.PARTIAL
