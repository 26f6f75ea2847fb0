"""The values of the website crawler: what to crawl (:class:`SiteSettings`), what came back (:class:`Page`).

:class:`Validators` identify the version of a page the caller holds; :class:`CrawlResult`
gathers one crawl's pages. The crawl itself is :func:`veracity.sync.web.crawl`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .weburls import Origin, normalize_url, origin_of, origin_text, path_selected

__all__ = ["NO_VALIDATORS", "PAGE_STATES", "CrawlResult", "Page", "SiteSettings", "Validators"]

PAGE_STATES = ("fetched", "not_modified", "gone", "failed", "too_large", "excluded")
"""Every :attr:`Page.state`."""


@dataclass(frozen=True, slots=True)
class SiteSettings:
    """What to crawl and how politely.

    ``start_urls``: at least one, all on one site (scheme, host and port); ``sitemap``: a
    sitemap or sitemap index URL on that site (``None``: no sitemap read); ``max_pages``:
    page requests allowed (robots.txt and sitemaps not counted); ``delay_s``: the least time
    between two requests (a larger robots.txt ``Crawl-delay`` wins); ``max_bytes``: a larger
    page is ``too_large``; ``include`` / ``exclude``: :func:`fnmatch.fnmatchcase` globs over
    the URL path (``"/guide/*"``; no include: the whole site). Raises ``ValueError`` naming
    the offending URL or value.
    """

    start_urls: tuple[str, ...]
    sitemap: str | None = None
    max_pages: int = 500
    delay_s: float = 0.5
    max_bytes: int = 5_000_000
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    user_agent: str = "veracity-sync"
    timeout_s: float = 20.0

    def __post_init__(self) -> None:
        for name in ("start_urls", "include", "exclude"):
            if isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a tuple of strings, not one string")
        if not self.start_urls:
            raise ValueError("a site needs at least one start URL")
        origin = origin_of(self.start_urls[0])
        if origin is None:
            raise ValueError(f"start URL {self.start_urls[0]!r} is not an http(s) URL")
        for url in self.start_urls:
            if origin_of(url) != origin:
                raise ValueError(f"start URL {url!r} is not on {origin_text(origin)}")
            if not path_selected(normalize_url(url), self.include, self.exclude):
                raise ValueError(f"start URL {url!r} is excluded by the include/exclude globs")
        if self.sitemap is not None and origin_of(self.sitemap) != origin:
            raise ValueError(f"sitemap {self.sitemap!r} is not on {origin_text(origin)}")
        if self.max_pages < 1 or self.max_bytes < 1:
            raise ValueError(f"max_pages ({self.max_pages}) and max_bytes ({self.max_bytes}) must be ≥ 1")
        if self.delay_s < 0 or self.timeout_s <= 0:
            raise ValueError(f"delay_s ({self.delay_s}) must be ≥ 0 and timeout_s ({self.timeout_s}) > 0")
        if not self.user_agent.strip():
            raise ValueError("user_agent must not be empty")

    @property
    def origin(self) -> Origin:
        """The site: ``(scheme, host, port)`` of the start URLs."""
        origin = origin_of(self.start_urls[0])
        assert origin is not None  # checked on construction
        return origin


@dataclass(frozen=True, slots=True)
class Validators:
    """What identifies the version of a page the caller holds, for a conditional request.

    ``links``: the same-site page links that version contained. A ``304 Not Modified`` has no
    body to read links from, so the crawler follows these instead; a caller that stores
    validators should store them too, or pages linked only from unchanged pages are found
    again only through the sitemap or ``previous``.
    """

    etag: str | None = None
    last_modified: str | None = None
    links: tuple[str, ...] = ()

    def conditional_headers(self) -> dict[str, str]:
        """``If-None-Match`` / ``If-Modified-Since`` for the validators present."""
        headers: dict[str, str] = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


NO_VALIDATORS = Validators()


@dataclass(frozen=True, slots=True)
class Page:
    """The outcome for one canonical URL (never with a fragment).

    ``state``: one of :data:`PAGE_STATES`; ``body`` only when ``"fetched"``; ``content_type``:
    ``text/html``, ``text/markdown`` or ``text/plain`` (``""`` when not fetched), ``charset`` the
    one the server declared (``""``: none; decoding is the caller's business); ``validators``
    from the response when fetched, else the previous ones; ``reason`` says what happened
    (``"HTTP 404"``, ``"disallowed by robots.txt"``, ``"moved to …"``); ``anchors``:
    ``(heading text, element id)`` of the headings of an HTML page, in page order.
    """

    url: str
    state: str
    body: bytes | None
    content_type: str
    validators: Validators
    reason: str
    anchors: tuple[tuple[str, str], ...] = ()
    charset: str = ""


@dataclass(frozen=True, slots=True)
class CrawlResult:
    """The pages, sorted by URL and one per canonical URL, and the requests made (robots and sitemaps too).

    ``error``: the site itself failed (robots.txt or the first start URL answered 5xx or not at
    all); there are then no pages and the caller withdraws nothing. URLs the page budget did
    not reach are absent: the caller keeps what it had. ``notes``: what went wrong short of a
    page (an unreadable sitemap, the budget running out).
    """

    pages: tuple[Page, ...]
    error: str | None
    requests: int
    notes: tuple[str, ...] = ()
