"""Positioned lines and tables into structure blocks: headings, paragraphs, lists, tables, with boxes.

Pure; the input is every page's items in reading order
(:func:`veracity.parse.layout.reading_order`). The rules:

- the body size is the font size that carries the most characters;
- a short line (≤ 120 characters) set at least 1.2× the body size is a
  heading unless it ends with a full stop (a sentence set large, or an OCR'd
  line whose height was misread); distinct heading sizes, largest first, give
  levels 1, 2, 3 …; a short line set wholly in bold at a smaller size that does
  not end like a sentence is a heading one level below those;
- a heading with nothing under it (the next block is a heading of its level or
  above, or there is none) is kept as a paragraph: its text would otherwise be
  in no chunk, only in the heading path of none;
- a vertical gap over 1.6× the line's font size, a move up the page (the next
  column) or a new page starts a new paragraph;
- lines starting with a bullet (``•``, ``◦``, ``▪``, ``●``, ``-``, ``–``) or
  ``1.``/``1)`` form lists;
- a table becomes a table block whose first row is the header.

Every block carries its page and its box (the union of its lines' boxes, as
fractions of the page); OCR'd blocks carry ``source="ocr"``, their mean
confidence weighted by characters, and the numbers read in them
(:func:`ocr_numbers`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..model.contracts import OcrNumber, PageBox
from .layout import (
    Line,
    PageText,
    Placed,
    TableRegion,
    group_lines,
    joined_lines,
    reading_order,
    remove_running_lines,
)
from .nodes import Block, ListItem, NodeKind

__all__ = ["NUMBER", "blocks_of_pages", "layout_blocks", "ocr_numbers"]

_HEADING_RATIO = 1.2
_HEADING_MAX_CHARS = 120
_BOLD_HEADING_MAX_CHARS = 80
_PARAGRAPH_GAP = 1.6
_BULLET = re.compile(r"^(?:[•◦▪●\-–](?:\s+|$)|(\d{1,3})[.)]\s+)")
_SENTENCE_END = re.compile(r"[.。:：;；,，!！?？]$")
_FULL_STOP = re.compile(r"[.。．!！]$")
NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])v\d+(?:\.\d+)+|(?<![0-9_.])[$¥€£]?\d+(?:[.,:/]\d+)*%?"
)
"""Numbers, versions and amounts: ``35``, ``3.2.1``, ``v3.2``, ``$12.50``, ``0.8%``, ``1,024``,
also run into Chinese text (``价格为12.50元``) or into words where OCR lost the spaces
(``after72hours``): a flag that errs towards numbers is the safe side."""


def ocr_numbers(line: Line) -> tuple[OcrNumber, ...]:
    """The numbers OCR read on ``line``, each with the confidence of the word it was read in."""
    found: list[OcrNumber] = []
    for word in line.words:
        if word.confidence is None:
            continue
        found.extend(OcrNumber(m.group(0), round(word.confidence, 4)) for m in NUMBER.finditer(word.text))
    return tuple(found)


@dataclass
class _Pending:
    """Lines gathered into the block being built."""

    lines: list[Line]
    page: PageText

    def box(self) -> PageBox:
        return _box(self.page, min(x.x0 for x in self.lines), min(x.top for x in self.lines),
                    max(x.x1 for x in self.lines), max(x.bottom for x in self.lines))  # fmt: skip

    def ocr(self) -> tuple[float | None, tuple[OcrNumber, ...]]:
        words = [w for line in self.lines for w in line.words if w.confidence is not None]
        if not words:
            return None, ()
        weight = sum(len(w.text) for w in words) or 1
        mean = sum(w.confidence * len(w.text) for w in words if w.confidence is not None) / weight
        return round(mean, 4), tuple(n for line in self.lines for n in ocr_numbers(line))


def _box(page: PageText, x0: float, top: float, x1: float, bottom: float) -> PageBox:
    def fraction(value: float, whole: float) -> float:
        return round(min(1.0, max(0.0, value / whole)), 4) if whole > 0 else 0.0

    return PageBox(
        page.number,
        fraction(x0, page.width),
        fraction(top, page.height),
        fraction(x1, page.width),
        fraction(bottom, page.height),
    )


def _body_size(pages: Sequence[tuple[PageText, Sequence[Placed]]]) -> float:
    weights: Counter[float] = Counter()
    for _, items in pages:
        for item in items:
            if isinstance(item, Line):
                weights[item.size] += len(item.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def _big(line: Line, body_size: float) -> bool:
    """Set large enough, and short enough, to be a heading by size, and not ending as a sentence."""
    return (
        body_size > 0
        and line.size >= body_size * _HEADING_RATIO
        and len(line.text) <= _HEADING_MAX_CHARS
        and not _FULL_STOP.search(line.text.rstrip())
    )


class _Builder:
    """Walks the lines in reading order and emits blocks (see the module docstring)."""

    def __init__(self, body_size: float, levels: dict[float, int], bold_level: int) -> None:
        self.body_size = body_size
        self.levels = levels
        self.bold_level = bold_level
        self.blocks: list[Block] = []
        self.paragraph: _Pending | None = None
        self.items: list[ListItem] = []
        self.list_lines: _Pending | None = None
        self.previous: Line | None = None

    def heading_level(self, line: Line) -> int | None:
        text = line.text
        if _big(line, self.body_size):
            return self.levels[line.size]
        if line.bold and len(text) <= _BOLD_HEADING_MAX_CHARS and not _SENTENCE_END.search(text):
            return self.bold_level
        return None

    def flush(self) -> None:
        for pending, kind in ((self.paragraph, NodeKind.PARAGRAPH), (self.list_lines, NodeKind.LIST)):
            if pending is None:
                continue
            confidence, numbers = pending.ocr()
            common = {
                "page": pending.page.number, "bbox": pending.box(), "source": pending.page.source,
                "confidence": confidence, "ocr_numbers": numbers,
            }  # fmt: skip
            if kind is NodeKind.PARAGRAPH:
                text = joined_lines([line.text for line in pending.lines])
                self.blocks.append(Block(NodeKind.PARAGRAPH, text, collapse=False, **common))  # type: ignore[arg-type]
            else:
                self.blocks.append(Block(NodeKind.LIST, items=tuple(self.items), **common))  # type: ignore[arg-type]
        self.paragraph, self.list_lines, self.items = None, None, []

    def table(self, page: PageText, table: TableRegion) -> None:
        self.flush()
        header, *rows = table.rows or ((),)
        box = _box(page, table.x0, table.top, table.x1, table.bottom)
        self.blocks.append(
            Block(NodeKind.TABLE, header=header, rows=tuple(rows), page=page.number, bbox=box,
                  source=page.source)
        )  # fmt: skip
        self.previous = None

    def line(self, page: PageText, line: Line) -> None:
        previous = self.previous
        gap = previous is not None and (
            line.top < previous.top - 0.5 * line.size  # moved up: the next column
            or line.top - previous.bottom > (_PARAGRAPH_GAP - 1) * max(line.size, previous.size, 1.0)
        )
        if previous is not None and (previous.page != line.page or gap):
            self.flush()
        level = self.heading_level(line)
        self.previous = line
        if level is not None:
            self.flush()
            last = self.blocks[-1] if self.blocks else None
            continued = (
                last is not None
                and last.kind is NodeKind.HEADING
                and previous is not None
                and (self.heading_level(previous), previous.page) == (level, line.page)
                and not gap
            )
            text, box = line.text, _box(page, line.x0, line.top, line.x1, line.bottom)
            if continued and last is not None and last.bbox is not None:
                self.blocks.pop()
                text, box = f"{last.text} {text}", last.bbox.union(box)
            self.blocks.append(
                Block(NodeKind.HEADING, text, level=level, page=page.number, bbox=box, source=page.source)
            )
            return
        bullet = _BULLET.match(line.text)
        if bullet:
            if self.paragraph is not None:
                self.flush()
            self.items.append(ListItem(line.text[bullet.end() :], 0, bullet.group(1) is not None))
            self.list_lines = self.list_lines or _Pending([], page)
            self.list_lines.lines.append(line)
        elif self.items and self.paragraph is None and not gap:
            last_item = self.items[-1]
            self.items[-1] = ListItem(f"{last_item.text} {line.text}", last_item.depth, last_item.ordered)
            if self.list_lines is not None:
                self.list_lines.lines.append(line)
        else:
            if self.items:
                self.flush()
            self.paragraph = self.paragraph or _Pending([], page)
            self.paragraph.lines.append(line)


def blocks_of_pages(pages: Sequence[tuple[PageText, Sequence[Placed]]]) -> list[Block]:
    """Blocks of every page, in order; each page's items must already be in reading order."""
    body_size = _body_size(pages)

    lines = [item for _, items in pages for item in items if isinstance(item, Line)]
    sizes = sorted({line.size for line in lines if _big(line, body_size)}, reverse=True)
    levels = {size: min(6, index + 1) for index, size in enumerate(sizes)}
    builder = _Builder(body_size, levels, min(6, len(sizes) + 1))
    for page, items in pages:
        for item in items:
            if isinstance(item, TableRegion):
                builder.table(page, item)
            else:
                builder.line(page, item)
        builder.flush()
        builder.previous = None
    return _headings_with_content(builder.blocks)


def _headings_with_content(blocks: list[Block]) -> list[Block]:
    """``blocks`` with every heading that heads nothing made a paragraph (see the module docstring)."""
    kept = list(blocks)
    for index, block in enumerate(blocks):
        if block.kind is not NodeKind.HEADING:
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if following is None or (following.kind is NodeKind.HEADING and following.level <= block.level):
            kept[index] = replace(block, kind=NodeKind.PARAGRAPH, level=1, collapse=False)
    return kept


def layout_blocks(pages: Sequence[PageText]) -> tuple[list[Block], int]:
    """Blocks of positioned pages: lines, running headers and footers removed, reading order, structure.

    Returns the blocks and the number of header and footer lines removed.
    """
    lined = [replace(page, lines=tuple(group_lines(page.words, page.number))) for page in pages]
    kept, removed = remove_running_lines(lined)
    ordered = [(page, reading_order([*page.lines, *page.tables])) for page in kept]
    return blocks_of_pages(ordered), removed
