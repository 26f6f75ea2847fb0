"""The checkable values of a sentence: numbers, code values, names, and whether it negates.

A written claim may rephrase its source, but it may not change what can be
checked without understanding: a number, a date, a version, a code value, a
name, or the presence of a negation. These functions pull those out of a
sentence so that a claim's values can be looked up in the text it cites
(normalized: NFKC, case-folded, thousands separators and leading zeros
removed, Chinese numerals read as numbers).

The detectors are the surface patterns of :mod:`veracity.text.answer_types`
(digits, numerals with a classifier, capitalised names, rjieba's name tags,
code spans) plus closed-class negation words of each language: grammar, not
the vocabulary of a corpus.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from .answer_types import code_mentions, name_mentions

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ZH_NUMERAL_WITH_CLASSIFIER = re.compile(
    r"([零〇一二两三四五六七八九十百千万亿]+)[个位名人次年月日天项种条家座只元米公里倍%％周小时分钟秒]"
)
_ZH_DIGITS: Final = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
                     "八": 8, "九": 9}  # fmt: skip
_ZH_UNITS: Final = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_EN_NUMBERS: Final = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen".split()
    )
} | {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
     "ninety": 90, "hundred": 100, "thousand": 1000}  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+")

NEGATION_EN: Final = re.compile(
    r"\b(not|no|never|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b", re.IGNORECASE
)
"""English negation words (closed class)."""
NEGATION_ZH: Final = re.compile(
    r"不(?!过|同|断|少|久|仅|但|管|论|错|止)|没|(?<!尚)未(?!来)|尚未|无(?!论|线)|(?<!除)非(?!常)|勿|禁止"
)
"""Chinese negation morphemes, less the words that only contain them (不过 "but", 不同
"different", 未来 "future", 无论 "regardless", 非常 "very", 除非 "unless")."""


def fold(text: str) -> str:
    """NFKC, lower case, whitespace collapsed: the form values are compared in."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _plain_number(raw: str) -> str:
    """``1,000`` → ``1000``; ``07`` → ``7``; ``3.10`` stays (a version, not a decimal)."""
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", raw):
        raw = raw.replace(",", "")
    parts = re.split(r"[.,]", raw)
    return ".".join(part.lstrip("0") or "0" for part in parts)


def zh_numeral(text: str) -> int | None:
    """The value of a Chinese numeral (``三十``, ``两百零五``, ``十二``); ``None`` when it is not one."""
    total = section = digit = 0
    seen = False
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
            seen = True
        elif ch in _ZH_UNITS:
            unit = _ZH_UNITS[ch]
            if unit >= 10_000:
                total += (section + digit) * unit
                section = 0
            else:
                section += (digit or 1) * unit
            digit = 0
            seen = True
        else:
            return None
    return total + section + digit if seen else None


def numbers(text: str) -> frozenset[str]:
    """Every number of ``text`` normalized: digits (dates and versions split at their separators
    other than ``.``), Chinese numerals before a classifier, English number words."""
    normalized = unicodedata.normalize("NFKC", text)
    found = {_plain_number(m.group(0)) for m in _NUMBER.finditer(normalized)}
    for match in _ZH_NUMERAL_WITH_CLASSIFIER.finditer(normalized):
        value = zh_numeral(match.group(1))
        if value is not None:
            found.add(str(value))
    found |= {str(_EN_NUMBERS[w]) for w in _WORD.findall(normalized.lower()) if w in _EN_NUMBERS}
    return frozenset(found)


def codes(text: str) -> frozenset[str]:
    """Code values of ``text`` (``code`` spans, ``--flags``, dotted names, UPPER_CASE names), folded."""
    return frozenset(fold(value.strip("`")) for value in code_mentions(text) if value.strip("`").strip())


def names(text: str) -> frozenset[str]:
    """Names of ``text`` (capitalised words inside a sentence; rjieba's person, place,
    organisation and other proper-noun tags), folded."""
    return frozenset(fold(value) for value in name_mentions(text))


def negates(text: str) -> bool:
    """Whether ``text`` holds a negation word of English or Chinese."""
    normalized = unicodedata.normalize("NFKC", text)
    return bool(NEGATION_EN.search(normalized) or NEGATION_ZH.search(normalized))
