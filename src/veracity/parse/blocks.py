"""A Markdown body read line-wise into blocks: headings, paragraphs, lists, tables, fenced code.

The structural chunker (:mod:`veracity.parse.chunking`) groups these blocks;
parsers check against :func:`block_spans` that they agree with it. Every block
knows its offsets in the body, the path of headings above it and the section
(the run of blocks under one heading) it belongs to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..model.contracts import ChunkKind
from ..text.sentences import FENCE_OPEN, closes_fence

__all__ = ["FENCE_OPEN", "MarkdownBlock", "block_spans", "parse_blocks"]

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?:\s|$)")


@dataclass(frozen=True, slots=True)
class MarkdownBlock:
    """One Markdown block of a body: its kind (``None`` for a heading line), span, heading path, section."""

    kind: ChunkKind | None
    start: int
    end: int
    path: tuple[str, ...]
    section: int


def _line_kind(line: str) -> str:
    if not line.strip():
        return "blank"
    if _HEADING.match(line):
        return "heading"
    if FENCE_OPEN.match(line):
        return "fence"
    if line.lstrip().startswith("|"):
        return "table"
    if _LIST_ITEM.match(line):
        return "list"
    return "text"


def _heading_text(line: str) -> tuple[int, str]:
    match = _HEADING.match(line)
    assert match is not None
    text = _CLOSING_HASHES.sub("", match.group(2) or "").strip()
    return len(match.group(1)), text


def _fence_end(lines: Sequence[str], first: int) -> int:
    """Index of the closing fence line of the fence opened at ``first`` (last line if unclosed)."""
    opening = FENCE_OPEN.match(lines[first])
    assert opening is not None
    for index in range(first + 1, len(lines)):
        if closes_fence(lines[index], opening.group(1)):
            return index
    return len(lines) - 1


def parse_blocks(body: str) -> list[MarkdownBlock]:
    """Parse a Markdown body line-wise into blocks with offsets and heading paths."""
    lines = body.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    blocks: list[MarkdownBlock] = []
    stack: list[tuple[int, str]] = []
    section = 0
    index = 0
    while index < len(lines):
        kind = _line_kind(lines[index])
        if kind == "blank":
            index += 1
            continue
        if kind == "heading":
            level, text = _heading_text(lines[index])
            stack = [entry for entry in stack if entry[0] < level] + [(level, text)]
            section += 1
            path = tuple(entry[1] for entry in stack)
            end = offsets[index] + len(lines[index])
            blocks.append(MarkdownBlock(None, offsets[index], end, path, section))
            index += 1
            continue
        first = index
        if kind == "fence":
            last = _fence_end(lines, first)
            block_kind = ChunkKind.CODE
        else:
            if kind == "table":
                accepts: tuple[str, ...] = ("table",)
                block_kind = ChunkKind.TABLE
            elif kind == "list":
                accepts = ("list", "text")
                block_kind = ChunkKind.LIST
            else:
                accepts = ("text",)
                block_kind = ChunkKind.PARAGRAPH
            last = first
            while last + 1 < len(lines) and _line_kind(lines[last + 1]) in accepts:
                last += 1
        end = offsets[last] + len(lines[last])
        path = tuple(entry[1] for entry in stack)
        blocks.append(MarkdownBlock(block_kind, offsets[first], end, path, section))
        index = last + 1
    return blocks


def block_spans(body: str) -> list[tuple[ChunkKind, int, int]]:
    """``(kind, start, end)`` of every non-heading Markdown block of ``body``, in order.

    Used to check what a chunker did to tables and code blocks.
    """
    return [(b.kind, b.start, b.end) for b in parse_blocks(body) if b.kind is not None]
