"""Markdown to structure nodes, through markdown-it-py (CommonMark + pipe tables).

The body of a Markdown source is its own text after the front matter, with
documentation-site markup cleaned away (:mod:`veracity.parse.site_markup`:
admonitions, tabs, ``:::`` containers, anchors, Vue/JSX/HTML tags) and
normalized by :func:`veracity.text.normalize.normalize_body`, so a document loaded here
has the same identity as one loaded by :mod:`veracity.parse.front_matter`.
Top-level blocks become nodes located by their source lines; inline markup
(links, emphasis) stays in the text. Block quotes and raw HTML blocks count as
paragraphs; thematic breaks are not nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..text.normalize import normalize_body
from .front_matter import split_front_matter
from .nodes import Node, NodeKind, ParsedSource
from .site_markup import clean_inline_markup, clean_site_markup

__all__ = ["parse_markdown"]

_MARKDOWN = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
"""Block structure only: the nodes take their text from the source lines and an inline token's
``content``, so parsing each inline run into children (half of markdown-it's time) is skipped."""

_OPENERS = {
    "paragraph_open": NodeKind.PARAGRAPH,
    "bullet_list_open": NodeKind.LIST,
    "ordered_list_open": NodeKind.LIST,
    "table_open": NodeKind.TABLE,
    "blockquote_open": NodeKind.PARAGRAPH,
    "html_block": NodeKind.PARAGRAPH,
    "fence": NodeKind.CODE,
    "code_block": NodeKind.CODE,
    "heading_open": NodeKind.HEADING,
}


def _table_cells(
    tokens: Sequence[Token], first: int
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], int]:
    """Header, body rows and the index of ``table_close`` for the table opened at ``first``."""
    header: tuple[str, ...] = ()
    rows: list[tuple[str, ...]] = []
    row: list[str] | None = None
    in_head = False
    index = first + 1
    while index < len(tokens) and tokens[index].type != "table_close":
        token = tokens[index]
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            if in_head:
                header = tuple(row)
            else:
                rows.append(tuple(row))
            row = None
        elif token.type == "inline" and row is not None:
            row.append(token.content.strip())
        index += 1
    return header, tuple(rows), index


def _closing(tokens: Sequence[Token], first: int) -> int:
    """Index of the token closing the block opened at ``first`` (same nesting level)."""
    opener = tokens[first]
    if opener.nesting != 1:
        return first
    closer = opener.type.replace("_open", "_close")
    index = first + 1
    while index < len(tokens):
        token = tokens[index]
        if token.type == closer and token.level == opener.level:
            return index
        index += 1
    return len(tokens) - 1


def parse_markdown(text: str, *, source: str = "<text>") -> ParsedSource:
    """Parse Markdown (with optional YAML front matter) into a :class:`ParsedSource`.

    Raises ``ValidationError`` for malformed front matter.
    """
    metadata, raw_body = split_front_matter(text, source=source)
    body = normalize_body(clean_site_markup(raw_body))
    lines = body.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    tokens = _MARKDOWN.parse(body)
    nodes: list[Node] = []
    stack: list[tuple[int, str]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = _OPENERS.get(token.type)
        if token.level != 0 or kind is None or token.map is None:
            index += 1
            continue
        first_line, last_line = token.map
        start = offsets[first_line]
        end = offsets[min(last_line, len(lines))] - 1
        while end > start and body[end - 1].isspace():
            end -= 1
        while start < end and body[start].isspace():
            start += 1
        closing = _closing(tokens, index)
        extra: dict[str, Any] = {}
        if kind is NodeKind.HEADING:
            level = int(token.tag[1:])
            heading = tokens[index + 1].content.strip() if index + 1 < len(tokens) else ""
            stack = [entry for entry in stack if entry[0] < level] + [(level, heading)]
            extra["level"] = level
        elif kind is NodeKind.TABLE:
            extra["header"], extra["rows"], closing = _table_cells(tokens, index)
        if end > start:
            path = tuple(entry[1] for entry in stack)
            nodes.append(Node(kind, body[start:end], path, start, end, **extra))
        index = closing + 1
    title = metadata.get("title")
    if isinstance(title, str):
        title = clean_inline_markup(title).strip() or None
    if title in (None, ""):
        first = next((n for n in nodes if n.kind is NodeKind.HEADING and n.level == 1), None)
        title = first.heading_path[-1] if first else None
    return ParsedSource(body, tuple(nodes), None if title is None else str(title), metadata, "markdown")
