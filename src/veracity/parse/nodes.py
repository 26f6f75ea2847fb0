"""Structure nodes and their canonical Markdown rendering.

Every parser reads its format into :class:`Block`\\ s (a heading, a paragraph,
a list, a table with its header, a code block), and :func:`assemble` renders
them to one canonical Markdown body: headings as ``#``, lists with ``- `` or
``1. ``, tables as pipe tables whose first row is the header, code fenced.
Paragraph lines that Markdown (or the line-wise structural chunker) would read
as markup get a backslash escape, so a paragraph never turns into a heading,
list, table or fence. The body is a fixed point of
:func:`veracity.text.normalize.normalize_body`, and each node's ``start``/``end`` slice
it exactly: ``body[node.start:node.end] == node.text``. Because the body is
plain Markdown, :func:`veracity.parse.chunking.chunk_document` cuts every format the
same way, keeping tables and code whole.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..model.contracts import ChunkKind, OcrNumber, PageBox
from .diagnostics import ParseDiagnostics

__all__ = ["Block", "ListItem", "Node", "NodeKind", "ParsedSource", "assemble", "clean_inline"]


class NodeKind(StrEnum):
    """What a structure node is."""

    HEADING = "heading"
    PARAGRAPH = "paragraph"
    TABLE = "table"
    LIST = "list"
    CODE = "code"


_CHUNK_KINDS = {
    NodeKind.PARAGRAPH: ChunkKind.PARAGRAPH,
    NodeKind.TABLE: ChunkKind.TABLE,
    NodeKind.LIST: ChunkKind.LIST,
    NodeKind.CODE: ChunkKind.CODE,
}


@dataclass(frozen=True, slots=True)
class Node:
    """One structural element of a parsed source, located in its body.

    ``heading_path`` is the path of headings above the node; for a heading it
    ends with the heading itself. ``level`` is set for headings (1–6), ``page``
    (1-based) and ``bbox`` (where on the page) for PDF and image sources.
    Tables carry ``header`` and ``rows`` as plain cell texts, so every cell
    keeps its column header (:meth:`cells`, :meth:`row_texts`). ``source`` is
    ``text`` for text the file carried and ``ocr`` for text read from an image,
    which also has the OCR ``confidence`` (0–1) and the ``ocr_numbers`` read.
    """

    kind: NodeKind
    text: str
    heading_path: tuple[str, ...]
    start: int
    end: int
    page: int | None = None
    level: int | None = None
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    bbox: PageBox | None = None
    source: str = "text"
    confidence: float | None = None
    ocr_numbers: tuple[OcrNumber, ...] = ()

    @property
    def chunk_kind(self) -> ChunkKind | None:
        """The chunk kind this node becomes; ``None`` for a heading."""
        return _CHUNK_KINDS.get(self.kind)

    def cells(self) -> tuple[tuple[tuple[str, str], ...], ...]:
        """Table rows as ``(column header, cell)`` pairs; empty for other kinds."""
        return tuple(tuple(zip(self.header, row, strict=False)) for row in self.rows)

    def row_texts(self) -> tuple[str, ...]:
        """Each table row as ``header: value; header: value`` (empty cells left out)."""
        return tuple("; ".join(f"{h}: {v}" if h else v for h, v in row if v) for row in self.cells())


@dataclass(frozen=True, slots=True)
class ParsedSource:
    """A parsed file: canonical body, its nodes, a title and embedded metadata.

    ``metadata`` is what the file itself declares (Markdown front matter, HTML
    ``<meta name="veracity:...">``); ``fmt`` names the parser that read it;
    ``diagnostics`` says what parsing found (pages, OCR, tables, removed
    header and footer lines, time and bytes).
    """

    body: str
    nodes: tuple[Node, ...]
    title: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    fmt: str = "text"
    diagnostics: ParseDiagnostics = field(default_factory=ParseDiagnostics)

    def page_at(self, offset: int) -> int | None:
        """Page number of the node covering (or last starting before) ``offset``."""
        starts = [node.start for node in self.nodes]
        index = bisect.bisect_right(starts, offset) - 1
        return self.nodes[index].page if index >= 0 else None


@dataclass(frozen=True, slots=True)
class ListItem:
    """One list item: its text, nesting depth (0 = top) and whether it is numbered."""

    text: str
    depth: int = 0
    ordered: bool = False


@dataclass(frozen=True, slots=True)
class Block:
    """What a parser reads, before rendering: the fields used depend on ``kind``.

    ``text`` holds a heading's, paragraph's or code block's text; ``collapse``
    folds whitespace runs inside paragraph lines (HTML) or keeps them (plain
    text, PDF). Lists use ``items``; tables use ``header`` and ``rows``.
    ``bbox``, ``source``, ``confidence`` and ``ocr_numbers`` pass to the node
    (see :class:`Node`).
    """

    kind: NodeKind
    text: str = ""
    level: int = 1
    items: tuple[ListItem, ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    language: str = ""
    page: int | None = None
    collapse: bool = True
    bbox: PageBox | None = None
    source: str = "text"
    confidence: float | None = None
    ocr_numbers: tuple[OcrNumber, ...] = ()


_WHITESPACE = re.compile(r"\s+")
_ORDERED_MARK = re.compile(r"^(\d+)([.)])(?=\s|$)")
_NEEDS_ESCAPE = re.compile(
    r"^(?:[#|>]|[-*+](?=\s|$)|<[A-Za-z/!?]|`{3}|~{3}|=+$|(?:[-_*][ \t]*){3,}$)"
)
_TRAILING_HASHES = re.compile(r"(?:^|(?<=\s))#+$")
_BACKTICK_RUN = re.compile(r"`+")
_LANGUAGE = re.compile(r"[^\w.+#-]")


def clean_inline(text: str) -> str:
    """NFC text with every whitespace run folded to one space, stripped."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def _escape_line(line: str) -> str:
    ordered = _ORDERED_MARK.match(line)
    if ordered:
        return f"{ordered.group(1)}\\{line[len(ordered.group(1)) :]}"
    if _NEEDS_ESCAPE.match(line):
        return "\\" + line
    return line


