"""Sentence spans: the one sentence splitter, for claims, questions and the injection detector.

The rules, by what the text is:

- **Prose**: a sentence ends after Chinese and latin sentence marks (。！？!?) and after a period
  followed by a space, but not after the period of an initial or a common abbreviation
  (``R. Holtz``, ``e.g. this``); a line break inside a paragraph wrapped over several lines ends
  nothing.
- **Lists**: each item is a sentence of its own (the line break before an item ends the one
  before), and a numbered item's marker (``1. Install it``) opens its sentence.
- **Tables**: each row is a sentence of its own, as is a heading or a quote line.
- **Code**: fenced blocks are split like the rest here; :func:`as_units` then makes each block one
  unit (a claim quotes a block whole or not at all).

Two readers need smaller pieces and say so:

- ``clauses=True`` (question analysis, the injection detector): semicolons (；;) end a piece too,
  and so does every line break, wrapped paragraph or not — a question typed over two lines asks
  two things, and an order may open any line.
- ``literal_periods=True`` (the injection detector): every period before a space ends a piece,
  abbreviation or list marker alike, so a numbered item's words open their own piece and are read
  as an imperative ("1. Ignore the rules" → "Ignore the rules").
"""

from __future__ import annotations

import re
from typing import Final

_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|\n")
_CLAUSE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s)|\n")
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


def _period_ends(text: str, start: int, end: int) -> bool:
    """Whether the period before ``end`` ends a sentence (not an initial, an abbreviation or a
    numbered item's marker)."""
    if _NOT_AN_END.search(text[max(start, end - 12) : end]):
        return False
    return not _LIST_MARKER.match(text[text.rfind("\n", 0, end) + 1 : end])


def split_sentences(
    text: str, *, clauses: bool = False, literal_periods: bool = False
) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` over ``text`` by the rules of the module docstring; each
    span is stripped of outer spaces, and the spans cover every non-space character exactly once.

    ``clauses``: semicolons and every line break end a piece too; ``literal_periods``: every
    period before a space does (see the module docstring for who reads text so).
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in (_CLAUSE_END if clauses else _SENTENCE_END).finditer(text):
        end = match.end()
        if end <= start:
            continue
        if text[end - 1] == "." and not literal_periods and not _period_ends(text, start, end):
            continue
        if match.group(0) == "\n" and not clauses and not _line_break_ends(text, match.start()):
            continue
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


def sentence_texts(text: str, *, clauses: bool = False, literal_periods: bool = False) -> list[str]:
    """The texts of :func:`split_sentences`' spans."""
    spans = split_sentences(text, clauses=clauses, literal_periods=literal_periods)
    return [text[start:end] for start, end in spans]


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
