"""The crawl loop behind :func:`veracity.sync.web.crawl`: seeds, levels, and what each answer makes of a URL.

:class:`Session` makes the requests (politeness delay, request count); :class:`Crawler` walks
the site breadth-first and records one :class:`~veracity.sync.webtypes.Page` per canonical
URL, the first outcome for a URL winning.
"""

from __future__ import annotations

import codecs
import posixpath
from collections.abc import Callable, Iterable, Mapping
from urllib.robotparser import RobotFileParser

from .webfetch import Fetch, Response, describe_error
from .webhtml import read_html
from .webtypes import NO_VALIDATORS, CrawlResult, Page, SiteSettings, Validators
from .weburls import (
    looks_like_page,
    normalize_url,
    origin_of,
    origin_text,
    parse_sitemap,
    path_of,
    path_selected,
    resolve,
)

__all__ = ["PAGE_TYPES", "Crawler", "Session", "SiteDown"]

PAGE_TYPES = {
    "text/html": "text/html",
    "text/markdown": "text/markdown",
    "text/x-markdown": "text/markdown",
    "text/plain": "text/plain",
}
"""Content types that make a page, and the type it is reported as."""

_SUFFIX_TYPES = {".html": "text/html", ".htm": "text/html", ".md": "text/markdown", ".txt": "text/plain"}
_MAX_SITEMAPS = 50
_ACCEPT = "text/html, text/markdown, text/x-markdown, text/plain;q=0.9, */*;q=0.1"


class SiteDown(Exception):
    """The first start URL got a 5xx or no answer: the whole site is taken as down."""


