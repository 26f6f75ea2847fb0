"""Index tokens computed ahead of the index writer: an ingest's parse workers tokenize the chunks
they cut, so the single writer does not (tokenizing was a fifth of its time).

A chunk's tokens are held by its id with the context prefix they were computed under (the id
covers the text, not the prefix) and are used once; anything not held, held under another
prefix, or past :data:`HELD_MAX_CHUNKS` is tokenized by the writer as before, so the index is
the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..model.contracts import Chunk
from ..text.tokens import tokenize
from .snapshot import index_text

__all__ = ["HELD_MAX_CHUNKS", "AheadTokens", "index_tokens", "joined_index_tokens"]

HELD_MAX_CHUNKS: Final = 200_000
"""At most this many chunks' tokens are held (about 0.5 KB each, joined): past it the writer
tokenizes, so a very large ingest does not hold its whole corpus twice."""

SEPARATOR: Final = " "
"""Tokens are joined on a space (no token holds whitespace; the full-text index splits on it too)."""


def index_tokens(chunk: Chunk) -> tuple[str, ...]:
    """The tokens the lexical index keeps for ``chunk``."""
    return tuple(tokenize(index_text(chunk)))


def joined_index_tokens(chunk: Chunk) -> str | None:
    """:func:`index_tokens` joined on :data:`SEPARATOR` (compact to hand between processes);
    ``None`` if a token held the separator, so the writer tokenizes that chunk itself."""
    tokens = index_tokens(chunk)
    joined = SEPARATOR.join(tokens)
    return joined if joined.count(SEPARATOR) == max(0, len(tokens) - 1) else None


class AheadTokens:
    """Tokens of chunks computed elsewhere, by chunk id, each taken at most once."""

    def __init__(self, limit: int = HELD_MAX_CHUNKS) -> None:
        self._limit = limit
        self._held: dict[str, tuple[str, str]] = {}

    def __len__(self) -> int:
        return len(self._held)

    def keep(self, chunks: Sequence[Chunk], joined: Sequence[str | None]) -> None:
        """Hold the tokens of ``chunks`` (``joined[i]`` from :func:`joined_index_tokens`)."""
        if len(self._held) + len(chunks) > self._limit or len(chunks) != len(joined):
            return
        for chunk, tokens in zip(chunks, joined, strict=True):
            if tokens is not None:
                self._held[chunk.chunk_id] = (chunk.context_prefix, tokens)

    def tokens(self, chunk: Chunk) -> tuple[str, ...]:
        """``chunk``'s index tokens: the ones held for it (then let go), else tokenized now."""
        held = self._held.pop(chunk.chunk_id, None)
        if held is None or held[0] != chunk.context_prefix:
            return index_tokens(chunk)
        return tuple(held[1].split(SEPARATOR)) if held[1] else ()
