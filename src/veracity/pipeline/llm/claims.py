"""A written answer, claim by claim: split it, and check each claim against the blocks it cites.

A claim is one sentence of the model's text with the block numbers written after it (``[1]``,
``[2][3]``, ``[1, 2]``, ``【1】``), before or after its closing stop; a sentence that holds only
numbers lends them to the one before it. Each claim passes these checks in order, and the first
it fails is its reason (:class:`DropReason`):

1. it cites at least one block (``no_citation``), and only blocks that exist
   (``unknown_citation``);
2. it gives no order to anyone: the injection detector that guards the context reads the
   claim too (``instruction``), so an order echoed from a chunk never reaches the reader;
3. it speaks to a sub-question the gate covered: a claim whose terms cover a sub-question the
   evidence did not answer (more than :data:`UNCOVERED_SHARE` of its weight, and more than any
   covered sub-question) is about what is missing (``uncovered_subquestion``);
4. every number, date and version (``number_not_in_source``), code value
   (``code_not_in_source``) and name (``name_not_in_source``) it holds occurs in the cited
   blocks, normalized (:mod:`veracity.text.values`); and each of its clauses negates exactly
   when the cited clause it rests on does (``negation_mismatch``, :func:`negation_agrees`);
5. the cited blocks carry at least :data:`MIN_COVERAGE` of its content terms' weight
   (``low_term_coverage``): the question analysis of :mod:`veracity.text.questions` applied to
   the claim, weighted by IDF over the blocks' sentences, measured by
   :func:`veracity.pipeline.candidates.weighted_coverage`, as sentence choice measures a
   sentence against a question;
6. its dense similarity with the closest cited sentence (or whole block) is at least
   :data:`MIN_SIMILARITY` with the index's embedder (``low_similarity``); skipped when the
   answer ran without the dense channel.

Both thresholds are swept on tuning splits only by ``python -m veracity.bench.claims`` (see
that module and the README): supported and corrupted claims built from the gold answers of
SQuAD 2.0 half-dev (part ``tune``) and CMRC 2018 ``trial``, checked against their cited
paragraph; the reporting splits are scored with the values shipped here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import numpy as np

from ...text.questions import SubQuestion, analyze
from ...text.sentences import split_sentences
from ...text.tokens import tokenize
from ...text.values import codes, fold, names, negates, numbers
from ..candidates import Embed, TermWeights, local_weights, weighted_coverage
from ..injection import instruction_signals
from .context import Block

MIN_COVERAGE: Final = 0.5
"""Least share of a claim's content-term weight that its cited blocks must hold (tuned: see the
module docstring)."""
MIN_SIMILARITY: Final = 0.0
"""Least cosine between a claim and its closest cited sentence (the index's embedder). Tuned to
0: on the tuning claims the default embedder's cosine did not separate supported from corrupted
claims (a copied sentence with one swapped entity scores above a correct clause), so every
positive threshold dropped more supported claims than it caught; the check still drops a claim
that points away from everything it cites."""
UNCOVERED_SHARE: Final = 0.5
"""A claim covering more than half of an uncovered sub-question's weight is about it."""

_MARKERS = re.compile(r"\[(\d+(?:\s*[,，、]\s*\d+)*)\]|【(\d+)】")
_LEADING_MARKERS = re.compile(r"^(?:\s*(?:\[\d+(?:\s*[,，、]\s*\d+)*\]|【\d+】))+\s*")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_EMPHASIS = re.compile(r"\*\*|__|`(?=[^`]*$)")
_CLAUSE = re.compile(r"[;；:：，|()（）]|,(?=\s)")
"""Clause boundaries, table cells and brackets included (a comma inside 1,000 is not one)."""


class DropReason(StrEnum):
    """Why a written claim was dropped (see the module docstring)."""

    NO_CITATION = "no_citation"
    UNKNOWN_CITATION = "unknown_citation"
    INSTRUCTION = "instruction"
    UNCOVERED = "uncovered_subquestion"
    NUMBER = "number_not_in_source"
    CODE = "code_not_in_source"
    NAME = "name_not_in_source"
    NEGATION = "negation_mismatch"
    COVERAGE = "low_term_coverage"
    SIMILARITY = "low_similarity"


@dataclass(frozen=True, slots=True)
class WrittenClaim:
    """One sentence of the model's text (markers removed) and the block numbers it cites."""

    index: int
    text: str
    blocks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """The verdict on one written claim."""

    claim: WrittenClaim
    reason: DropReason | None
    subquestion: int | None = None
    coverage: float = 0.0
    similarity: float | None = None
    precise_citations: int = 0
    supported: bool = False
    """Whether the cited blocks support the claim (checks 4–6), whatever else it failed."""
    share: float = 0.0
    """The share of its sub-question's term weight the claim holds (how much of it it answers)."""

    @property
    def verified(self) -> bool:
        """Whether the claim passed every check."""
        return self.reason is None


def _cited(text: str) -> tuple[int, ...]:
    """The block numbers of the markers in ``text``, in order, each once."""
    return tuple(
        dict.fromkeys(
            int(n)
            for m in _MARKERS.finditer(text)
            for n in re.split(r"\s*[,，、]\s*", m.group(1) or m.group(2))
        )
    )


def split_claims(text: str) -> list[WrittenClaim]:
    """The claims of a written answer (see the module docstring), numbered from 1."""
    found: list[tuple[str, tuple[int, ...]]] = []
    for line in text.replace("\r", "").split("\n"):
        line = _EMPHASIS.sub("", _BULLET.sub("", line)).strip()
        for start, end in split_sentences(line):
            sentence = line[start:end]
            # "… 99.95%. [1] Credits …": a marker written after the closing stop is split off with
            # the next sentence, but it cites the one it follows
            leading = _LEADING_MARKERS.match(sentence)
            if leading and found and re.search(r"\w", sentence[leading.end() :]):
                previous, blocks = found[-1]
                found[-1] = (previous, tuple(dict.fromkeys((*blocks, *_cited(leading.group(0))))))
                sentence = sentence[leading.end() :]
            cited = _cited(sentence)
            plain = " ".join(_MARKERS.sub(" ", sentence).split())
            plain = re.sub(r"\s+([。.!?！？,，;；:：])", r"\1", plain)
            if not re.search(r"\w", plain):
                if found and cited:
                    previous, blocks = found[-1]
                    found[-1] = (previous, tuple(dict.fromkeys((*blocks, *cited))))
                continue
            found.append((plain, cited))
    return [WrittenClaim(index=i, text=t, blocks=b) for i, (t, b) in enumerate(found, start=1)]


@dataclass(frozen=True, slots=True)
class Verifier:
    """What claims are checked against: the blocks, the question's sub-questions, the embedder,
    and the thresholds (the measured defaults; the claim benchmark sweeps them)."""

    blocks: Mapping[int, Block]
    subquestions: Sequence[SubQuestion]
    covered: frozenset[int]
    question_weights: TermWeights
    embed: Embed | None = None
    min_coverage: float = MIN_COVERAGE
    min_similarity: float = MIN_SIMILARITY

    def check(self, claim: WrittenClaim) -> ClaimCheck:
        """The verdict on ``claim``: its reason (``None`` when verified), its sub-question, whether
        its citations support it (checks 4–6) and how many of them do (see :meth:`precise`)."""
        subquestion, about_missing, share = self.assign(claim.text)
        if not claim.blocks:
            return ClaimCheck(claim, DropReason.NO_CITATION, subquestion, share=share)
        if any(number not in self.blocks for number in claim.blocks):
            return ClaimCheck(claim, DropReason.UNKNOWN_CITATION, subquestion, share=share)
        support, coverage, similarity = self.support(claim.text, claim.blocks)
        precise = self.precise(claim, support is None)
        if instruction_signals(claim.text):
            reason: DropReason | None = DropReason.INSTRUCTION
        elif about_missing:
            reason = DropReason.UNCOVERED
        else:
            reason = support
        return ClaimCheck(claim, reason, subquestion, coverage, similarity, precise, support is None, share)

    def precise(self, claim: WrittenClaim, supported: bool) -> int:
        """Citations of ``claim`` that earn their place: the block supports the claim alone, or the
        claim is supported with it and not without it (the ALCE citation-precision rule)."""
        if len(claim.blocks) == 1:
            return int(supported)
        return sum(
            1
            for number in claim.blocks
            if self.support(claim.text, (number,))[0] is None
            or (
                supported
                and self.support(claim.text, tuple(b for b in claim.blocks if b != number))[0] is not None
            )
        )

    def assign(self, text: str) -> tuple[int | None, bool, float]:
        """The sub-question ``text`` speaks to, whether that one is not covered, and the share of
        its term weight that ``text`` holds."""
        if not self.subquestions:
            return None, False, 0.0
        tokens = frozenset(tokenize(text))
        shares = [weighted_coverage(s, self.question_weights, tokens, text) for s in self.subquestions]
        covered = [i for i in range(len(shares)) if i in self.covered]
        best_covered = max(covered, key=lambda i: (shares[i], -i), default=None)
        uncovered = [i for i in range(len(shares)) if i not in self.covered]
        best_missing = max(uncovered, key=lambda i: (shares[i], -i), default=None)
        if (
            best_missing is not None
            and shares[best_missing] > UNCOVERED_SHARE
            and (best_covered is None or shares[best_missing] > shares[best_covered])
        ):
            return best_missing, True, shares[best_missing]
        return best_covered, False, (shares[best_covered] if best_covered is not None else 0.0)

    def support(self, text: str, cited: Sequence[int]) -> tuple[DropReason | None, float, float | None]:
        """Whether the blocks ``cited`` support ``text`` (checks 4–6), its coverage and similarity."""
        blocks = [self.blocks[n] for n in cited]
        source = "\n".join(f"{b.subject} {b.versions}\n{b.text}" for b in blocks)
        folded = fold(source)
        if not numbers(text) <= numbers(source):
            return DropReason.NUMBER, 0.0, None
        if any(code not in folded for code in codes(text)):
            return DropReason.CODE, 0.0, None
        if any(name not in folded for name in names(text)):
            return DropReason.NAME, 0.0, None
        sentences = [b.text[s:e] for b in blocks for s, e in split_sentences(b.text)]
        if not negation_agrees(text, sentences):
            return DropReason.NEGATION, 0.0, None
        coverage = claim_coverage(text, source, [s for b in self.blocks.values() for s in _sentences(b)])
        if coverage < self.min_coverage:
            return DropReason.COVERAGE, coverage, None
        similarity = None
        if self.embed is not None:
            candidates = [*sentences, *(b.text for b in blocks)]
            vectors = self.embed([text, *candidates])
            similarity = float(np.max(vectors[1:] @ vectors[0]))
            if similarity < self.min_similarity:
                return DropReason.SIMILARITY, coverage, similarity
        return None, coverage, similarity


def _sentences(block: Block) -> list[str]:
    return [block.text[s:e] for s, e in split_sentences(block.text)]


def negation_agrees(text: str, sentences: Sequence[str]) -> bool:
    """Whether each clause of ``text`` negates as the cited clause it rests on does: the clause of
    ``sentences`` sharing the most tokens with it (any of those tied). Clauses, not sentences, so
    that a claim stating one clause of a sentence is not held to a negation in another one; a
    negating clause that rests on nothing disagrees."""
    source = [(c, frozenset(tokenize(c))) for s in sentences for c in _CLAUSE.split(s) if c.strip()]
    for clause in _CLAUSE.split(text):
        tokens = frozenset(tokenize(clause))
        if not tokens:
            continue
        overlaps = [len(tokens & words) for _, words in source]
        best = max(overlaps, default=0)
        negated = negates(clause)
        if best == 0:
            if negated:
                return False
            continue
        if not any(negates(c) == negated for (c, _), o in zip(source, overlaps, strict=True) if o == best):
            return False
    return True


def aligned(text: str, sentences: Sequence[str]) -> list[str]:
    """The sentences ``text`` rests on: those sharing the most of its tokens (at least half as
    many as the best one, and at least one)."""
    tokens = frozenset(tokenize(text))
    overlaps = [len(tokens & frozenset(tokenize(s))) for s in sentences]
    best = max(overlaps, default=0)
    if best == 0:
        return []
    return [s for s, overlap in zip(sentences, overlaps, strict=True) if overlap * 2 >= best]


def rests_on_quote(text: str, chunk_text: str, quote: str) -> bool:
    """Whether the sentence of ``chunk_text`` that ``text`` shares most tokens with (the first
    on ties) lies inside ``quote`` or holds it: a paraphrase states the fact that sentence
    carries, even when its words cover less of the quote than :data:`MIN_COVERAGE`."""
    sentences = [chunk_text[s:e] for s, e in split_sentences(chunk_text)]
    tokens = frozenset(tokenize(text))
    overlaps = [len(tokens & frozenset(tokenize(s))) for s in sentences]
    if not overlaps or max(overlaps) == 0:
        return False
    best = fold(sentences[overlaps.index(max(overlaps))])
    folded = fold(quote)
    return bool(best) and (best in folded or folded in best)


def claim_terms(text: str) -> SubQuestion | None:
    """The claim's content terms, found as the question analysis finds a question's."""
    return analyze(text)


def claim_coverage(text: str, source: str, context_sentences: Sequence[str]) -> float:
    """Share of the claim's content-term weight held by ``source`` (IDF over ``context_sentences``)."""
    terms = claim_terms(text)
    if terms is None:
        return 0.0
    plain = SubQuestion(text=terms.text, terms=terms.terms, language=terms.language)
    weights = local_weights(plain, context_sentences)
    return weighted_coverage(plain, weights, frozenset(tokenize(source)), source)
