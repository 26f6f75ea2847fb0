"""The website crawler against a real local HTTP server (``urllib_fetch``), plus pure-logic checks on fakes.

The site is served from a temp folder by a handler that sends ETags and answers
``If-None-Match`` with 304, so a second crawl can be checked for conditional requests; the
handler logs every request path with the status it sent.
"""

from __future__ import annotations

import gzip
import hashlib
import socket
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from veracity.sync.web import (
    CrawlResult,
    Fetch,
    Page,
    Response,
    SiteSettings,
    Validators,
    crawl,
    urllib_fetch,
)
from veracity.sync.webhtml import read_html
from veracity.sync.weburls import looks_like_page, normalize_url, parse_sitemap

LIMIT = 10_000
TYPES = {".html": "text/html; charset=utf-8", ".md": "text/markdown", ".xml": "text/xml"}
GUIDE_A = """<html><head><title>A</title></head><body>
<h1 id="guide-a">Guide A</h1>
<h2>Install<a class="headerlink" href="#install" title="Permalink">¶</a></h2>
<h2><a id="user-content-setup" class="anchor" href="#setup"></a>Set   up
  the tool</h2>
<h3 id="c-sharp">C# notes <a href="#c-sharp">#</a></h3>
<h2>No id here</h2>
<h4 id="docs">Docs<a class="hash-link" href="#docs">\u200b</a></h4>
<a href="b/">B</a> <a href="/">home</a> <a href="#install">self</a>
</body></html>"""
INDEX = """<html><body>
<a href="/guide/a.html">A</a> <a href="/guide/a.html#install">A again</a> <a href="/old.html">old</a>
<a href="/missing.html">missing</a> <a href="/private/secret.html">secret</a> <a href="/big.html">big</a>
<a href="/stream.html">stream</a> <a href="/canon-alias.html">alias</a> <a href="/canonical.html">c</a>
<a href="/away.html">away</a> <a href="/api">api</a> <a href="/image.png">image</a>
<a href="mailto:x@example.org">mail</a> <a href="http://other.example/x.html">elsewhere</a>
</body></html>"""


