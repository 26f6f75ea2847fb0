"""Page geometry: positioned words into lines, reading order across columns, running headers and footers.

Pure functions over positioned words, whatever read them: the PDF text layer
(:mod:`veracity.parse.pdf`) or OCR (:mod:`veracity.parse.ocr`). Coordinates
are in the page's own units (PDF points, image pixels), origin at the top
left.

- **Lines.** Words are taken left to right; a word joins the line that ends
  just before it (a gap of at most :data:`WORD_GAP` × the font size) and
  overlaps it vertically by at least half the smaller height. A wider gap
  starts a new line segment, so two columns never share a line.
- **Columns.** A gutter is an x-range left empty between segments that stand
  side by side (overlapping vertically) in at least :data:`GUTTER_SUPPORT`
  places. Segments crossing a gutter (a title over both columns, a wide
  table) span it: they cut the page into sections, and inside each section
  columns are read left to right, each from top to bottom.
- **Running headers and footers.** A line in the top or bottom
  :data:`MARGIN_BAND` of the page whose text (digits masked, so page numbers
  match) recurs at the same height on most pages (over half, and at least
  two) is removed, and counted; a line set at heading size
  (:data:`RUNNING_MAX_SIZE`) never is.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..text.scripts import UNSPACED_RANGES
from .diagnostics import ParseDiagnostics
from .nodes import ParsedSource

__all__ = [
    "GUTTER_SUPPORT",
    "MARGIN_BAND",
    "RUNNING_MAX_SIZE",
    "WORD_GAP",
    "Line",
    "PageText",
    "Placed",
    "TableRegion",
    "Word",
    "group_lines",
    "reading_order",
    "remove_running_lines",
]

WORD_GAP = 1.0
"""A gap wider than this many font sizes between two words starts a new line segment."""
GUTTER_SUPPORT = 3
"""Side-by-side segment pairs needed before an empty x-range counts as a column gutter."""
MARGIN_BAND = 0.12
"""Fraction of the page height at the top and at the bottom where running lines are looked for."""
RUNNING_MAX_SIZE = 1.2
"""A line set at this many times the body size or larger is a heading, never a running line."""

_CJK = re.compile(f"[{UNSPACED_RANGES}]")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Word:
    """A run of text with its box, font size and weight; OCR'd words carry a confidence (0–1)."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool = False
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class TableRegion:
    """A table found on a page: its box and its rows of cell texts, the first row being the header."""

    x0: float
    top: float
    x1: float
    bottom: float
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Line:
    """Words on one baseline inside one column, joined left to right."""

    words: tuple[Word, ...]
    page: int

    @property
    def text(self) -> str:
        """The words joined: a space where the gap between two words shows one."""
        parts: list[str] = []
        previous: Word | None = None
        for word in self.words:
            if previous is not None and _spaced(previous, word):
                parts.append(" ")
            parts.append(word.text)
            previous = word
        return "".join(parts).strip()

    @property
    def x0(self) -> float:
        """Left edge."""
        return min(w.x0 for w in self.words)

    @property
    def x1(self) -> float:
        """Right edge."""
        return max(w.x1 for w in self.words)

    @property
    def top(self) -> float:
        """Top edge."""
        return min(w.top for w in self.words)

    @property
    def bottom(self) -> float:
        """Bottom edge."""
        return max(w.bottom for w in self.words)

    @property
    def size(self) -> float:
        """The font size carrying most characters of the line."""
        weights: Counter[float] = Counter()
        for word in self.words:
            weights[word.size] += len(word.text)
        return weights.most_common(1)[0][0]

    @property
    def bold(self) -> bool:
        """Every word is set in a bold font."""
        return all(word.bold for word in self.words)


@dataclass(frozen=True, slots=True)
class PageText:
    """What one page holds, before structure: its size, words, tables and where the text came from."""

    number: int
    width: float
    height: float
    words: tuple[Word, ...] = ()
    tables: tuple[TableRegion, ...] = ()
    source: str = "text"
    lines: tuple[Line, ...] = field(default=())


def joined_lines(texts: Sequence[str]) -> str:
    """A paragraph's lines as its text: one line break between lines, none where a line of Chinese
    (or Japanese, Korean) runs on into the next, which the page only wrapped (``天琴台`` at a line's
    end and ``灯的质保期`` at the next one's start are one word)."""
    out = ""
    for text in texts:
        wrapped = bool(out) and bool(_CJK.match(out[-1:])) and bool(_CJK.match(text[:1]))
        out += text if not out or wrapped else "\n" + text
    return out


def _spaced(left: Word, right: Word) -> bool:
    gap = right.x0 - left.x1
    if gap <= 0.1 * max(left.size, right.size):
        return False
    # a space between Chinese characters is layout, not text, unless the gap is a real word gap
    both_cjk = _CJK.match(left.text[-1:]) and _CJK.match(right.text[:1])
    return not both_cjk or gap > 0.5 * max(left.size, right.size)


def _vertical_overlap(a_top: float, a_bottom: float, b_top: float, b_bottom: float) -> float:
    """Overlap of two vertical ranges as a fraction of the smaller height."""
    overlap = min(a_bottom, b_bottom) - max(a_top, b_top)
    smaller = max(min(a_bottom - a_top, b_bottom - b_top), 1e-6)
    return overlap / smaller


def group_lines(words: Sequence[Word], page: int) -> list[Line]:
    """Words into line segments (see the module docstring), in top-to-bottom, left-to-right order."""
    open_lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w.x0, w.top)):
        best: list[Word] | None = None
        best_overlap = 0.5
        for line in open_lines:
            last = line[-1]
            gap = word.x0 - last.x1
            if not -0.5 * word.size <= gap <= WORD_GAP * max(word.size, last.size):
                continue
            overlap = _vertical_overlap(last.top, last.bottom, word.top, word.bottom)
            if overlap >= best_overlap:
                best, best_overlap = line, overlap
        if best is None:
            open_lines.append([word])
        else:
            best.append(word)
    lines = [Line(tuple(words_), page) for words_ in open_lines]
    return sorted(lines, key=lambda line: (round(line.top, 1), line.x0))