def _paragraph(block: Block) -> str | None:
    lines = []
    for raw in unicodedata.normalize("NFC", block.text).splitlines():
        line = clean_inline(raw) if block.collapse else raw.strip()
        if line:
            lines.append(_escape_line(line))
    return "\n".join(lines) or None


def _heading(block: Block) -> str | None:
    text = clean_inline(block.text)
    if not text:
        return None
    hashes = _TRAILING_HASHES.search(text)
    if hashes:
        text = f"{text[: hashes.start()]}\\{text[hashes.start() :]}"
    return text


def _code(block: Block) -> str | None:
    lines: list[str] = []
    for raw in unicodedata.normalize("NFC", block.text).splitlines():
        line = raw.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return None
    longest = max((len(run) for run in _BACKTICK_RUN.findall("\n".join(lines))), default=0)
    fence = "`" * max(3, longest + 1)
    # NFC like the body around it, or normalize_body would change the fence line
    language = _LANGUAGE.sub("", unicodedata.normalize("NFC", block.language))
    return "\n".join([fence + language, *lines, fence])


def _cell(text: str) -> str:
    return clean_inline(text).replace("|", "\\|")


def _table(block: Block) -> tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]] | None:
    header = tuple(clean_inline(cell) for cell in block.header)
    rows = [tuple(clean_inline(cell) for cell in row) for row in block.rows]
    if not header and rows:
        header, rows = rows[0], rows[1:]
    rows = [row for row in rows if any(row)]
    width = max([len(header), *(len(row) for row in rows)])
    if width == 0 or not (any(header) or rows):
        return None
    header = header + ("",) * (width - len(header))
    padded = tuple(row + ("",) * (width - len(row)) for row in rows)

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    lines = [line(_cell(c) for c in header), line(["---"] * width)]
    lines.extend(line(_cell(c) for c in row) for row in padded)
    return "\n".join(lines), header, padded


def _list(block: Block) -> str | None:
    lines: list[str] = []
    counters: list[int] = []
    previous = -1
    for item in block.items:
        text = clean_inline(item.text)
        if not text:
            continue
        depth = max(0, min(item.depth, previous + 1))
        previous = depth
        del counters[depth + 1 :]
        while len(counters) <= depth:
            counters.append(0)
        counters[depth] = counters[depth] + 1 if item.ordered else 0
        marker = f"{counters[depth]}." if item.ordered else "-"
        lines.append(f"{'    ' * depth}{marker} {text}")
    return "\n".join(lines) or None


def assemble(
    blocks: Iterable[Block],
    *,
    title: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    fmt: str = "text",
    diagnostics: ParseDiagnostics | None = None,
) -> ParsedSource:
    """Render ``blocks`` to the canonical Markdown body and locate every node in it.

    Blocks that render to nothing (empty paragraphs, empty tables) are dropped.
    ``title`` defaults to the first level-1 heading, else the first heading.
    """
    pieces: list[str] = []
    nodes: list[Node] = []
    stack: list[tuple[int, str]] = []
    offset = 0
    for block in blocks:
        level: int | None = None
        header: tuple[str, ...] = ()
        rows: tuple[tuple[str, ...], ...] = ()
        if block.kind is NodeKind.HEADING:
            heading = _heading(block)
            level = min(6, max(1, block.level))
            text = None if heading is None else f"{'#' * level} {heading}"
            if heading is not None:
                stack = [entry for entry in stack if entry[0] < level] + [(level, heading)]
        elif block.kind is NodeKind.TABLE:
            table = _table(block)
            text = None
            if table is not None:
                text, header, rows = table
        elif block.kind is NodeKind.LIST:
            text = _list(block)
        elif block.kind is NodeKind.CODE:
            text = _code(block)
        else:
            text = _paragraph(block)
        if text is None:
            continue
        start = offset + 2 if pieces else 0
        path = tuple(entry[1] for entry in stack)
        nodes.append(
            Node(
                block.kind, text, path, start, start + len(text), block.page, level, header, rows,
                block.bbox, block.source, block.confidence, block.ocr_numbers,
            )
        )  # fmt: skip
        pieces.append(text)
        offset = start + len(text)
    if title is None:
        headings = [node for node in nodes if node.kind is NodeKind.HEADING]
        first = next((node for node in headings if node.level == 1), None) or next(
            iter(headings), None
        )
        title = first.heading_path[-1] if first else None
    return ParsedSource(
        "\n\n".join(pieces), tuple(nodes), title, dict(metadata or {}), fmt, diagnostics or ParseDiagnostics()
    )
