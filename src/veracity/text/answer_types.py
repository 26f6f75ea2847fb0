"""Does a sentence hold the kind of answer a question asks for, beyond what the question says?

A "when" question is answered by a sentence with a date the question does not
already contain; a "how many" question by a number; a "who" question by a
name. The detectors are surface patterns of each language's grammar (digits,
numerals, month names, 年/月/日, capitalised names, rjieba's name and place
tags), never words of a corpus. Each returns a value in [0, 1]; 0.5 means
"the type says nothing here" (yes/no, procedures without code).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from .questions import AnswerType, zh_tags
from .scripts import has_han

_DIGITS = re.compile(r"\d")
_ZH_NUMERAL = re.compile(
    r"[零〇一二两三四五六七八九十百千万亿]+[个位名人次年月日天项种条家座只元米公里倍%％]"
)
_EN_NUMBER_WORDS: Final = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred hundreds thousand thousands million millions billion billions dozen half percent".split()
)
_EN_MONTHS: Final = frozenset(
    "january february march april may june july august september october november december".split()
)
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})s?\b|\b\d{1,2}(st|nd|rd|th)\b|\bBC\b|\bAD\b")
_ZH_TIME = re.compile(
    r"\d+\s*(年|月|日|号|世纪|年代)|[一二三四五六七八九十百千〇零]+(年|月|日|世纪|年代)|(年|世纪)(初|末|中)|朝|时期|期间|之后|之前|前夕"
)
_EN_TIME_WORDS: Final = frozenset(
    "century centuries decade decades year years era period reign dynasty".split()
)
_REASON = re.compile(
    r"\b(because|due to|since|as a result|so that|caused|causes|reason|therefore|thus|owing to)\b"
    r"|因为|由于|所以|因此|导致|为了|原因"
)
_CODE = re.compile(r"`[^`]+`|--?[a-z][\w-]*|\b[a-z_]+\.[a-z_]+\b")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z\-]+")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def _new(values: set[str], casefolded_question: str) -> bool:
    return any(value.lower() not in casefolded_question for value in values)


def _numbers(text: str) -> set[str]:
    found = set(re.findall(r"\d[\d.,]*", text)) | set(_ZH_NUMERAL.findall(text))
    found |= {w for w in _LATIN_WORD.findall(text.lower()) if w in _EN_NUMBER_WORDS}
    return found


def _times(text: str) -> set[str]:
    found = {m.group(0) for m in _YEAR.finditer(text)} | {m.group(0) for m in _ZH_TIME.finditer(text)}
    words = {w for w in _LATIN_WORD.findall(text.lower()) if w in _EN_MONTHS or w in _EN_TIME_WORDS}
    return found | words


def _names(text: str, tags: tuple[str, ...]) -> set[str]:
    found = {m.group(0) for m in _CAPITALISED.finditer(text)}
    if has_han(text):
        found |= {word for word, tag in zh_tags(text) if tag in tags and len(word) > 1}
    return found


def answer_type_match(answer_type: AnswerType, sentence: str, casefolded_question: str) -> float:
    """1.0 when ``sentence`` holds a value of ``answer_type`` that the question does not; see above.

    ``casefolded_question``: the question in compatibility form, lower case
    (:attr:`veracity.text.question_surface.QuestionSurface.casefolded`).
    """
    sentence = unicodedata.normalize("NFKC", sentence)
    if answer_type is AnswerType.NUMBER:
        values = _numbers(sentence)
    elif answer_type is AnswerType.TIME:
        values = _times(sentence)
    elif answer_type is AnswerType.PERSON:
        values = _names(sentence, ("nr", "nrfg", "nrt"))
    elif answer_type is AnswerType.PLACE:
        values = _names(sentence, ("ns", "nsf"))
    elif answer_type is AnswerType.ENTITY:
        values = _names(sentence, ("nr", "ns", "nt", "nz", "nrt", "nrfg")) | _numbers(sentence)
    elif answer_type is AnswerType.REASON:
        return 1.0 if _REASON.search(sentence.lower()) else 0.0
    elif answer_type is AnswerType.PROCEDURE:
        return 1.0 if _CODE.search(sentence) else 0.5
    else:
        return 0.5
    return 1.0 if values and _new(values, casefolded_question) else 0.0


_UPPER_NAME = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
PROPER_NOUN_TAGS = ("nr", "ns", "nt", "nz", "nrt", "nrfg")
"""rjieba tags of names: persons, places, organisations, other proper nouns."""


def code_mentions(text: str) -> set[str]:
    """The code values of ``text`` as the procedure type sees them, plus UPPER_CASE names."""
    text = unicodedata.normalize("NFKC", text)
    return {m.group(0) for m in _CODE.finditer(text)} | {m.group(0) for m in _UPPER_NAME.finditer(text)}


def name_mentions(text: str) -> set[str]:
    """The names of ``text`` as the entity type sees them (see :func:`answer_type_match`)."""
    return _names(unicodedata.normalize("NFKC", text), PROPER_NOUN_TAGS)
