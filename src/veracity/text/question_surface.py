"""The surface of one sub-question, read once when it is analysed: what the sentence features
compare every evidence sentence with.

Sentence choice scores tens of sentences per sub-question; each feature reads the question's side
(its folded text, its phrases, the words around its question word, the numbers it pins down) from
here instead of reading the question again per sentence. The features themselves, the sentence's
side, are in :mod:`veracity.pipeline.slots` and described in :mod:`veracity.pipeline.candidates`.

All are surface patterns of the question (grammar: question words, particles, digits with units),
never words of a corpus; traditional characters are folded to simplified ones
(:func:`veracity.text.hant.fold_traditional`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from .function_words import ENGLISH_FUNCTION_WORDS
from .hant import fold_traditional
from .scripts import HAN_RANGES, has_han
from .tokens import is_cjk_term, surface_tokens, tokenize

SIDE: Final = 8
"""Characters of each side of the question word considered (the rest is too far to align)."""

_WH = re.compile(
    r"什么|哪[一两二三四五六七八九十几]?[个位种家座本部条名只项门类所里儿些]?|谁|多少|几[个位种年月日次]?"
    r"|怎么|怎样|如何|为什么|为何|何[时地处种人]?|为啥|啥|咋|干嘛"
)
_TRAILING = re.compile(r"[的了呢吗么呀啊吧？?！!。，,\s]+$")
_LEADING = re.compile(r"^[是的，,\s]+")
_VALUE = re.compile(r"\d[\d.,]*\s*(?:[年月日号时分秒岁个位名人次届期]|[A-Za-z%％]+)?")
_QUESTION_MORPHEMES = re.compile(r"[什么哪谁几吗呢多少怎样如何为何]")
_FUNCTION_CHARS = frozenset(
    "的了是在有和与吗呢么吧啊也都就还把被而及其之个这那我你他她它们什哪谁几多少怎样如何为"
)
_WH_ZH = re.compile(
    r"什么|哪[一两二三四五六七八九十几]?[个位种家座本部条名只项门类所里儿]?|谁|多少|几|怎么|怎样|如何|为什么|为何|何"
)
_WH_EN = re.compile(r"\b(what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)


def normalized(text: str) -> str:
    """``text`` in compatibility form with traditional characters read as simplified, so a zh-TW
    question meets the same patterns (both sides of the slot features are read so)."""
    return fold_traditional(unicodedata.normalize("NFKC", text))


@dataclass(frozen=True, slots=True)
class QuestionSurface:
    """What the sentence features read of one sub-question's text (see the module docstring)."""

    casefolded: str
    """The text in compatibility form, lower case: a value the question already names is not an
    answer (:func:`veracity.text.answer_types.answer_type_match`)."""
    tokens: frozenset[str]
    """The index's tokens of the text: a sentence's ``novelty`` is its share of other tokens."""
    sides: tuple[str, str] | None
    """:func:`slot_sides`."""
    values: frozenset[str]
    """Numbers with their unit, spaces squeezed out (``1995年``, ``3km``)."""
    content_pieces: tuple[str, ...]
    """The normalized text split at its question words and punctuation (Chinese only, else
    empty): the runs a sentence's longest common substring is looked for in."""
    grams: frozenset[str]
    """Character bigrams of the ideograph runs, question morphemes left out."""
    pairs: frozenset[tuple[str, str]]
    """Pairs of consecutive content tokens outside Chinese."""
    characters: frozenset[str]
    """Content characters (Chinese)."""
    words: frozenset[str]
    """Content word tokens (read when the question has no content character)."""
    wh_zh: tuple[str, ...] | None
    """The two characters right before and after the Chinese question word; ``None`` when there
    is no Chinese question word."""
    wh_en: tuple[str, ...]
    """The content tokens right before and after the English question word."""


def read_surface(text: str) -> QuestionSurface:
    """The surface of the sub-question ``text``."""
    folded = fold_traditional(text)
    compatible = unicodedata.normalize("NFKC", text)
    norm = fold_traditional(compatible)  # normalized(text), computed from the form read once
    plain = [
        (surface, token) for surface, token in surface_tokens(folded) if surface not in ENGLISH_FUNCTION_WORDS
    ]
    runs = re.findall(rf"[{HAN_RANGES}]+", folded)
    grams = {run[i : i + 2] for run in runs for i in range(len(run) - 1)}
    unslotted = _WH.sub("|", norm)
    return QuestionSurface(
        casefolded=compatible.lower(),
        tokens=frozenset(tokenize(text)),
        sides=_sides(norm),
        values=frozenset(re.sub(r"\s+", "", v) for v in _VALUE.findall(norm)),
        content_pieces=(tuple(re.split(rf"[^{HAN_RANGES}\w]+|\|", unslotted)) if has_han(unslotted) else ()),
        grams=frozenset(g for g in grams if not _QUESTION_MORPHEMES.search(g)),
        pairs=frozenset(pairwise(token for _, token in plain if not is_cjk_term(token))),
        characters=frozenset(ch for ch in folded if is_cjk_term(ch) and ch not in _FUNCTION_CHARS),
        words=frozenset(token for _, token in plain),
        wh_zh=_wh_zh(folded),
        wh_en=_wh_en(folded),
    )


def slot_sides(question: str) -> tuple[str, str] | None:
    """The question's text before and after its question word (each at most :data:`SIDE`
    characters, particles and punctuation at the outer ends removed), or ``None``."""
    return _sides(normalized(question))


def _sides(question: str) -> tuple[str, str] | None:
    """:func:`slot_sides` of a question already :func:`normalized`."""
    found = _WH.search(question)
    if found is None or not has_han(question):
        return None
    left = re.split(r"[，,；;：:、]", question[: found.start()])[-1].strip("《》“”\"'「」 ")[-SIDE:]
    right = re.split(r"[，,；;：:、]", question[found.end() :])[0]
    right = _LEADING.sub("", _TRAILING.sub("", right))[:SIDE]
    return left, right


def _wh_zh(folded: str) -> tuple[str, ...] | None:
    found = _WH_ZH.search(folded)
    if found is None:
        return None
    pieces = (folded[max(0, found.start() - 2) : found.start()], folded[found.end() : found.end() + 2])
    return tuple(p for p in pieces if len(p) == 2 and all(is_cjk_term(ch) for ch in p))


def _wh_en(folded: str) -> tuple[str, ...]:
    found = _WH_EN.search(folded)
    if found is None:
        return ()
    before = [t for s, t in surface_tokens(folded[: found.start()]) if s not in ENGLISH_FUNCTION_WORDS][-1:]
    after = [t for s, t in surface_tokens(folded[found.end() :]) if s not in ENGLISH_FUNCTION_WORDS][:1]
    return (*before, *after)