class Site:
    """Files under ``root`` by URL path (``/dir/``: ``dir/index.html``), redirects, and fixed statuses."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.redirects: dict[str, tuple[int, str]] = {}
        self.statuses: dict[str, int] = {}
        self.types: dict[str, str] = {}
        self.unsized: set[str] = set()  # sent without Content-Length: the client must stop reading itself
        self.log: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    def write(self, path: str, text: str) -> None:
        target = self.root / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def answer(self, path: str, headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        if path in self.statuses:
            return self.statuses[path], {"Content-Type": "text/plain"}, b"nope"
        if path in self.redirects:
            code, target = self.redirects[path]
            return code, {"Location": target}, b""
        file = self.root / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))
        if not file.is_file():
            return 404, {"Content-Type": "text/html"}, b"<h1>Not found</h1>"
        body = file.read_bytes()
        etag = f'"{hashlib.sha1(body).hexdigest()[:12]}"'
        if headers.get("if-none-match") == etag:
            return 304, {"ETag": etag}, b""
        kind = self.types.get(path) or TYPES.get(file.suffix, "application/octet-stream")
        sent = {"Content-Type": kind, "ETag": etag, "Last-Modified": "Mon, 05 Jan 2026 10:00:00 GMT"}
        if path not in self.unsized:
            sent["Content-Length"] = str(len(body))
        return 200, sent, body

    def paths(self) -> list[str]:
        with self.lock:
            return [path for path, _ in self.log]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        site: Site = self.server.site  # type: ignore[attr-defined]
        asked = {name.lower(): value for name, value in self.headers.items()}
        status, headers, body = site.answer(self.path, asked)
        with site.lock:
            site.log.append((self.path, status))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the crawler hung up on an over-long body, as it should

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Site, str]]:
    """The test site and its base URL (``http://127.0.0.1:PORT``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    served = Site(tmp_path / "www")
    server.site = served  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{server.server_address[1]}"
    served.write("/robots.txt", "User-agent: *\nDisallow: /private/\n")
    index = f"<sitemap><loc>{base}/pages.xml</loc></sitemap>"
    served.write("/sitemap.xml", f'<sitemapindex xmlns="http://www.sitemaps.org/">{index}</sitemapindex>')
    locs = [f"{base}/", f"{base}/orphan.html", f"{base}/files/report.pdf", "http://elsewhere.example/x.html"]
    urls = "".join(f"<url><loc> {url} </loc></url>" for url in locs)
    served.write("/pages.xml", f"<urlset>{urls}</urlset>")
    served.write("/", INDEX)
    served.write("/guide/a.html", GUIDE_A)
    served.write("/guide/b/", '<p>B</p><a href="c.md">C</a><a href="../a.html">A</a>')
    served.write("/guide/b/c.md", "# C\n\ntext\n")
    served.write("/new.html", "<p>the new page</p>")
    served.write("/orphan.html", "<p>only the sitemap links me</p>")
    served.write("/private/secret.html", "<p>secret</p>")
    served.write("/big.html", "x" * (2 * LIMIT))
    served.write("/stream.html", "y" * (2 * LIMIT))
    served.write("/canon-alias.html", '<link rel="canonical" href="/canonical.html"><p>same</p>')
    served.write("/canonical.html", '<link rel="canonical" href="/canonical.html"><p>same</p>')
    served.write("/api", '{"json": true}')
    served.types["/api"] = "application/json"
    served.unsized.add("/stream.html")
    served.redirects["/old.html"] = (301, "/new.html")
    served.redirects["/away.html"] = (302, "http://elsewhere.invalid/page.html")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield served, base
    server.shutdown()
    server.server_close()


def settings(base: str, **options: object) -> SiteSettings:
    values: dict[str, object] = {"sitemap": f"{base}/sitemap.xml", "delay_s": 0.0, "max_bytes": LIMIT}
    return SiteSettings(start_urls=(f"{base}/",), **{**values, **options})  # type: ignore[arg-type]


def states(result: CrawlResult, base: str) -> dict[str, str]:
    return {page.url.removeprefix(base): page.state for page in result.pages}


def by_path(result: CrawlResult, base: str) -> dict[str, Page]:
    return {page.url.removeprefix(base): page for page in result.pages}


def test_first_crawl_pages_and_states(site: tuple[Site, str]) -> None:
    served, base = site
    result = crawl(settings(base))
    assert result.error is None
    assert states(result, base) == {
        "/": "fetched",
        "/away.html": "excluded",
        "/big.html": "too_large",
        "/canonical.html": "fetched",
        "/guide/a.html": "fetched",
        "/guide/b/": "fetched",
        "/guide/b/c.md": "fetched",
        "/missing.html": "gone",
        "/new.html": "fetched",
        "/orphan.html": "fetched",
        "/stream.html": "too_large",
    }
    pages = by_path(result, base)
    assert pages["/away.html"].reason == "redirects off the host to http://elsewhere.invalid/page.html"
    assert pages["/big.html"].reason == "20,000 bytes > limit 10,000"
    assert pages["/stream.html"].reason.startswith("more than 10,000 bytes")
    assert pages["/missing.html"].reason == "HTTP 404"
    assert pages["/guide/b/c.md"].content_type == "text/markdown"
    assert pages["/guide/b/c.md"].body == b"# C\n\ntext\n"
    assert pages["/"].content_type == "text/html" and pages["/"].charset == "utf-8"
    assert pages["/"].validators.etag and pages["/"].validators.last_modified
    assert all(page.body is None for page in result.pages if page.state != "fetched")
    assert [page.url for page in result.pages] == sorted(page.url for page in result.pages)
    requested = served.paths()
    assert requested[:4] == ["/robots.txt", "/sitemap.xml", "/pages.xml", "/"]
    # the server saw each URL once; /old.html's redirect to /new.html was one request of ours
    assert len(requested) == len(set(requested)) == result.requests + 1
    # never asked: disallowed by robots, not a page, off the site, or already answered by the canonical alias
    for path in ("/private/secret.html", "/image.png", "/files/report.pdf", "/canonical.html", "/page.html"):
        assert path not in requested


def test_anchors_of_headings(site: tuple[Site, str]) -> None:
    _, base = site
    page = by_path(crawl(settings(base, sitemap=None)), base)["/guide/a.html"]
    assert page.anchors == (
        ("Guide A", "guide-a"),
        ("Install", "install"),
        ("Set up the tool", "user-content-setup"),
        ("C# notes", "c-sharp"),
        ("Docs", "docs"),
    )


def test_second_crawl_is_conditional(site: tuple[Site, str]) -> None:
    served, base = site
    first = crawl(settings(base))
    previous = {page.url: page.validators for page in first.pages if page.state == "fetched"}
    previous[f"{base}/old.html"] = Validators(etag='"was-a-page"')
    previous[f"{base}/private/secret.html"] = Validators(etag='"was-allowed"')
    served.write("/guide/a.html", GUIDE_A.replace("Guide A", "Guide A, revised"))
    (served.root / "orphan.html").unlink()
    served.log.clear()
    second = crawl(settings(base), previous)
    pages = by_path(second, base)
    assert {path: page.state for path, page in pages.items() if page.state != "not_modified"} == {
        "/away.html": "excluded",
        "/big.html": "too_large",
        "/guide/a.html": "fetched",
        "/missing.html": "gone",
        "/old.html": "gone",
        "/orphan.html": "gone",
        "/private/secret.html": "excluded",
        "/stream.html": "too_large",
    }
    assert {path for path, page in pages.items() if page.state == "not_modified"} == {
        "/", "/canonical.html", "/guide/b/", "/guide/b/c.md", "/new.html",
    }  # fmt: skip
    assert pages["/old.html"].reason == f"moved to {base}/new.html"
    assert pages["/private/secret.html"].reason == "disallowed by robots.txt"
    assert pages["/"].body is None and pages["/"].validators == first_page(first, f"{base}/").validators
    assert pages["/guide/a.html"].body is not None and b"revised" in pages["/guide/a.html"].body
    # every unchanged page asked for by its URL answered 304: no body came back for it
    answered = {path: status for path, status in served.log}
    assert all(answered[path] == 304 for path in ("/", "/guide/b/", "/guide/b/c.md", "/canonical.html"))
    assert answered["/guide/a.html"] == 200
    assert "/private/secret.html" not in served.paths()


def first_page(result: CrawlResult, url: str) -> Page:
    return next(page for page in result.pages if page.url == url)


def test_previous_page_now_excluded_by_settings(site: tuple[Site, str]) -> None:
    _, base = site
    previous = {f"{base}/guide/b/": Validators(etag='"x"'), "http://other.example/a.html": Validators()}
    result = crawl(settings(base, sitemap=None, exclude=("/guide/b/*",)), previous)
    pages = by_path(result, base)
    assert pages["/guide/b/"].state == "excluded"
    assert pages["/guide/b/"].reason == "excluded by the include/exclude settings"
    assert pages["/guide/b/"].validators == Validators(etag='"x"')
    assert pages["http://other.example/a.html"].state == "excluded"
    assert "/guide/b/c.md" not in pages


def test_include_globs_limit_the_crawl(site: tuple[Site, str]) -> None:
    _, base = site
    result = crawl(SiteSettings((f"{base}/guide/a.html",), delay_s=0, include=("/guide/*",)))
    assert sorted(states(result, base)) == ["/guide/a.html", "/guide/b/", "/guide/b/c.md"]


def test_budget_cut_is_deterministic(site: tuple[Site, str]) -> None:
    served, base = site
    counted: list[tuple[int, int]] = []
    runs = []
    for _ in range(2):
        served.log.clear()
        result = crawl(settings(base, max_pages=4), progress=lambda *pair: counted.append(pair))
        runs.append((result.pages, served.paths()))
    assert runs[0] == runs[1]
    # level 0 is the start URL then the sitemap's pages; level 1 the start page's links in sorted order
    assert sorted(states(result, base)) == ["/", "/away.html", "/orphan.html"]
    assert served.paths()[3:] == ["/", "/orphan.html", "/api", "/away.html"]
    assert result.requests == 3 + 4
    assert counted[:4] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert any("page budget of 4 reached" in note for note in result.notes)


class FakeTime:
    """A clock that only moves when slept on (or advanced), recording each wait."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def test_delay_between_requests(site: tuple[Site, str]) -> None:
    _, base = site
    fake = FakeTime()

    def working(done: int, budget: int) -> None:
        fake.now += 0.2  # time spent on the page between two requests counts towards the delay

    result = crawl(settings(base, delay_s=0.5), sleep=fake.sleep, clock=fake.clock, progress=working)
    pages_requested = result.requests - 3
    assert fake.waits == pytest.approx([0.5, 0.5, 0.5] + [0.3] * (pages_requested - 1))


def test_crawl_delay_of_robots_wins_when_larger(site: tuple[Site, str]) -> None:
    served, base = site
    rules = "User-agent: other\nCrawl-delay: 9\n\nUser-agent: veracity-sync\nCrawl-delay: 2\n"
    served.write("/robots.txt", rules)
    fake = FakeTime()
    result = crawl(settings(base, delay_s=0.5, sitemap=None), sleep=fake.sleep, clock=fake.clock)
    assert fake.waits == [2.0] * (result.requests - 1)
    assert "/private/secret.html" in served.paths()  # that robots.txt disallows nothing for us


def test_start_url_answering_500_is_a_site_error(site: tuple[Site, str]) -> None:
    served, base = site
    served.statuses["/"] = 500
    result = crawl(settings(base), {f"{base}/guide/a.html": Validators(etag='"e"')})
    assert result.pages == () and result.error == f"start URL {base}/: HTTP 500"
    assert served.paths()[-1] == "/"  # nothing requested after the failed start URL


def test_robots_answering_503_is_a_site_error(site: tuple[Site, str]) -> None:
    served, base = site
    served.statuses["/robots.txt"] = 503
    result = crawl(settings(base))
    assert result.pages == () and result.error is not None and "HTTP 503" in result.error
    assert served.paths() == ["/robots.txt"] and result.requests == 1


def test_missing_robots_allows_everything(site: tuple[Site, str]) -> None:
    served, base = site
    (served.root / "robots.txt").unlink()
    result = crawl(settings(base, sitemap=None))
    assert states(result, base)["/private/secret.html"] == "fetched"


def test_unreachable_site_is_a_site_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = crawl(SiteSettings((f"http://127.0.0.1:{port}/",), delay_s=0, timeout_s=2))
    assert result.pages == () and result.error is not None and "robots.txt" in result.error


def test_urllib_fetch_answers(site: tuple[Site, str]) -> None:
    _, base = site
    missing = urllib_fetch(f"{base}/missing.html", {}, LIMIT, 5)
    assert missing.status == 404 and missing.headers["content-type"] == "text/html"
    moved = urllib_fetch(f"{base}/old.html", {}, LIMIT, 5)
    assert (moved.status, moved.url, moved.body) == (200, f"{base}/new.html", b"<p>the new page</p>")
    away = urllib_fetch(f"{base}/away.html", {}, LIMIT, 5)
    assert away.status == 302 and away.header("Location") == "http://elsewhere.invalid/page.html"
    streamed = urllib_fetch(f"{base}/stream.html", {}, LIMIT, 5)
    assert streamed.truncated and len(streamed.body) == LIMIT
    with pytest.raises(ValueError, match="not an http"):
        urllib_fetch("file:///etc/hostname", {}, LIMIT, 5)


# -- pure logic on fakes ---------------------------------------------------------------------------


def fake_site(answers: Mapping[str, Response | OSError], seen: list[tuple[str, dict[str, str]]]) -> Fetch:
    def fake_fetch(url: str, headers: Mapping[str, str], max_bytes: int, timeout_s: float) -> Response:
        seen.append((url, dict(headers)))
        answer = answers.get(url, Response(404, url, {}))
        if isinstance(answer, OSError):
            raise answer
        return answer

    return fake_fetch


def html(url: str, body: str, **headers: str) -> Response:
    return Response(200, url, {"Content-Type": "text/html", **headers}, body.encode())


def test_fake_unfollowed_redirect_and_conditional_headers() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    answers: dict[str, Response | OSError] = {
        "http://s.test/": html("http://s.test/", '<a href="/a">a</a><a href="/slow">s</a>'),
        "http://s.test/a": Response(301, "http://s.test/a", {"Location": "/b.php"}),
        "http://s.test/b.php": html("http://s.test/b.php", "<p>b</p>", ETAG='"b1"'),
        "http://s.test/slow": TimeoutError(),
    }
    previous = {"http://s.test/a": Validators(etag='"a0"', last_modified="yesterday")}
    result = crawl(SiteSettings(("http://s.test",), delay_s=0), previous, fetch=fake_site(answers, seen))
    assert {p.url: (p.state, p.reason) for p in result.pages} == {
        "http://s.test/": ("fetched", "HTTP 200"),
        "http://s.test/a": ("gone", "moved to http://s.test/b.php"),
        "http://s.test/b.php": ("fetched", "HTTP 200"),
        "http://s.test/slow": ("failed", "timed out"),
    }
    sent = dict(seen)
    assert sent["http://s.test/a"]["If-None-Match"] == '"a0"'
    assert sent["http://s.test/a"]["If-Modified-Since"] == "yesterday"
    assert "If-None-Match" not in sent["http://s.test/"]
    assert sent["http://s.test/"]["User-Agent"] == "veracity-sync"
    assert result.pages[2].validators.etag == '"b1"'


def test_fake_first_start_url_timing_out_is_a_site_error() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    fetch = fake_site({"http://s.test/": TimeoutError()}, seen)
    result = crawl(SiteSettings(("http://s.test/", "http://s.test/b"), delay_s=0), fetch=fetch)
    assert result.error == "start URL http://s.test/: timed out" and result.pages == ()
    assert [url for url, _ in seen] == ["http://s.test/robots.txt", "http://s.test/"]


def test_fake_not_modified_page_follows_its_stored_links() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    answers: dict[str, Response | OSError] = {
        "http://s.test/": Response(304, "http://s.test/", {}),
        "http://s.test/new": Response(200, "http://s.test/new", {"content-type": "text/plain"}, b"hi"),
    }
    previous = {"http://s.test/": Validators(etag='"i"', links=("http://s.test/new",))}
    result = crawl(SiteSettings(("http://s.test/",), delay_s=0), previous, fetch=fake_site(answers, seen))
    assert [(p.url, p.state) for p in result.pages] == [
        ("http://s.test/", "not_modified"),
        ("http://s.test/new", "fetched"),
    ]


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match=r"http://other.test/"):
        SiteSettings(("http://s.test/", "http://other.test/"))
    with pytest.raises(ValueError, match="at least one"):
        SiteSettings(())
    with pytest.raises(ValueError, match=r"ftp://s.test/"):
        SiteSettings(("ftp://s.test/",))
    with pytest.raises(ValueError, match="excluded"):
        SiteSettings(("http://s.test/",), include=("/guide/*",))


def test_url_rules() -> None:
    assert normalize_url("HTTP://Example.ORG:80/a b#frag") == "http://example.org/a%20b"
    assert normalize_url("https://example.org:8443") == "https://example.org:8443/"
    assert normalize_url("http://example.org/p?q=1#x") == "http://example.org/p?q=1"
    paths = ("/", "/a", "/a.md", "/v1.2", "/a.pdf", "/a.png")
    assert [looks_like_page(f"http://e.org{p}") for p in paths] == [True, True, True, True, False, False]
    markup = '<base href="/docs/"><link rel="Canonical" href="x.html"><a href="y#z">'
    facts = read_html(markup, "http://e.org/a/b")
    assert facts.links == ("http://e.org/docs/y",) and facts.canonical == "http://e.org/docs/x.html"
    packed = gzip.compress(b"<urlset><url><loc>http://e.org/a</loc></url></urlset>")
    assert parse_sitemap(packed, 1000) == (False, ["http://e.org/a"])
    with pytest.raises(ValueError):
        parse_sitemap(b"<html></html>", 1000)