class Session:
    """Requests through one fetch, counting them and keeping the politeness delay between them."""

    def __init__(
        self,
        settings: SiteSettings,
        fetch: Fetch,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        self.settings = settings
        self.delay_s = settings.delay_s
        self.requests = 0
        self._fetch, self._sleep, self._clock = fetch, sleep, clock
        self._last_end: float | None = None

    def get(self, url: str, extra_headers: Mapping[str, str]) -> Response:
        """GET ``url`` once ``delay_s`` has passed since the end of the previous request."""
        if self._last_end is not None:
            # measured from the end of the previous answer: a slow site still gets the whole delay as rest
            wait = self.delay_s - (self._clock() - self._last_end)
            if wait > 0:
                self._sleep(wait)
        headers = {"User-Agent": self.settings.user_agent, "Accept": _ACCEPT, **extra_headers}
        self.requests += 1
        try:
            return self._fetch(url, headers, self.settings.max_bytes, self.settings.timeout_s)
        finally:
            self._last_end = self._clock()


def _media(response: Response, url: str) -> tuple[str | None, str, str]:
    """``(page type or None, declared type, charset)``; a missing type is guessed from the path suffix."""
    declared, _, params = response.header("content-type").partition(";")
    declared = declared.strip().lower()
    charset = ""
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'").lower()
    suffix = posixpath.splitext(path_of(url))[1].lower()
    if not declared:
        return _SUFFIX_TYPES.get(suffix), declared, charset
    page_type = PAGE_TYPES.get(declared)
    # many servers (raw file hosts among them) send Markdown as text/plain
    if page_type == "text/plain" and suffix in (".md", ".markdown"):
        page_type = "text/markdown"
    return page_type, declared, charset


def _size_problem(response: Response, max_bytes: int) -> str | None:
    length = response.header("content-length")
    if length.isdigit() and int(length) > max_bytes:
        return f"{int(length):,} bytes > limit {max_bytes:,}"
    if response.truncated or len(response.body) > max_bytes:
        return f"more than {max_bytes:,} bytes > limit {max_bytes:,} (stopped reading)"
    return None


def _sitemap_locs(response: Response, max_bytes: int) -> tuple[bool, list[str]]:
    """``(is_index, locs)`` of a sitemap answer; ``ValueError`` saying why when it cannot be used."""
    if not 200 <= response.status < 300:
        raise ValueError(f"HTTP {response.status}")
    too_large = _size_problem(response, max_bytes)
    if too_large:
        raise ValueError(too_large)
    return parse_sitemap(response.body, max_bytes)


def _decode(body: bytes, charset: str) -> str:
    try:
        codecs.lookup(charset or "utf-8")
    except LookupError:
        charset = "utf-8"
    return body.decode(charset or "utf-8", errors="replace")


class Crawler:
    """One crawl of one site; :meth:`run` once."""

    def __init__(
        self,
        settings: SiteSettings,
        known: Mapping[str, Validators],
        session: Session,
        robots: RobotFileParser,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        self.settings, self.known, self.session, self.robots = settings, known, session, robots
        self.origin = settings.origin
        self.progress = progress
        self.starts = [normalize_url(url) for url in settings.start_urls]
        self.pages: dict[str, Page] = {}
        self.queued: set[str] = set()  # ever admitted to a level: never queued twice
        self.done: set[str] = set()  # requested, or answered for by another request (redirect, canonical)
        self.moves: set[str] = set()  # same-site redirect targets still to request (whatever their suffix)
        self.notes: list[str] = []
        self.page_requests = 0

    # -- bookkeeping ---------------------------------------------------------------------------

    def record(
        self,
        url: str,
        state: str,
        reason: str,
        *,
        body: bytes | None = None,
        content_type: str = "",
        validators: Validators | None = None,
        anchors: tuple[tuple[str, str], ...] = (),
        charset: str = "",
    ) -> None:
        """Record the outcome for ``url`` unless it already has one (the first outcome wins)."""
        if url not in self.pages:
            held = validators or self.known.get(url, NO_VALIDATORS)
            self.pages[url] = Page(url, state, body, content_type, held, reason, anchors, charset)

    def named(self, url: str) -> bool:
        """Whether the caller named ``url`` (a start URL or a known page): a refusal is then reported."""
        return url in self.known or url in self.starts

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be requested; ``None`` when it may."""
        if origin_of(url) != self.origin:
            return f"not on the site {origin_text(self.origin)}"
        if not path_selected(url, self.settings.include, self.settings.exclude):
            return "excluded by the include/exclude settings"
        if not self.robots.can_fetch(self.settings.user_agent, url):
            return "disallowed by robots.txt"
        return None

    def admit(self, urls: Iterable[str], *, pages_only: bool) -> list[str]:
        """The URLs, in the given order, that may be requested and were not queued before."""
        admitted: list[str] = []
        for url in urls:
            if url in self.queued or (pages_only and not looks_like_page(url)):
                continue
            why = self.refusal(url)
            if why is None:
                self.queued.add(url)
                admitted.append(url)
            elif self.named(url):
                self.record(url, "excluded", why)
        return admitted

    # -- the walk ------------------------------------------------------------------------------

    def run(self) -> CrawlResult:
        """Sitemaps, then the seeds and the levels they lead to, until done or out of budget."""
        sitemap_urls = self.read_sitemaps() if self.settings.sitemap else []
        seeds = self.admit([*self.starts, *sorted(self.known)], pages_only=False)
        seeds += self.admit(sitemap_urls, pages_only=True)
        first = self.starts[0]
        # the first start URL goes first: if the site is down, one request says so
        level = ([first] if first in seeds else []) + sorted(set(seeds) - {first})
        while level:
            found: set[str] = set()
            for index, url in enumerate(level):
                if self.page_requests >= self.settings.max_pages:
                    self.note_budget_cut(level[index:], found)
                    return self.result()
                if url in self.done or url in self.pages:
                    continue
                try:
                    found.update(self.visit(url, probe=url == first and self.page_requests == 0))
                except SiteDown as down:
                    return CrawlResult(pages=(), error=str(down), requests=self.session.requests)
            level = self.next_level(found)
        return self.result()

    def note_budget_cut(self, waiting: list[str], found: set[str]) -> None:
        """Note how many queued URLs the page budget left unrequested."""
        left = sum(url not in self.done and url not in self.pages for url in waiting)
        left += len(self.next_level(found))
        if left:
            budget = self.settings.max_pages
            self.notes.append(f"page budget of {budget:,} reached; {left:,} queued URLs not requested")

    def next_level(self, found: set[str]) -> list[str]:
        """The links and redirect targets found in a level that are new and may be requested, sorted."""
        moves, self.moves = self.moves, set()
        links = self.admit(sorted(found), pages_only=True)
        return sorted(links + self.admit(sorted(moves), pages_only=False))

    def result(self) -> CrawlResult:
        """The crawl's outcome, pages sorted by URL."""
        pages = tuple(self.pages[url] for url in sorted(self.pages))
        return CrawlResult(pages=pages, error=None, requests=self.session.requests, notes=tuple(self.notes))

    def read_sitemaps(self) -> list[str]:
        """The page URLs the sitemap lists (an index's child sitemaps followed); problems become notes."""
        assert self.settings.sitemap is not None
        pending = [normalize_url(self.settings.sitemap)]
        read: set[str] = set()
        pages: list[str] = []
        while pending and len(read) < _MAX_SITEMAPS:
            url = pending.pop(0)
            if url in read:
                continue
            read.add(url)
            if not self.robots.can_fetch(self.settings.user_agent, url):
                self.notes.append(f"sitemap {url}: disallowed by robots.txt")
                continue
            try:
                response = self.session.get(url, {})
            except OSError as error:
                self.notes.append(f"sitemap {url}: {describe_error(error)}")
                continue
            try:
                is_index, locs = _sitemap_locs(response, self.settings.max_bytes)
            except ValueError as error:
                self.notes.append(f"sitemap {url}: {error}")
                continue
            on_site = [normalize_url(loc) for loc in locs if origin_of(loc) == self.origin]
            if len(on_site) < len(locs):
                self.notes.append(f"sitemap {url}: {len(locs) - len(on_site):,} URLs on other sites ignored")
            (pending if is_index else pages).extend(on_site)
        if pending:
            self.notes.append(f"more than {_MAX_SITEMAPS} sitemaps: the rest were not read")
        return pages

    # -- one URL -------------------------------------------------------------------------------

    def visit(self, url: str, *, probe: bool) -> list[str]:
        """Request ``url``, record what became of it; the same-site page links to follow."""
        self.done.add(url)
        headers = self.known.get(url, NO_VALIDATORS).conditional_headers()
        try:
            response = self.session.get(url, headers)
        except OSError as error:
            self.count_page()
            if probe:
                raise SiteDown(f"start URL {url}: {describe_error(error)}") from error
            self.record(url, "failed", describe_error(error))
            return []
        self.count_page()
        if probe and response.status >= 500:
            raise SiteDown(f"start URL {url}: HTTP {response.status}")
        final = normalize_url(response.url) if response.url else url
        location = response.header("location")
        if 300 <= response.status < 400 and location:
            # a redirect the fetch did not follow (one off the site, or a loop): its target is the final URL
            final = resolve(url, location) or final
        if origin_of(final) != self.origin:
            self.record(url, "excluded", f"redirects off the host to {final}")
            return []
        if final != url:
            return self.moved(url, final, response)
        return self.answer(url, response, conditional=bool(headers), named=self.named(url))

    def count_page(self) -> None:
        """One more page request, reported to ``progress``."""
        self.page_requests += 1
        if self.progress is not None:
            self.progress(self.page_requests, self.settings.max_pages)

    def moved(self, url: str, final: str, response: Response) -> list[str]:
        """``url`` redirected to ``final`` on the same site."""
        why = self.refusal(final)
        if why is not None:
            self.record(url, "excluded", f"redirects to {final}, {why}")
            return []
        status = response.status
        if 300 <= status < 400:
            # not followed (or a 304 meant for other validators): request the target itself later
            if url in self.known:
                self.record(url, "gone", f"moved to {final}")
            self.moves.add(final)
            return []
        if not 200 <= status < 300:
            state = "gone" if status in (404, 410) else "failed"
            self.record(url, state, f"redirects to {final}, which answers HTTP {status}")
            return []
        if url in self.known:
            # the old document is withdrawn and the new one added under its own URL
            self.record(url, "gone", f"moved to {final}")
        self.done.add(final)
        return self.answer(final, response, conditional=False, named=self.named(url) or self.named(final))

    def answer(self, url: str, response: Response, *, conditional: bool, named: bool) -> list[str]:
        """Record the outcome of ``response`` (not a redirect) as the page at ``url``."""
        status = response.status
        if status == 304 and conditional:
            previous = self.known.get(url, NO_VALIDATORS)
            self.record(url, "not_modified", "HTTP 304 not modified", validators=previous)
            return list(previous.links)  # no body to read links from: follow those the held version had
        if status in (404, 410):
            self.record(url, "gone", f"HTTP {status}")
            return []
        if not 200 <= status < 300:
            self.record(url, "failed", f"HTTP {status}")
            return []
        page_type, declared, charset = _media(response, url)
        if page_type is None:
            if named:
                self.record(url, "excluded", f"not a page: content type {declared or 'missing'}")
            return []
        too_large = _size_problem(response, self.settings.max_bytes)
        if too_large:
            self.record(url, "too_large", too_large)
            return []
        key = url
        links: tuple[str, ...] = ()
        anchors: tuple[tuple[str, str], ...] = ()
        if page_type == "text/html":
            facts = read_html(_decode(response.body, charset), url)
            links = tuple(link for link in facts.links if origin_of(link) == self.origin)
            links = tuple(link for link in links if looks_like_page(link))
            anchors = facts.anchors
            canonical = facts.canonical
            if canonical and canonical != url and self.refusal(canonical) is None:
                if url in self.known:
                    self.record(url, "gone", f"moved to {canonical} (rel=canonical)")
                key = canonical
                self.done.add(canonical)
        etag, modified = response.header("etag") or None, response.header("last-modified") or None
        self.record(
            key,
            "fetched",
            f"HTTP {status}",
            body=response.body,
            content_type=page_type,
            validators=Validators(etag=etag, last_modified=modified, links=links),
            anchors=anchors,
            charset=charset,
        )
        return list(links)
