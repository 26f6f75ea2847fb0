"""Sentence spans: where a claim may start and end."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|\n")
# A period after one of these ends no sentence: initials (R. Holtz) and common abbreviations.
_NOT_AN_END = re.compile(
    r"(?<![A-Za-z])(?:[A-Za-z]|e\.g|i\.e|etc|vs|cf|al|approx|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|No|Nos|Fig|Figs|"
    r"Inc|Ltd|Co|Corp|Vol|pp|ca|est|Gen|Gov|Sen|Rep|Lt|Col|Capt|Sgt|Mt|Ft|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|"
    r"Oct|Nov|Dec)\.$"
)
# A line that is a block of its own: list item, table row, heading, quote, fence, or a blank line.
_BLOCK_LINE = re.compile(r"^\s*(?:$|[-*+]\s|\d+[.)]\s|\||#|>|```|~~~)")


def _line_break_ends(text: str, position: int) -> bool:
    """Whether the line break at ``position`` ends a sentence: it does between blocks (list items,
    table rows, headings, blank lines), not inside a paragraph wrapped over several lines."""
    line_start = text.rfind("\n", 0, position) + 1
    next_end = text.find("\n", position + 1)
    current = text[line_start:position]
    following = text[position + 1 : next_end if next_end >= 0 else len(text)]
    return bool(_BLOCK_LINE.match(current) or _BLOCK_LINE.match(following))


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` over ``text``; each span is stripped of outer spaces.

    Ends at Chinese and latin sentence punctuation and at line breaks between
    blocks (list items, table rows, headings), but not at a line break inside a
    paragraph wrapped over several lines, nor at the period of an initial or a
    common abbreviation (``R. Holtz``, ``e.g. this``). Spans cover every
    non-space character exactly once.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start and text[end - 1] == "." and _NOT_AN_END.search(text[max(start, end - 12) : end]):
            continue
        if match.group(0) == "\n" and not _line_break_ends(text, match.start()):
            continue
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
