"""PDF to structure nodes with pypdf (the optional ``pdf`` extra).

Text is extracted page by page; every node carries its 1-based page number
and no node spans two pages. Layout heuristics, from the positions and font
sizes pypdf reports for each text run:

- the body size is the font size that carries the most characters;
- a short line (≤ 120 characters) set at least 1.2× the body size is a
  heading; distinct heading sizes, largest first, give levels 1, 2, 3 …;
- a vertical gap over 1.6× the line's font size starts a new paragraph;
- lines starting with a bullet (``•``, ``◦``, ``▪``, ``●``, ``-``, ``–``) or
  ``1.``/``1)`` form lists.

Tables are not detected: their cells come out as text lines. Encrypted PDFs
(unless the user password is empty), damaged files and PDFs without a text
layer (scans) are rejected with a message saying so.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .errors import CorruptFileError, EmptySourceError, MissingExtraError
from .nodes import Block, ListItem, NodeKind, ParsedSource, assemble

__all__ = ["parse_pdf"]

_HEADING_RATIO = 1.2
_HEADING_MAX_CHARS = 120
_PARAGRAPH_GAP = 1.6
_BULLET = re.compile(r"^(?:[•◦▪●\-–](?:\s+|$)|(\d{1,3})[.)]\s+)")


@dataclass(frozen=True, slots=True)
class _Line:
    text: str
    y: float | None
    size: float
    page: int


class _LineCollector:
    """Receives pypdf's text runs and groups them into positioned lines."""

    def __init__(self, page: int) -> None:
        self.page = page
        self.lines: list[_Line] = []
        self.parts: list[str] = []
        self.y: float | None = None
        self.size = 0.0

    def __call__(self, text: Any, cm: Any, tm: Any, font: Any, font_size: Any) -> None:
        pieces = str(text).split("\n")
        for index, piece in enumerate(pieces):
            if index:
                self.end_line()
            if piece.strip():
                self.parts.append(piece)
                try:
                    m2 = tm[2] * cm[0] + tm[3] * cm[2]
                    m3 = tm[2] * cm[1] + tm[3] * cm[3]
                    y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
                    size = float(font_size) * math.hypot(m2, m3)
                except (TypeError, ValueError, IndexError):
                    y, size = None, 0.0
                if self.y is None:
                    self.y = y
                self.size = max(self.size, round(size * 2) / 2)
            elif piece:
                self.parts.append(piece)

    def end_line(self) -> None:
        """Close the line being collected, if it has text."""
        text = "".join(self.parts).strip()
        if text:
            self.lines.append(_Line(text, self.y, self.size, self.page))
        self.parts, self.y, self.size = [], None, 0.0


def _blocks(lines: list[_Line]) -> list[Block]:
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    body_size = weights.most_common(1)[0][0] if weights else 0.0

    def is_heading(line: _Line) -> bool:
        return (
            body_size > 0
            and line.size >= body_size * _HEADING_RATIO
            and len(line.text) <= _HEADING_MAX_CHARS
        )

    sizes = sorted({line.size for line in lines if is_heading(line)}, reverse=True)
    levels = {size: min(6, index + 1) for index, size in enumerate(sizes)}
    blocks: list[Block] = []
    paragraph: list[str] = []
    items: list[ListItem] = []
    previous: _Line | None = None

    def flush() -> None:
        nonlocal paragraph, items
        if paragraph:
            page = previous.page if previous else None
            blocks.append(Block(NodeKind.PARAGRAPH, "\n".join(paragraph), page=page, collapse=False))
        if items:
            page = previous.page if previous else None
            blocks.append(Block(NodeKind.LIST, items=tuple(items), page=page))
        paragraph, items = [], []

    for line in lines:
        gap = (
            previous is not None
            and previous.y is not None
            and line.y is not None
            and abs(previous.y - line.y) > _PARAGRAPH_GAP * max(line.size, previous.size, 1.0)
        )
        if previous is not None and (previous.page != line.page or gap):
            flush()
        if is_heading(line):
            flush()
            continued = (
                bool(blocks)
                and blocks[-1].kind is NodeKind.HEADING
                and previous is not None
                and (previous.size, previous.page) == (line.size, line.page)
                and not gap
            )
            text = f"{blocks.pop().text} {line.text}" if continued else line.text
            blocks.append(Block(NodeKind.HEADING, text, level=levels[line.size], page=line.page))
            previous = line
            continue
        bullet = _BULLET.match(line.text)
        if bullet:
            if paragraph:
                flush()
            items.append(ListItem(line.text[bullet.end() :], 0, bullet.group(1) is not None))
        elif items and not paragraph and previous is not None and not gap:
            last = items[-1]
            items[-1] = ListItem(f"{last.text} {line.text}", last.depth, last.ordered)
        else:
            if items:
                flush()
            paragraph.append(line.text)
        previous = line
    flush()
    return blocks


def parse_pdf(data: bytes, *, source: str = "<bytes>") -> ParsedSource:
    """Parse PDF bytes into a :class:`ParsedSource` whose nodes carry page numbers.

    Raises ``MissingExtraError`` without pypdf, ``CorruptFileError`` for a
    damaged or encrypted file and ``EmptySourceError`` when no page has text.
    """
    try:
        import pypdf
    except ImportError:
        raise MissingExtraError(path=source, fmt="PDF", extra="pdf", module="pypdf") from None
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise CorruptFileError(
                "PDF is encrypted with a password; save an unencrypted copy and ingest that",
                path=source,
            )
        pages = list(reader.pages)
    except CorruptFileError:
        raise
    except pypdf.errors.DependencyError:
        raise CorruptFileError(
            "PDF is encrypted (AES); save an unencrypted copy and ingest that", path=source
        ) from None
    except Exception as exc:  # pypdf raises many types for damaged files
        raise CorruptFileError(f"cannot read PDF, the file is damaged: {exc}", path=source) from None
    lines: list[_Line] = []
    for number, page in enumerate(pages, 1):
        collector = _LineCollector(number)
        try:
            page.extract_text(visitor_text=collector)
        except Exception as exc:
            raise CorruptFileError(f"cannot extract text of page {number}: {exc}", path=source) from None
        collector.end_line()
        lines.extend(collector.lines)
    if not lines:
        raise EmptySourceError(
            f"PDF has no extractable text on its {len(pages)} page(s); scanned pages need OCR, "
            "which veracity does not do",
            path=source,
        )
    title = None
    try:
        title = (reader.metadata.title or "").strip() or None if reader.metadata else None
    except Exception:
        title = None
    return assemble(_blocks(lines), title=title, fmt="pdf")
