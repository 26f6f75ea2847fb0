"""Sentence spans: where a claim may start and end."""

from __future__ import annotations

import re
from typing import Final

_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|\n")
# A period after one of these ends no sentence: initials (R. Holtz) and common abbreviations.
_NOT_AN_END = re.compile(
    r"(?<![A-Za-z])(?:[A-Za-z]|e\.g|i\.e|etc|vs|cf|al|approx|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|No|Nos|Fig|Figs|"
    r"Inc|Ltd|Co|Corp|Vol|pp|ca|est|Gen|Gov|Sen|Rep|Lt|Col|Capt|Sgt|Mt|Ft|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|"
    r"Oct|Nov|Dec)\.$"
)
# A numbered list item's marker ("1. ", "12. " at the start of a line) opens its sentence.
_LIST_MARKER = re.compile(r"^[ \t]*\d+\.$")
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
    common abbreviation (``R. Holtz``, ``e.g. this``) or of a numbered list
    item's marker (``1. Install it``). Spans cover every
    non-space character exactly once.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start and text[end - 1] == "." and _NOT_AN_END.search(text[max(start, end - 12) : end]):
            continue
        if text[end - 1 : end] == "." and _LIST_MARKER.match(text[text.rfind("\n", 0, end) + 1 : end]):
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


FENCE_OPEN: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")
"""A line that opens a fenced code block (CommonMark: at most three spaces of indent)."""


def closes_fence(line: str, marker: str) -> bool:
    """Whether ``line`` closes a block opened with ``marker``: the same character, at least as many,
    nothing else, at most three spaces of indent."""
    candidate = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and len(candidate) >= len(marker)
        and candidate == marker[0] * len(candidate)
    )


def code_blocks(text: str) -> list[tuple[int, int]]:
    """The fenced code blocks of ``text`` as ``(start, end)``, fence lines included; an unclosed
    fence runs to the end (a chunk may hold the first piece of a longer block)."""
    blocks: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    position = 0
    for line in text.split("\n"):
        end = position + len(line)
        if opened is None:
            fence = FENCE_OPEN.match(line)
            if fence:
                opened = (position, fence.group(1))
        elif closes_fence(line, opened[1]):
            blocks.append((opened[0], end))
            opened = None
        position = end + 1
    if opened is not None:
        blocks.append((opened[0], len(text.rstrip())))
    return blocks


def as_units(spans: list[tuple[int, int]], blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with those inside one of ``blocks`` (fenced code, :func:`code_blocks`) replaced by
    the block, once: a claim quotes a block whole or not at all (a code line alone, or one that
    ends in a dangling fence, is no answer)."""
    units: list[tuple[int, int]] = []
    for start, end in spans:
        block = next((b for b in blocks if b[0] <= start and end <= b[1]), None)
        if block is None:
            units.append((start, end))
        elif not units or units[-1] != block:
            units.append(block)
    return units
