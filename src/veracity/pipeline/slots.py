"""Surface features of a question against a sentence: shared phrases and characters, the words
around the question word, and where the asked-for slot would sit.

``phrase_coverage``, ``character_coverage`` and ``wh_context`` are described
in :mod:`veracity.pipeline.candidates`.

A reading-comprehension answer sentence usually restates the question with the
question word replaced by the answer ("天生三桥位于什么地方" → "天生三桥位于重庆
武隆县…"). Lexical coverage counts the question's words anywhere in the
sentence; these features look at their *order* around the question word and at
values the question pins down:

- ``slot_left`` / ``slot_right``: the longest run of the question's text right
  before (after) the question word found verbatim in the sentence, as a share
  of that side (at most :data:`SIDE` characters; Chinese only, 0 otherwise);
- ``slot_gap``: both sides found, in order, with something between them: the
  place where the answer would stand;
- ``values``: share of the question's numbers with their unit (``1995年``,
  ``8月``, ``3 km``) found as such in the sentence, 0.5 when the question
  names none (a date asked about pins the sentence down, a bare digit does not);
- ``longest``: the longest common substring of the question's content (the
  question word left out) and the sentence, over :data:`SIDE` characters;
- ``opens_with``: the sentence begins with the question's first content term
  or with its document title (the paragraph's topic is the sentence's subject);
- ``position``: the sentence's place among its chunk's sentences (0 first, 1 last).

All are surface patterns of the question against the sentence, never words of
a corpus; traditional characters are folded to simplified ones on both sides
(:func:`veracity.text.hant.fold_traditional`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Final

from ..text.hant import fold_traditional
from ..text.question_surface import SIDE, QuestionSurface, normalized
from ..text.sentences import split_sentences
from ..text.tokens import tokenize

TYPE_NOUN: Final = 2
"""Characters after the question word that may name the answer's kind rather than the slot's context."""

_CONTENT = re.compile(r"[^\W_]")


def _longest_suffix_in(side: str, sentence: str) -> int:
    """Length of the longest suffix of ``side`` found in ``sentence``."""
    for size in range(len(side), 0, -1):
        if side[-size:] in sentence:
            return size
    return 0


def _longest_prefix_in(side: str, sentence: str) -> int:
    for size in range(len(side), 0, -1):
        if side[:size] in sentence:
            return size
    return 0


def _right_side_order(pair: tuple[str, int]) -> tuple[float, int]:
    """The best share found; among equal shares the longest side, or, when nothing of it is
    found, the shortest (what is left is the answer-kind noun, which the sentence replaces)."""
    side, size = pair
    share = size / len(side) if side else 0.0
    return share, len(side) if share else -len(side)


def slot_features(asked: QuestionSurface, sentence: str) -> dict[str, float]:
    """``slot_left``, ``slot_right`` and ``slot_gap`` (see the module docstring)."""
    if asked.sides is None:
        return {"slot_left": 0.0, "slot_right": 0.0, "slot_gap": 0.0}
    left, right = asked.sides
    sentence = normalized(sentence)
    left_size = _longest_suffix_in(left, sentence)
    # "什么地方", "哪个杂志连载": the noun naming the answer's kind follows the question word and
    # the sentence says the answer instead, so the right side may start up to TYPE_NOUN later
    right, right_size = max(
        ((right[skip:], _longest_prefix_in(right[skip:], sentence)) for skip in range(TYPE_NOUN + 1)),
        key=_right_side_order,
    )
    gap = 0.0
    if left_size >= 2 and right_size >= 2:
        start = sentence.find(left[-left_size:])
        after = sentence.find(right[:right_size], start + left_size)
        gap = 1.0 if start >= 0 and after > start + left_size else 0.0
    elif left_size >= 2 and not right:
        start = sentence.find(left[-left_size:])
        gap = 1.0 if start + left_size < len(sentence) - 1 else 0.0
    elif right_size >= 2 and not left:
        gap = 1.0 if sentence.find(right[:right_size]) > 0 else 0.0
    return {
        "slot_left": left_size / len(left) if left else 0.0,
        "slot_right": right_size / len(right) if right else 0.0,
        "slot_gap": gap,
    }


def value_match(asked: QuestionSurface, sentence: str) -> float:
    """Share of the question's numbers-with-units found in ``sentence`` (0.5 when it names none)."""
    values = asked.values
    if not values:
        return 0.5
    squeezed = re.sub(r"\s+", "", normalized(sentence))
    found = 0
    for value in values:
        at = squeezed.find(value)
        # "8月" must not match inside "18月": the character before a value is not a digit
        while at > 0 and squeezed[at - 1].isdigit():
            at = squeezed.find(value, at + 1)
        found += at >= 0
    return found / len(values)


