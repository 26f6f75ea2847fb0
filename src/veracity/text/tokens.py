"""Text normalization and the zh/en tokenizer.

Normalized body: NFC, LF line ends, trailing spaces stripped per line, runs of
blank lines collapsed to one, outer whitespace stripped. Line structure is kept
because tables and code blocks live in it. The *identity* form collapses every
whitespace run to one space, so whitespace-only edits never change an identity.

Tokens: Chinese runs are segmented by rjieba (same segmentation as jieba);
latin words are lowercased; numbers, versions and identifiers such as ``3.2``,
``E1042``, ``config.max_retries`` and ``--to`` stay whole.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import rjieba

_TRAILING_SPACE = re.compile(r"[ \t\u3000]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{3,}")
_WHITESPACE_RUN = re.compile(r"\s+")

# One alternation, tried left to right at each position:
#  1. identifiers / versions / numbers / options: latin-or-digit start, may contain . _ - / :
#     between alphanumerics (config.max_retries, 3.2, E1042, v2.8.1, sso-team-32, --to)
#  2. a run of CJK ideographs (segmented afterwards by rjieba)
_TOKEN = re.compile(
    r"(?P<word>(?:--?)?[0-9A-Za-z]+(?:[._\-/:][0-9A-Za-z]+)*)"
    r"|(?P<cjk>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
)

# Function words that carry no retrieval signal. Kept tiny on purpose: BM25's IDF
# already discounts common words; this only removes pure particles.
STOPWORDS = frozenset(
    "的 了 和 与 或 是 在 吗 呢 吧 啊 么 也 都 就 还 把 被 而 及 其 之 个 这 那 "
    "a an the of to in on for and or is are be".split()
)


def normalize_body(text: str) -> str:
    """Return the normalized body: NFC, LF, no trailing spaces, single blank lines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _TRAILING_SPACE.sub("", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()


def identity_text(text: str) -> str:
    """Whitespace-collapsed form used for identities and content digests."""
    return _WHITESPACE_RUN.sub(" ", unicodedata.normalize("NFC", text)).strip()


@lru_cache(maxsize=65536)
def _segment_cjk(run: str) -> tuple[str, ...]:
    return tuple(piece for piece in rjieba.cut(run) if piece.strip())


def tokenize(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Split zh/en text into retrieval tokens (lowercased, identifiers kept whole)."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text)):
        word = match.group("word")
        if word is not None:
            token = word.lower()
            if not (drop_stopwords and token in STOPWORDS):
                tokens.append(token)
            continue
        for piece in _segment_cjk(match.group("cjk")):
            if not (drop_stopwords and piece in STOPWORDS):
                tokens.append(piece)
    return tokens


_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|\n")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` over ``text``; each span is stripped of outer spaces.

    Ends at Chinese and latin sentence punctuation and at line breaks. Spans
    cover every non-space character exactly once.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start:
            spans.append((start, end))
            start = end
    if start < len(text):
        spans.append((start, len(text)))
    result = []
    for begin, end in spans:
        piece = text[begin:end]
        left = len(piece) - len(piece.lstrip())
        right = len(piece.rstrip())
        if right > left:
            result.append((begin + left, begin + right))
    return result