Placed = Line | TableRegion
"""What reading order arranges: a line segment or a table."""


def _gutters(items: Sequence[Placed]) -> list[float]:
    """x positions of column gutters: gaps that side-by-side segments agree on."""
    gaps: list[tuple[float, float]] = []
    ordered = sorted(items, key=lambda item: item.top)
    for index, a in enumerate(ordered):
        for b in ordered[index + 1 :]:
            if b.top >= a.bottom:
                break
            if _vertical_overlap(a.top, a.bottom, b.top, b.bottom) < 0.3:
                continue
            left, right = (a, b) if a.x1 <= b.x0 else (b, a) if b.x1 <= a.x0 else (None, None)
            if left is None or right is None:
                continue
            gaps.append((left.x1, right.x0))
    gutters: list[float] = []
    gaps.sort(key=lambda gap: (gap[0] + gap[1]) / 2)
    cluster: list[tuple[float, float]] = []

    def close() -> None:
        if len(cluster) >= GUTTER_SUPPORT:
            low, high = max(g[0] for g in cluster), min(g[1] for g in cluster)
            centers = sorted((g[0] + g[1]) / 2 for g in cluster)
            gutters.append((low + high) / 2 if low < high else centers[len(centers) // 2])

    for gap in gaps:
        if cluster and gap[0] >= min(g[1] for g in cluster):
            close()
            cluster = []
        cluster.append(gap)
    close()
    return gutters


def reading_order(items: Sequence[Placed]) -> list[Placed]:
    """Lines and tables of one page in reading order: sections top to bottom, columns left to right."""
    gutters = _gutters(items)
    if not gutters:
        return sorted(items, key=lambda item: (round(item.top, 1), item.x0))

    def column(item: Placed) -> int | None:
        if any(item.x0 < gutter < item.x1 for gutter in gutters):
            return None  # spans a gutter
        center = (item.x0 + item.x1) / 2
        return sum(gutter < center for gutter in gutters)

    ordered: list[Placed] = []
    section: list[tuple[int, Placed]] = []

    def flush() -> None:
        ordered.extend(item for _, item in sorted(section, key=lambda s: (s[0], round(s[1].top, 1), s[1].x0)))
        section.clear()

    for item in sorted(items, key=lambda item: (round(item.top, 1), item.x0)):
        index = column(item)
        if index is None:
            flush()
            ordered.append(item)
        else:
            section.append((index, item))
    flush()
    return ordered


def _running_key(line: Line, height: float) -> tuple[str, int, str] | None:
    if line.top > MARGIN_BAND * height and line.bottom < (1 - MARGIN_BAND) * height:
        return None
    band = "top" if line.top <= MARGIN_BAND * height else "bottom"
    text = _DIGITS.sub("#", re.sub(r"\s+", " ", line.text.strip().lower()))
    return (text, round(line.top / height * 50), band) if text else None


def remove_running_lines(pages: Sequence[PageText]) -> tuple[list[PageText], int]:
    """``pages`` without their running header and footer lines, and how many lines were removed.

    Lines set larger than :data:`RUNNING_MAX_SIZE` × the body size (the size
    carrying the most characters) are headings, never running lines: a
    "Section 2" heading at the top of each page stays.
    """
    with_text = [page for page in pages if page.lines]
    sizes: Counter[float] = Counter()
    for page in with_text:
        for line in page.lines:
            sizes[line.size] += len(line.text)
    limit = sizes.most_common(1)[0][0] * RUNNING_MAX_SIZE if sizes else 0.0

    def key(line: Line, page: PageText) -> tuple[str, int, str] | None:
        return _running_key(line, page.height) if line.size < limit else None

    counts: Counter[tuple[str, int, str]] = Counter()
    for page in with_text:
        counts.update({found for line in page.lines if (found := key(line, page))})
    running = {found for found, n in counts.items() if n >= 2 and n * 2 > len(with_text)}
    if not running:
        return list(pages), 0
    removed = 0
    kept_pages = []
    for page in pages:
        kept = tuple(line for line in page.lines if key(line, page) not in running)
        removed += len(page.lines) - len(kept)
        kept_pages.append(replace(page, lines=kept))
    return kept_pages, removed


def paged_diagnostics(
    data: bytes,
    parsed: ParsedSource,
    pages: Sequence[PageText],
    ocr_pages: Sequence[PageText],
    ocr_engine: str | None,
    *,
    removed: int,
    seconds: float,
    **more: Any,
) -> ParseDiagnostics:
    """What parsing a paged source (a PDF, an image) found: its pages and those with text, the
    pages OCR read, their characters and the confidence per character, the running headers and
    footers removed; ``more`` for the format's own counts."""
    words = [word for page in ocr_pages for word in page.words]
    characters = sum(len(word.text) for word in words)
    confidence = sum((w.confidence or 0.0) * len(w.text) for w in words) / characters if characters else None
    with_text = {node.page for node in parsed.nodes}
    return ParseDiagnostics(
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        characters=len(parsed.body),
        pages_total=len(pages),
        pages_parsed=len(with_text),
        empty_pages=len(pages) - len(with_text),
        ocr_pages=len(ocr_pages),
        ocr_characters=characters,
        ocr_confidence=confidence,
        ocr_engine=ocr_engine,
        header_footer_lines_removed=removed,
        seconds=seconds,
        **more,
    )
