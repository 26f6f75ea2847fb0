"""An English analyzer close to Lucene's ``EnglishAnalyzer``, for English benchmarks.

Published BM25 baselines on English sets (Anserini, the BEIR paper through
Elasticsearch's ``english`` analyzer) index Porter-stemmed, stop-word-free
tokens. :func:`tokenize_en` reproduces that chain so our BM25 can be compared
with them; the default zh/en tokenizer (:func:`veracity.text.tokens.tokenize`) is not
changed by this module.

The chain, as in Lucene:

1. split into words (letters and digits; ``3.2``, ``e.g.`` and ``don't`` stay
   one word, as Unicode word segmentation keeps them; hyphens split);
2. drop a trailing possessive ``'s``;
3. lowercase;
4. drop Lucene's 33 English stop words;
5. Porter-stem (the original Porter algorithm, as Lucene's ``PorterStemFilter``).

Chinese runs are handed to :func:`veracity.text.tokens.tokenize`, so mixed text still
gets Chinese words. Stemming needs the optional package PyStemmer
(``pip install PyStemmer``); without it :func:`tokenize_en` raises
``ConfigError`` with that line.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any, Final

from ..model.errors import ConfigError
from .scripts import HAN, HAN_RANGES
from .tokens import tokenize

LUCENE_ENGLISH_STOPWORDS: Final = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the "
    "their then there these they this to was will with".split()
)
"""Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``."""

INSTALL: Final = "pip install 'veracity[en]' (PyStemmer)"

_WORD = re.compile(
    r"(?P<word>[^\W_](?:\w|['’.](?=[^\W_])|(?<=\d),(?=\d))*)"
    rf"|(?P<cjk>[{HAN_RANGES}]+)"
)
_STEMMER: dict[str, Any] = {}


def _stemmer() -> Any:
    stemmer = _STEMMER.get("porter")
    if stemmer is None:
        try:
            import Stemmer
        except ImportError as exc:
            raise ConfigError(f"the English analyzer needs PyStemmer: {INSTALL}") from exc
        stemmer = Stemmer.Stemmer("porter")
        stemmer.maxCacheSize = 100_000
        _STEMMER["porter"] = stemmer
    return stemmer


def stemming_available() -> bool:
    """Whether PyStemmer is installed, so :func:`tokenize_en` can run."""
    try:
        _stemmer()
    except ConfigError:
        return False
    return True


@lru_cache(maxsize=262144)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def tokenize_en(text: str) -> list[str]:
    """Lucene-``EnglishAnalyzer``-like tokens of ``text`` (see the module docstring)."""
    tokens: list[str] = []
    for match in _WORD.finditer(unicodedata.normalize("NFKC", text)):
        word = match.group("word")
        if word is None:
            tokens.extend(tokenize(match.group("cjk")))
            continue
        if HAN.search(word):  # \w also matches ideographs glued to latin letters
            tokens.extend(tokenize(word))
            continue
        word = word.replace("’", "'")
        if word.endswith(("'s", "'S")):
            word = word[:-2]
        word = word.lower()
        if not word or word in LUCENE_ENGLISH_STOPWORDS:
            continue
        tokens.append(_stem(word))
    return tokens


def cjk_share(texts: list[str], *, sample_chars: int = 200_000) -> float:
    """Share of CJK ideographs among the letters of the first ``sample_chars`` characters."""
    letters = cjk = 0
    seen = 0
    for text in texts:
        for char in text:
            if char.isalpha():
                letters += 1
                if HAN.match(char):
                    cjk += 1
        seen += len(text)
        if seen >= sample_chars:
            break
    return cjk / letters if letters else 0.0


__all__ = ["LUCENE_ENGLISH_STOPWORDS", "cjk_share", "stemming_available", "tokenize_en"]
