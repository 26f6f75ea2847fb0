"""What the crawler reads in an HTML page: its links, its canonical URL, and its headings' anchors.

:func:`read_html` parses with :class:`html.parser.HTMLParser` (lenient: broken markup never
raises) and returns raw ``href`` values resolved against the page URL and ``<base href>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote

from .weburls import resolve

__all__ = ["HtmlFacts", "clean_heading", "read_html"]

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# what site generators put in permalink anchors: pilcrow, section sign, hash, link emoji,
# anchor emoji, the Font Awesome link icon, and the zero-width space Docusaurus uses
_GLYPHS = frozenset("¶§#🔗⚓\uf0c1\u200b\ufe0e\ufe0f")


@dataclass(frozen=True, slots=True)
class HtmlFacts:
    """The crawler's view of one HTML page.

    ``links``: every ``<a href>`` resolved to a normalized http(s) URL, sorted and unique;
    ``canonical``: the first ``<link rel="canonical">`` resolved, or ``None``;
    ``anchors``: ``(heading text, id)`` of the headings that have an id, in page order.
    """

    links: tuple[str, ...]
    canonical: str | None
    anchors: tuple[tuple[str, str], ...]


def _is_glyph_run(text: str) -> bool:
    return all(char in _GLYPHS or char.isspace() for char in text)


def clean_heading(text: str) -> str:
    """Heading text with whitespace collapsed and permalink glyphs at either end removed."""
    words = text.split()
    while words and _is_glyph_run(words[0]):
        words.pop(0)
    while words and _is_glyph_run(words[-1]):
        words.pop()
    return " ".join(words)


@dataclass(slots=True)
class _Heading:
    tag: str
    own_id: str
    inner_id: str = ""
    permalink_id: str = ""
    text: list[str] = field(default_factory=list)
    # text of the open <a href="#…"> inside the heading, kept apart until we know it is not just a glyph
    link_text: list[str] | None = None

    def element_id(self) -> str:
        return self.own_id or self.inner_id or self.permalink_id


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.base: str | None = None
        self.canonical: str | None = None
        self.anchors: list[tuple[str, str]] = []
        self._heading: _Heading | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: (value or "").strip() for name, value in attrs}
        if tag == "base" and self.base is None and values.get("href"):
            self.base = values["href"]
        elif tag == "link" and self.canonical is None and values.get("href"):
            if "canonical" in values.get("rel", "").lower().split():
                self.canonical = values["href"]
        elif tag == "a":
            self._start_link(values)
        elif tag in _HEADINGS:
            self._finish_heading()
            self._heading = _Heading(tag=tag, own_id=values.get("id", ""))

    def _start_link(self, values: dict[str, str]) -> None:
        href = values.get("href", "")
        if href:
            self.hrefs.append(href)
        heading = self._heading
        if heading is None:
            return
        heading.inner_id = heading.inner_id or values.get("id", "") or values.get("name", "")
        if href.startswith("#") and len(href) > 1:
            heading.permalink_id = heading.permalink_id or unquote(href[1:])
            heading.link_text = []

    def handle_endtag(self, tag: str) -> None:
        heading = self._heading
        if heading is None:
            return
        if tag == "a" and heading.link_text is not None:
            inside = "".join(heading.link_text)
            # a permalink that holds only a glyph is decoration; one with words is the title itself
            if not _is_glyph_run(inside):
                heading.text.append(inside)
            heading.link_text = None
        elif tag == heading.tag:
            self._finish_heading()

    def handle_data(self, data: str) -> None:
        heading = self._heading
        if heading is None:
            return
        (heading.link_text if heading.link_text is not None else heading.text).append(data)

    def _finish_heading(self) -> None:
        heading, self._heading = self._heading, None
        if heading is None:
            return
        if heading.link_text is not None and not _is_glyph_run("".join(heading.link_text)):
            heading.text.append("".join(heading.link_text))
        text, element_id = clean_heading("".join(heading.text)), heading.element_id()
        if text and element_id and all(element_id != known for _, known in self.anchors):
            self.anchors.append((text, element_id))

    def close(self) -> None:
        super().close()
        self._finish_heading()


def read_html(body: str, page_url: str) -> HtmlFacts:
    """Links, canonical URL and heading anchors of an HTML page fetched from ``page_url``."""
    parser = _PageParser()
    parser.feed(body)
    parser.close()
    base = resolve(page_url, parser.base) if parser.base else None
    base = base or page_url
    links = {url for href in parser.hrefs if (url := resolve(base, href)) is not None}
    canonical = resolve(base, parser.canonical) if parser.canonical else None
    return HtmlFacts(links=tuple(sorted(links)), canonical=canonical, anchors=tuple(parser.anchors))