def longest_common(asked: QuestionSurface, sentence: str) -> float:
    """The longest common substring of the question's content and ``sentence`` over
    :data:`SIDE` characters, at most 1 (Chinese and digits; words elsewhere)."""
    if not asked.content_pieces:
        return 0.0
    sentence = normalized(sentence)
    best = 0
    for piece in asked.content_pieces:
        for start in range(len(piece)):
            size = best + 1
            while start + size <= len(piece) and piece[start : start + size] in sentence:
                best = size
                size += 1
    return min(best, SIDE) / SIDE


def opens_with(first_term: str, title: str, sentence: str) -> float:
    """1.0 when ``sentence`` begins with the question's first term or the document title."""
    opening = "".join(_CONTENT.findall(normalized(sentence)[: SIDE * 2])).lower()
    title = "".join(_CONTENT.findall(normalized(title))).lower()
    if first_term and opening.startswith(first_term.lower()):
        return 1.0
    return 1.0 if len(title) >= 2 and opening.startswith(title[: SIDE * 2]) else 0.0


def position(sentence: str, chunk_text: str) -> float:
    """The sentence's place among the chunk's sentences: 0 first, 1 last (0 when it is alone)."""
    spans = split_sentences(chunk_text)
    where = chunk_text.find(sentence)
    if len(spans) < 2 or where < 0:
        return 0.0
    order = next((i for i, (start, end) in enumerate(spans) if start <= where < end), 0)
    return order / (len(spans) - 1)


def _bigrams(tokens: Sequence[str]) -> set[tuple[str, str]]:
    return set(pairwise(tokens))


def phrase_coverage(asked: QuestionSurface, text: str) -> float:
    """Share of the question's phrases found in ``text``.

    Chinese: character bigrams of the question's ideograph runs (question
    morphemes left out), matched in the text, so a different segmentation
    still matches. Other text: pairs of consecutive tokens.
    """
    total = len(asked.grams) + len(asked.pairs)
    if not total:
        return 0.0
    text = fold_traditional(text)
    found = sum(g in text for g in asked.grams)
    if asked.pairs:
        found += len(asked.pairs & _bigrams(tokenize(text)))
    return found / total


def character_coverage(asked: QuestionSurface, text: str) -> float:
    """Share of the question's content characters (Chinese) or content words (other) in ``text``."""
    text = fold_traditional(text)
    if asked.characters:
        return sum(ch in text for ch in asked.characters) / len(asked.characters)
    words = asked.words
    return len(words & set(tokenize(text))) / len(words) if words else 0.0


def wh_context(asked: QuestionSurface, text: str) -> float:
    """Share of the words right before and after the question word found in ``text``.

    An answer sentence usually repeats what surrounds the asked-for slot
    ("以什么为食" → "以多毛类为食"; "What did the Normans win" → "won").
    """
    text = fold_traditional(text)
    if asked.wh_zh is not None:
        pieces = asked.wh_zh
        return sum(p in text for p in pieces) / len(pieces) if pieces else 0.0
    pieces = asked.wh_en
    if not pieces:
        return 0.0
    tokens = set(tokenize(text))
    return sum(p in tokens for p in pieces) / len(pieces)
