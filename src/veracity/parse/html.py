"""HTML to structure nodes with the standard library's ``html.parser``.

Kept: ``h1``–``h6`` headings, paragraphs (``p``, ``div`` and other block text;
``br`` breaks a line), ``ul``/``ol`` lists with nesting, ``pre`` code (language
from a ``language-xx`` class), tables (header from ``th`` cells or ``thead``;
without either the first row is the header; a ``caption`` becomes a paragraph).
Dropped with everything inside: ``script``, ``style``, ``noscript``,
``template``, ``form``, ``nav``, ``aside``, ``svg``, ``iframe``, elements with
a ``hidden`` attribute, a navigation-like ARIA role or a cookie-banner id or class, and page-level
``header``/``footer`` (those inside ``article`` or ``main`` are kept, since
they often hold the article's title). The title is ``<title>``, else the first
``h1``. ``<meta name="veracity:FIELD" content="...">`` supplies metadata;
``veracity:allowed_roles`` is a comma-separated list.

Parsing is linear in the page: open elements are a stack with counts per
tag name (no scans of the stack), and elements nested deeper than
``max_depth`` (default 512) are read as flat text: their tags are counted,
not kept, so a page nested 100,000 deep costs no more than a flat one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from .nodes import Block, ListItem, NodeKind, ParsedSource, assemble, clean_inline
from .open_tags import TagStack

__all__ = ["parse_html"]

_DROPPED = frozenset(
    "script style noscript template form nav aside svg iframe object button select".split()
)
_PAGE_CHROME = frozenset({"header", "footer"})
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_CONTENT = frozenset({"article", "main"})
_CONSENT = re.compile(r"(?i)(?:^|[\s_-])(?:cookies?|consent|gdpr)(?:$|[\s_-])")
"""A cookie or consent banner, by the id or class names banner kits and sites give it
(``cookie-banner``, ``cc_consent``, ``gdpr-notice``): site chrome, never the page's content."""
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BLOCKS = frozenset(
    """p div section article main body html blockquote address figure figcaption
    details summary dl dt dd hr center fieldset legend header footer li""".split()
)
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_LANGUAGE_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w.+#-]+)")
_META_PREFIX = "veracity:"
_HEAD_TAGS = frozenset("head title meta link base".split())


@dataclass
class _Table:
    """A table being read: finished rows, the open row and cell, an open caption."""

    rows: list[list[str]] = field(default_factory=list)
    row: list[str] | None = None
    cell: list[str] | None = None
    caption: list[str] | None = None


