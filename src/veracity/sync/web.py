"""Crawl one website politely for ``veracity sync``: the pages it has now, and what became of those it had.

:func:`crawl` reads robots.txt first (a 5xx or no answer stops the crawl: RFC 9309 treats a
server error as a full disallow), then the sitemap, then pages breadth-first from the seeds
(start URLs, sitemap URLs, and every URL known from the previous crawl, so that a removal is
seen), each level in sorted URL order so that the same site always gives the same result and
the same budget cut. Known pages are asked for conditionally (``If-None-Match`` /
``If-Modified-Since``). Every request waits out the politeness delay, measured with the
injected ``clock`` and waited with the injected ``sleep``.

The crawler only crawls: the caller turns the returned :class:`Page` objects into files.
The values live in :mod:`veracity.sync.webtypes`, the transport in :mod:`veracity.sync.webfetch`,
link following and page outcomes in :mod:`veracity.sync.webcrawl`; this module gathers them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from types import MappingProxyType

from .webcrawl import Crawler, Session
from .webfetch import Fetch, Response, describe_error, urllib_fetch
from .webtypes import PAGE_STATES, CrawlResult, Page, SiteSettings, Validators
from .weburls import Origin, normalize_url, origin_text, parse_robots

__all__ = [
    "PAGE_STATES",
    "CrawlResult",
    "Fetch",
    "Page",
    "Response",
    "SiteSettings",
    "Validators",
    "crawl",
    "urllib_fetch",
]

_NO_PREVIOUS: Mapping[str, Validators] = MappingProxyType({})


def _read_robots(session: Session, origin: Origin) -> tuple[bytes | None, str | None]:
    """``(robots.txt body, None)``: ``b""`` when it is missing; ``(None, error)`` when the site failed."""
    url = f"{origin_text(origin)}/robots.txt"
    try:
        response = session.get(url, {})
    except OSError as error:
        return None, f"robots.txt {url}: {describe_error(error)}"
    # 429 is read like 5xx: the site asks us to back off, so crawling on would be impolite
    if response.status >= 500 or response.status == 429:
        return None, f"robots.txt {url}: HTTP {response.status} (RFC 9309: the whole site is disallowed)"
    if 200 <= response.status < 300:
        return response.body, None
    return b"", None  # 4xx (and a redirect off the site): no rules, everything allowed


def crawl(
    settings: SiteSettings,
    previous: Mapping[str, Validators] = _NO_PREVIOUS,
    *,
    fetch: Fetch | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    progress: Callable[[int, int], None] | None = None,
) -> CrawlResult:
    """Crawl the site of ``settings``; ``previous`` maps each page URL held to its validators.

    ``fetch`` defaults to :func:`urllib_fetch`; ``progress(done, budget)`` is called after each
    page request. See the module docstring for the order of requests.
    """
    session = Session(settings, fetch or urllib_fetch, sleep, clock)
    robots, error = _read_robots(session, settings.origin)
    if robots is None:
        return CrawlResult(pages=(), error=error, requests=session.requests)
    rules = parse_robots(robots)
    session.delay_s = max(settings.delay_s, float(rules.crawl_delay(settings.user_agent) or 0))
    known = {normalize_url(url): validators for url, validators in previous.items()}
    return Crawler(settings, known, session, rules, progress).run()
