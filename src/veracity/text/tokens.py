"""The zh/en tokenizer, the same on the index and the question side.

Tokens: Chinese runs are segmented by rjieba (same segmentation as jieba);
other words are lowercased; numbers, versions and identifiers such as ``3.2``,
``E1042``, ``config.max_retries`` and ``--to`` stay whole. Plain ASCII words
(letters only) are stemmed with Snowball English (``settings`` and ``setting`` meet), after a
possessive ``'s`` is dropped and apostrophes are removed (``won't`` → ``wont``),
so every token is made of characters the FTS5 index keeps together. Invisible characters
(zero-width, bidirectional marks: :func:`~veracity.text.scripts.drop_invisible`) are dropped
first, so ``v\u200b-show`` pasted from a web page is the token ``v-show``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache
from typing import Any, Final

from .scripts import HAN_RANGES, drop_invisible, is_han

_LETTER = rf"[^\W_{HAN_RANGES}]"

# One alternation, tried left to right at each position:
#  1. words, identifiers, versions, numbers, options: a letter or digit of any script but
#     CJK, may contain . _ - / : and apostrophes between alphanumerics
#     (config.max_retries, 3.2, E1042, v2.8.1, sso-team-32, --to, don't)
#  2. a run of CJK ideographs (segmented afterwards by rjieba)
_TOKEN = re.compile(
    rf"(?P<word>(?:--?)?{_LETTER}+(?:[._\-/:'’]{_LETTER}+)*)"
    rf"|(?P<cjk>[{HAN_RANGES}]+)"
)

# Function words that carry no retrieval signal. Kept tiny on purpose: BM25's IDF
# already discounts common words; this only removes pure particles.
STOPWORDS = frozenset(
    "的 了 和 与 或 是 在 吗 呢 吧 啊 么 也 都 就 还 把 被 而 及 其 之 个 这 那 "
    "a an the of to in on for and or is are be".split()
)

STEMMER: Final = "english"
"""The stemmer of plain English words: PyStemmer's Snowball English (Porter2)."""

_STEMMERS: dict[str, Any] = {}


def _stemmer() -> Any:
    stemmer = _STEMMERS.get(STEMMER)
    if stemmer is None:
        import Stemmer

        stemmer = Stemmer.Stemmer(STEMMER)
        stemmer.maxCacheSize = 100_000
        _STEMMERS[STEMMER] = stemmer
    return stemmer


@lru_cache(maxsize=262144)
def stem_word(word: str) -> str:
    """The token of one lowercased word: the stem of a plain ASCII word, else the word."""
    if len(word) > 2 and word.isascii() and word.isalpha():
        return str(_stemmer().stemWord(word))
    return word


def stem_words(words: list[str]) -> list[str]:
    """:func:`stem_word` of every lowercased word, in one call to the stemmer (a word list)."""
    plain = [i for i, w in enumerate(words) if len(w) > 2 and w.isascii() and w.isalpha()]
    stems = _stemmer().stemWords([words[i] for i in plain])
    found = list(words)
    for i, stem in zip(plain, stems, strict=True):
        found[i] = str(stem)
    return found


def _word_token(word: str) -> str:
    word = word.lower()
    if "'" in word or "’" in word:
        word = word.replace("’", "'")
        if word.endswith("'s"):
            word = word[:-2]
        word = word.replace("'", "")
    return word


@cache
def segmenter() -> Any:
    """rjieba, imported on first use: loading its dictionary takes about 0.12 s, which a process
    that meets no Chinese text (an English question from the shell, an English ingest) never pays."""
    import rjieba

    return rjieba


@lru_cache(maxsize=65536)
def _segment_cjk(run: str) -> tuple[str, ...]:
    return tuple(piece for piece in segmenter().cut(run) if piece.strip())


def surface_tokens(text: str, *, drop_stopwords: bool = True) -> Iterator[tuple[str, str]]:
    """``(surface word, token)`` pairs of ``text`` in order; the surface is lowercased, unstemmed.

    ``tokenize`` is the tokens alone; question analysis needs the surface to
    recognise function words before stemming.
    """
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", drop_invisible(text))):
        word = match.group("word")
        if word is not None:
            surface = _word_token(word)
            if surface and not (drop_stopwords and surface in STOPWORDS):
                yield surface, stem_word(surface)
            continue
        for piece in _segment_cjk(match.group("cjk")):
            if not (drop_stopwords and piece in STOPWORDS):
                yield piece, piece


@lru_cache(maxsize=262144)
def _word_tokens(word: str, drop_stopwords: bool) -> tuple[str, ...]:
    surface = _word_token(word)
    if not surface or (drop_stopwords and surface in STOPWORDS):
        return ()
    return (stem_word(surface),)


@lru_cache(maxsize=65536)
def _cjk_tokens(run: str, drop_stopwords: bool) -> tuple[str, ...]:
    # a run of ideographs only: rjieba's pieces are never blank, so no strip() filter is needed
    pieces = segmenter().cut(run)
    if not drop_stopwords or STOPWORDS.isdisjoint(pieces):  # most runs hold no particle
        return tuple(pieces)
    return tuple(p for p in pieces if p not in STOPWORDS)


def tokenize(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Split zh/en text into retrieval tokens (lowercased, English stemmed, identifiers kept whole).

    The tokens of :func:`surface_tokens`, computed without building the pairs: each distinct
    word and CJK run is turned into tokens once (cached), which is what ingest spends its time on.
    """
    tokens: list[str] = []
    extend = tokens.extend
    for word, cjk in _TOKEN.findall(unicodedata.normalize("NFKC", drop_invisible(text))):
        extend(_word_tokens(word, drop_stopwords) if word else _cjk_tokens(cjk, drop_stopwords))
    return tokens


_IDENTIFIER_SEPARATORS = re.compile(r"[._\-/:]+")


def with_identifier_parts(tokens: Iterable[str]) -> frozenset[str]:
    """``tokens`` and the parts of every identifier among them, each a word token.

    The index keeps ``preview.port`` and ``trust_env`` whole (a search for the
    option finds it); a question that says "preview" or "port" about it is still
    about that section, so the answer step's coverage counts the parts too.
    """
    found = set(tokens)
    for token in list(found):
        if _IDENTIFIER_SEPARATORS.search(token.strip("-")):
            # only the parts with a letter: "3.2" is a version, not the numbers 3 and 2
            parts = _IDENTIFIER_SEPARATORS.split(token)
            found.update(stem_word(part) for part in parts if any(c.isalpha() for c in part))
    return frozenset(found)


@lru_cache(maxsize=16384)
def coverage_tokens(text: str) -> frozenset[str]:
    """The tokens of ``text`` as the answer step's coverage reads them: with identifier parts.

    Cached: an ask reads the same candidate sentences in every pass (choice, decision,
    retry), and answers of one service share candidates (≈ 5 ms of a 26 ms ask on 2 cores).
    """
    return with_identifier_parts(tokenize(text))


def is_cjk_term(term: str) -> bool:
    """``term`` starts with a CJK ideograph: a Chinese token, which evidence may hold inside a longer
    run that segmentation cut differently (so callers also look for it as a substring)."""
    return bool(term) and is_han(term[0])