class _Collector(HTMLParser):
    """Collects blocks from parser events; see the module docstring for the rules."""

    def __init__(self, max_depth: int = 512) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.metadata: dict[str, Any] = {}
        self.title: list[str] | None = None
        self.title_text = ""
        self.skip = TagStack(max_depth)
        self.open_tags = TagStack(max_depth)
        self.in_head = False
        self.text: list[str] = []
        self.heading: int | None = None
        self.pre: list[str] | None = None
        self.pre_language = ""
        self.lists: list[bool] = []
        self.items: list[ListItem] = []
        self.item: list[str] | None = None
        self.tables: list[_Table] = []

    # -- text routing --------------------------------------------------------

    def _sink(self) -> list[str]:
        if self.pre is not None:
            return self.pre
        if self.tables:
            table = self.tables[-1]
            if table.cell is not None:
                return table.cell
            if table.caption is not None:
                return table.caption
            return []
        if self.heading is None and self.item is not None:
            return self.item
        return self.text

    def _flush_paragraph(self) -> None:
        if self.text:
            self.blocks.append(Block(NodeKind.PARAGRAPH, "".join(self.text)))
            self.text = []

    def _flush_item(self) -> None:
        if self.item is not None and clean_inline("".join(self.item)):
            self.items.append(ListItem("".join(self.item), len(self.lists) - 1, self.lists[-1]))
        self.item = [] if self.item is not None else None

    def _flush_list(self) -> None:
        if self.items:
            self.blocks.append(Block(NodeKind.LIST, items=tuple(self.items)))
            self.items = []

    def _in_structure(self) -> bool:
        return bool(self.tables) or self.pre is not None or self.heading is not None

    # -- events --------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "meta":
            self._meta(attributes)
        if self.skip:
            if tag not in _VOID:
                self.skip.push(tag)
            return
        if self._dropped(tag, attributes):
            if tag not in _VOID:
                self.skip.push(tag)
            return
        if tag not in _VOID and not self.open_tags.push(tag):
            return  # nested past max_depth: read as flat text
        if tag != "title" and self.title is not None and not self.title_text:
            self._end_title()
        if tag not in _HEAD_TAGS:
            self.in_head = False
        if tag == "head":
            self.in_head = True
        elif tag == "body":
            self.in_head = False
        elif tag == "title" and self.title is None:
            self.title = []
        elif self.pre is not None:
            if tag == "code" and not self.pre_language:
                self.pre_language = self._language(attributes)
        elif tag in _HEADINGS:
            self._start_heading(_HEADINGS[tag])
        elif tag in ("ul", "ol"):
            self._start_list(tag == "ol")
        elif tag == "li":
            self._start_item()
        elif tag == "table":
            self._start_table()
        elif self.tables and tag in ("tr", "td", "th", "caption"):
            self._table_tag(tag, opening=True)
        elif tag == "pre" and not self._in_structure() and self.item is None:
            self._flush_paragraph()
            self.pre = []
            self.pre_language = self._language(attributes)
        elif tag == "br":
            self._sink().append("\n" if self._sink() is self.text else " ")
        elif tag in _BLOCKS:
            self._block_boundary()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            self.skip.close(tag)
            return
        if not self.open_tags.close(tag):
            return
        if tag == "head":
            self.in_head = False
        elif tag == "title" and self.title is not None and not self.title_text:
            self._end_title()
        elif tag == "pre" and self.pre is not None:
            self.blocks.append(Block(NodeKind.CODE, "".join(self.pre), language=self.pre_language))
            self.pre = None
        elif self.pre is not None:
            return
        elif tag in _HEADINGS and self.heading is not None:
            self._end_heading()
        elif tag in ("ul", "ol") and self.lists:
            self._end_list()
        elif tag == "li" and self.item is not None:
            self._flush_item()
            self.item = None
        elif tag == "table" and self.tables:
            self._end_table()
        elif self.tables and tag in ("tr", "td", "th", "caption"):
            self._table_tag(tag, opening=False)
        elif tag in _BLOCKS:
            self._block_boundary()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.title is not None and not self.title_text:
            self.title.append(data)
            return
        if self.in_head:
            return
        self._sink().append(data)

    def close(self) -> None:
        """Finish parsing and flush whatever is still open."""
        super().close()
        if self.pre is not None:
            self.blocks.append(Block(NodeKind.CODE, "".join(self.pre), language=self.pre_language))
            self.pre = None
        while self.tables:
            self._end_table()
        if self.heading is not None:
            self._end_heading()
        while self.lists:
            self._end_list()
        self._flush_paragraph()

    # -- helpers -------------------------------------------------------------

    def _dropped(self, tag: str, attributes: dict[str, str | None]) -> bool:
        if tag in _DROPPED or "hidden" in attributes:
            return True
        if (attributes.get("role") or "").strip().lower() in _CHROME_ROLES:
            return True
        if _CONSENT.search(f"{attributes.get('id') or ''} {attributes.get('class') or ''}"):
            return True
        return tag in _PAGE_CHROME and not any(t in self.open_tags for t in _CONTENT)

    def _end_title(self) -> None:
        self.title_text = clean_inline("".join(self.title or [])) or " "

    def _meta(self, attributes: dict[str, str | None]) -> None:
        name = (attributes.get("name") or "").strip().lower()
        content = attributes.get("content")
        if not name.startswith(_META_PREFIX) or content is None:
            return
        key = name[len(_META_PREFIX) :]
        if key == "allowed_roles":
            self.metadata[key] = [role.strip() for role in content.split(",") if role.strip()]
        elif key:
            self.metadata[key] = content.strip()

    @staticmethod
    def _language(attributes: dict[str, str | None]) -> str:
        match = _LANGUAGE_CLASS.search(attributes.get("class") or "")
        return match.group(1) if match else ""

    def _block_boundary(self) -> None:
        sink = self._sink()
        if sink is self.text and self.heading is None:
            self._flush_paragraph()
        else:
            sink.append(" ")

    def _start_heading(self, level: int) -> None:
        if self._in_structure() or self.item is not None:
            self._sink().append(" ")
            return
        self._flush_paragraph()
        self._flush_list()
        self.heading = level

    def _end_heading(self) -> None:
        assert self.heading is not None
        self.blocks.append(Block(NodeKind.HEADING, "".join(self.text), level=self.heading))
        self.heading, self.text = None, []

    def _start_list(self, ordered: bool) -> None:
        if self.tables or self.heading is not None:
            self._sink().append(" ")
            return
        if not self.lists:
            self._flush_paragraph()
        self._flush_item()
        self.lists.append(ordered)

    def _end_list(self) -> None:
        self._flush_item()
        self.lists.pop()
        self.item = [] if self.lists else None
        if not self.lists:
            self._flush_list()

    def _start_item(self) -> None:
        if self.tables or self.heading is not None:
            self._sink().append(" ")
            return
        if not self.lists:
            self._flush_paragraph()
            self.lists.append(False)
        self._flush_item()
        self.item = []

    def _start_table(self) -> None:
        if self.tables and (self.tables[-1].cell is not None or self.tables[-1].caption is not None):
            self.tables.append(_Table())  # nested: flattened into the outer cell at its end
            return
        if self.heading is not None:
            self._end_heading()
        self._flush_paragraph()
        self._flush_item()
        self._flush_list()
        self.tables.append(_Table())

    def _end_table(self) -> None:
        table = self.tables[-1]
        self._end_row(table)
        self._end_caption(table)
        self.tables.pop()
        if self.tables:
            self._sink().append(" " + " ".join(" ".join(row) for row in table.rows) + " ")
        elif table.rows:
            header, *rows = table.rows
            self.blocks.append(
                Block(NodeKind.TABLE, header=tuple(header), rows=tuple(map(tuple, rows)))
            )

    def _end_caption(self, table: _Table) -> None:
        caption, table.caption = table.caption, None
        if caption and len(self.tables) == 1 and clean_inline("".join(caption)):
            self.blocks.append(Block(NodeKind.PARAGRAPH, "".join(caption)))

    def _table_tag(self, tag: str, *, opening: bool) -> None:
        table = self.tables[-1]
        if tag == "caption":
            if opening:
                table.caption = []
            else:
                self._end_caption(table)
        elif tag in ("td", "th"):
            self._end_cell(table)
            if opening:
                table.cell = []
        else:  # tr
            self._end_row(table)
            if opening:
                table.row = []

    @staticmethod
    def _end_cell(table: _Table) -> None:
        if table.cell is None:
            return
        if table.row is None:
            table.row = []
        table.row.append(clean_inline("".join(table.cell)))
        table.cell = None

    def _end_row(self, table: _Table) -> None:
        self._end_cell(table)
        if table.row is not None:
            table.rows.append(table.row)
            table.row = None


def parse_html(text: str, *, source: str = "<text>", max_depth: int = 512) -> ParsedSource:
    """Parse an HTML page into a :class:`ParsedSource` with a canonical Markdown body.

    Elements nested deeper than ``max_depth`` are read as flat text (see the module docstring).
    """
    collector = _Collector(max_depth)
    collector.feed(text)
    collector.close()
    title = collector.title_text.strip() or None
    return assemble(collector.blocks, title=title, metadata=collector.metadata, fmt="html")
