"""The zh/en tokenizer.

Tokens: Chinese runs are segmented by rjieba (same segmentation as jieba);
latin words are lowercased; numbers, versions and identifiers such as ``3.2``,
``E1042``, ``config.max_retries`` and ``--to`` stay whole.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import rjieba

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
