"""How common a question term is in general language: a prior for a knowledge base's own IDF.

A knowledge base of a few hundred chunks estimates IDF badly for the words it
never holds: "turn" (in "how do I turn on HTTP/2?") and "localhost", 搞 and
联调 all get the highest IDF there is, so a user's everyday verb weighs as much
as a name the documents have never heard of. Real user questions are full of
such words; the documents say "enable" where the user says "turn on".

The prior is wordfreq's word frequencies (general-language text in many
languages, shipped inside the PyPI package, read offline): its "small" lists,
every word at or above one in a million, English and Chinese (the languages
the question analysis knows). English words are stemmed as the index and the
question analysis stem them (``tokens.stem_word``), summing the forms of one
stem; Chinese words are looked up as rjieba cuts them, traditional characters
folded to simplified. A term not in the lists is rarer than that and keeps
the full weight.
"""

from __future__ import annotations

import gzip
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Final

import msgpack

from .hant import fold_traditional
from .tokens import stem_words

WORDLIST: Final = "small"
"""wordfreq's list read: every word at or above one in a million (about 30,000 per language)."""


def _cbpack(language: str) -> dict[str, float] | None:
    """wordfreq's list for ``language`` read from its documented cBpack file, without importing
    the package (its import, langcodes and ftfy, costs ≈ 0.25 s a process); ``None`` if the file
    or its header is not what wordfreq documents, so the caller falls back to its API."""
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "data" / f"{WORDLIST}_{language}.msgpack.gz"
    try:
        with gzip.open(path, "rb") as handle:
            data = msgpack.load(handle, raw=False)
    except (OSError, ValueError, msgpack.UnpackException):
        return None
    header = data[0] if isinstance(data, list) and data else None
    if not isinstance(header, dict) or header.get("format") != "cB" or header.get("version") != 1:
        return None
    # the bucket at index i holds the words of frequency 10 ** (-i / 100) (centibels)
    return {word: 10 ** (-index / 100) for index, bucket in enumerate(data[1:]) for word in bucket}


def wordlist(language: str) -> dict[str, float]:
    """Word → frequency for ``language`` (``en``, ``zh``), as ``wordfreq.get_frequency_dict`` gives it."""
    found = _cbpack(language)
    if found is None:
        from wordfreq import get_frequency_dict

        found = get_frequency_dict(language, wordlist=WORDLIST)
    return found


@lru_cache(maxsize=1)
def _frequencies() -> dict[str, float]:
    table: dict[str, float] = {}
    english = [(w.replace("'", ""), f) for w, f in wordlist("en").items() if w.isascii()]
    for key, (_, frequency) in zip(stem_words([w for w, _ in english]), english, strict=True):
        table[key] = table.get(key, 0.0) + frequency
    for word, frequency in wordlist("zh").items():
        if not word.isascii():
            table[word] = max(table.get(word, 0.0), frequency)
    return table


def general_frequency(term: str) -> float:
    """The share of general-language words that are ``term`` (0.0: rarer than one in a million)."""
    table = _frequencies()
    found = table.get(term)
    if found is None and not term.isascii():
        found = table.get(fold_traditional(term))
    return found or 0.0
