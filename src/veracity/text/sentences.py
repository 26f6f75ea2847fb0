"""Sentence spans: where a claim may start and end."""

from __future__ import annotations

import re

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
