"""``veracity sync`` of a documentation site served from 127.0.0.1 by the test itself.

The site has a robots.txt, a sitemap, nested pages, a redirect, a 404 link, a page over the
size limit and pages that change between syncs. After each sync the active documents are
exactly the site's pages; unchanged pages are neither downloaded nor read; a site that cannot
be reached withdraws nothing; a citation of a page links to it with the cited heading's anchor.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.sync.test_web import Handler, Site
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import open_kb, open_or_create_kb
from veracity.kb.keys import create_key
from veracity.kb.local import LocalKnowledgeBase
from veracity.model.contracts import Principal, Status
from veracity.service.core.gateway import Gateway
from veracity.service.core.served import cited_url
from veracity.sync.config import parse_sources
from veracity.sync.run import sync_sources

SITES = Path(__file__).parents[1] / "parse" / "sites"
QUESTIONS = ("How long does Tidewater keep daily snapshots?", "Tidewater 默认保留每日快照多少天？")
GUIDE = """<html><head><title>Backups</title></head><body>
<nav><a href="/">Home</a> <a href="/guide/restore.html">Restore</a></nav>
<main>
<h1 id="backups">Backups</h1>
<p>Backups run every night.</p>
<h2 id="retention">Retention<a class="headerlink" href="#retention">¶</a></h2>
<p>Daily snapshots are kept for {days} days.</p>
</main>
<footer>© Example Docs · cookie settings</footer>
</body></html>"""


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Site, str, ThreadingHTTPServer]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    site = Site(tmp_path / "www")
    server.site = site  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{server.server_address[1]}"
    import threading

    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield site, base, server
    server.shutdown()
    server.server_close()


def docs_site(site: Site, base: str) -> None:
    site.write("/robots.txt", "User-agent: *\nDisallow: /private/\n")
    site.write(
        "/sitemap.xml", f"<urlset><url><loc>{base}/</loc></url><url><loc>{base}/faq.html</loc></url></urlset>"
    )
    site.write(
        "/",
        "<html><body><main><h1>Example Docs</h1><p>Start with the guide.</p>"
        '<a href="/guide/backups.html">Backups</a> <a href="/old.html">Old</a> '
        '<a href="/missing.html">Missing</a> <a href="/private/plan.html">Plan</a> '
        '<a href="/huge.html">Huge</a></main></body></html>',
    )
    site.write("/guide/backups.html", GUIDE.format(days=30))
    site.write("/guide/restore.html", "<h1>Restore</h1><p>Restores take one hour.</p>")
    site.write("/faq.html", "<h1>FAQ</h1><p>Only the sitemap links to this page.</p>")
    site.write("/moved.html", "<h1>Moved</h1><p>The old page lives here now.</p>")
    site.write("/private/plan.html", "<h1>Plan</h1><p>Secret roadmap.</p>")
    site.write("/huge.html", "<h1>Huge</h1><p>" + "word " * 4000 + "</p>")
    site.redirects["/old.html"] = (301, "/moved.html")


def spec(base: str, tmp_path: Path) -> tuple:
    text = f"sources:\n  - name: site\n    site: {base}/\n    sitemap: {base}/sitemap.xml\n    delay: 0\n"
    return parse_sources(text + "    max_bytes: 10000\n", base=tmp_path)


def active(kb) -> dict[str, str]:
    return {d.source_id: d.body for d in kb.catalog.documents() if d.status is Status.ACTIVE}


def test_site_sync_follows_the_site(served, tmp_path: Path) -> None:
    site, base, server = served
    docs_site(site, base)
    kb = open_or_create_kb(tmp_path / "kb", FakeEmbedder())
    work = tmp_path / "sync"
    (first,) = sync_sources(kb, spec(base, tmp_path), work=work)
    assert first.error is None
    pages = {f"{base}/", f"{base}/guide/backups.html", f"{base}/guide/restore.html", f"{base}/faq.html",
             f"{base}/moved.html"}  # fmt: skip
    assert set(active(kb)) == pages
    assert "/private/plan.html" not in site.paths()  # robots.txt: never requested
    assert any("huge.html" in where and "limit" in why for where, why in first.notes)
    assert any("missing.html" in where for where, _ in first.notes)
    guide = active(kb)[f"{base}/guide/backups.html"]
    assert "30 days" in guide and "cookie" not in guide and "Restore" not in guide  # nav and footer dropped

    site.log.clear()
    (second,) = sync_sources(kb, spec(base, tmp_path), work=work)
    assert (second.read, second.changes, second.chunks_embedded) == (0, 0, 0)
    assert second.counts["fetched"] == 0 and second.counts["not_modified"] == 5  # conditional re-fetches

    site.write("/guide/backups.html", GUIDE.format(days=45))
    (site.root / "faq.html").unlink()  # now 404
    site.write("/robots.txt", "User-agent: *\nDisallow: /private/\nDisallow: /guide/restore.html\n")
    (third,) = sync_sources(kb, spec(base, tmp_path), work=work)
    assert third.read == 1 and third.revised == (f"{base}/guide/backups.html",)
    assert sorted(third.withdrawn) == [f"{base}/faq.html", f"{base}/guide/restore.html"]
    assert set(active(kb)) == pages - {f"{base}/faq.html", f"{base}/guide/restore.html"}
    assert "45 days" in active(kb)[f"{base}/guide/backups.html"]

    server.shutdown()  # the site is down: nothing is withdrawn
    server.server_close()
    (down,) = sync_sources(kb, spec(base, tmp_path), work=work)
    assert down.error is not None and down.changes == 0
    assert set(active(kb)) == pages - {f"{base}/faq.html", f"{base}/guide/restore.html"}


def test_a_citation_links_to_the_page_and_heading(served, tmp_path: Path) -> None:
    site, base, _ = served
    docs_site(site, base)
    folder = tmp_path / "kb"
    kb = open_or_create_kb(folder, FakeEmbedder())
    sync_sources(kb, spec(base, tmp_path), work=tmp_path / "sync")
    document = next(d for d in kb.catalog.documents() if d.source_id.endswith("/guide/backups.html"))
    chunk = next(c for c in kb.catalog.chunks(document.document_id) if "snapshots" in c.text)
    assert cited_url(document, chunk.heading_path) == f"{base}/guide/backups.html#retention"
    kb.catalog.store.close()

    local = LocalKnowledgeBase(open_kb(folder), folder)
    key = create_key(local, tenant="default", roles=["public"]).secret
    local.close()
    gate = Gateway.open(folder)
    try:
        # the service asks as of now to the minute; the pages became valid when they were fetched
        later = (datetime.now(UTC) + timedelta(minutes=2)).isoformat()
        served_answer = gate.ask(gate.admit(key), "How long are daily snapshots kept?", as_of=later)
        data = served_answer.as_dict()
        assert data["citations"], (data["reasons"], data.get("reason_words"))
        cited = {c["url"] for c in data["citations"]}
        assert f"{base}/guide/backups.html#retention" in cited
    finally:
        gate.close()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")
@pytest.mark.parametrize("folder", ["mkdocs/docs", "vitepress"])
def test_one_docs_folder_as_git_and_as_website_gives_the_same_chunks(
    served, tmp_path: Path, folder: str
) -> None:
    site, base, _ = served
    root = SITES / folder
    docs = sorted(
        p.relative_to(root) for p in root.rglob("*.md") if not p.relative_to(root).parts[0].startswith(".")
    )
    repository = tmp_path / "repo"
    shutil.copytree(root, repository)
    identity = ["-c", "user.email=d@example.com", "-c", "user.name=D"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], [*identity, "commit", "-q", "-m", "docs"]):
        subprocess.run(["git", *command], cwd=repository, check=True, capture_output=True)
    for path in docs:
        site.write(f"/{path.as_posix()}", (root / path).read_text(encoding="utf-8"))
    locs = "".join(f"<url><loc>{base}/{path.as_posix()}</loc></url>" for path in docs)
    site.write("/sitemap.xml", f"<urlset>{locs}</urlset>")
    sources = parse_sources(
        f"sources:\n  - {{name: repo, git: {repository}}}\n"
        f"  - {{name: web, site: '{base}/', sitemap: '{base}/sitemap.xml', delay: 0}}\n",
        base=tmp_path,
    )
    kbs = {}
    for spec_ in sources:
        kb = open_or_create_kb(tmp_path / spec_.name, FakeEmbedder())
        (first,) = sync_sources(kb, [spec_], work=tmp_path / f"{spec_.name}-sync")
        (second,) = sync_sources(kb, [spec_], work=tmp_path / f"{spec_.name}-sync")
        assert first.error is None and first.read == len(docs) and first.added  # a home template: skipped
        assert second.changes == 0 and second.read == 0
        kbs[spec_.name] = kb
    chunks = {
        name: sorted(c.text for d in kb.catalog.documents() for c in kb.catalog.chunks(d.document_id))
        for name, kb in kbs.items()
    }
    assert chunks["repo"] == chunks["web"] and chunks["repo"]
    asker, later = Principal.of("default", "public"), datetime.now(UTC) + timedelta(minutes=2)
    answered = 0
    for question in QUESTIONS:
        cited = {}
        for name, kb in kbs.items():
            answer = kb.ask(question, asker, None, later)
            texts = {
                c.chunk_id: c.text for d in kb.catalog.documents() for c in kb.catalog.chunks(d.document_id)
            }
            cited[name] = (answer.status, [texts[c.chunk_id] for c in answer.citations])
        assert cited["repo"] == cited["web"], question
        answered += bool(cited["repo"][1])
    assert answered  # the same answers, and not only the same abstentions
