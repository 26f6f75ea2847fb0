"""The page in a real browser: Debian's headless Chromium driven by Playwright, against a real
``veracity serve`` process on loopback.

Chromium comes from the system (``apt-get install chromium fonts-noto-cjk``; ``.ci/run`` installs
both when missing): Playwright's own browser download needs a network. Without Chromium the test
fails under CI (``CI`` set), unless ``VERACITY_NO_BROWSER`` says why it cannot be installed, and
is skipped with that reason elsewhere. Screenshots (desktop and phone width) go to
``$VERACITY_SCREENSHOTS`` (default: the test's temporary folder).
"""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.system_packages import need_chromium
from veracity.kb.local import open_local
from veracity.testing.page_images import image_bytes, render_page
from veracity.testing.pdf_builder import build_pdf

RUNNING = (
    "我们正在使用 2.8 的 Team 计划和旧 SAML 单点登录。升级到 3.2 后，还能继续使用 SAML 吗？"
    "如果成员数超过新计划上限，多出来的成员会被自动删除吗？"
)
RESTRICTED = "2026 年 8 月的 SSO 故障是怎么回事？"
SCAN = image_bytes(
    render_page(["Cold storage tapes are rotated every 90 days."], heading="Tape rotation", dpi=150,
                page_points=(420, 160), margin_points=20)
)  # fmt: skip
VAULT_PDF = [[(18, "Vault backups", 720), (11, "Nightly snapshots are kept for 35 days in the vault.", 690)]]
WEB_URL = "https://docs.example.com/tides/export.html"
WEB_PAGE = f"""---
id: {WEB_URL}
source_url: {WEB_URL}
source_anchors: [["Tide table exports", "tide-table-exports"], ["Retention", "retention"]]
---
# Tide table exports

## Retention

Tide table exports are kept for 14 days.
"""


def _chromium() -> str:
    return need_chromium()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server(served_kb):
    """``(base url, keys, folder)`` of a running ``veracity serve`` on a private copy."""
    folder, keys = served_kb
    port = _free_port()
    command = [sys.executable, "-m", "veracity.cli.main", "serve", "--kb", str(folder), "--port", str(port),
               "--rate-limit", "0"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                f"veracity serve did not become ready:\n{process.stdout.read() if process.stdout else ''}"
            )
        time.sleep(0.3)
    yield base, keys, folder
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _restricted_marks(folder: Path) -> list[str]:
    """Ids and text of the maintainer-only incident document: none may reach a public page."""
    kb = open_local(folder, create=False)
    try:
        document, chunks = kb.document("incident-2026-08-sso")
    finally:
        kb.close()
    return [document.source_id, document.document_id, document.title, *(c.chunk_id for c in chunks),
            *(c.text[:24] for c in chunks)]  # fmt: skip


def _check_box(page, shot: Path) -> None:
    """The first cited box, drawn over the page picture, is where its coordinates put it."""
    from PIL import Image

    box = page.evaluate("state.context.chunk.boxes[0]")
    view = page.locator("#page-view")
    picture = Image.open(io.BytesIO(view.screenshot())).convert("RGB")
    size = view.bounding_box()
    scale = picture.width / size["width"]
    inner = 1 * scale  # the view's own 1px border
    left = inner + box["x0"] * (picture.width - 2 * inner)
    middle = inner + (box["top"] + box["bottom"]) / 2 * (picture.height - 2 * inner)
    edge = picture.getpixel((round(left + 1.5 * scale), round(middle)))
    assert abs(edge[0] - 217) < 40 and abs(edge[1] - 119) < 40 and edge[2] < 60, edge  # the box's border
    outside = picture.getpixel((round(left - 6 * scale), round(middle)))
    assert min(outside) > 200, outside  # the white page just left of it
    view.screenshot(path=str(shot))


def _ask(page, question: str, *, explain: bool = False) -> None:
    page.fill("#question", question)
    if explain:
        page.locator("details summary").click()
        page.check("#explain")
    page.evaluate("document.getElementById('answer').removeAttribute('data-done')")
    page.click("#ask-button")
    page.wait_for_selector("#answer[data-done=true]", timeout=60_000)


def test_page_in_chromium(server, tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    base, keys, folder = server
    shots = Path(os.environ.get("VERACITY_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=args)
        try:
            desktop = browser.new_page(viewport={"width": 1100, "height": 900})
            desktop.goto(f"{base}/")
            assert desktop.evaluate("document.fonts.check('16px \"Noto Sans CJK SC\"', '星舟')")
            desktop.fill("#key", keys.public)
            desktop.click("#key-form button")
            assert desktop.evaluate("sessionStorage.getItem('veracity.key')") == keys.public

            # The running question: an answer badge and two citations.
            _ask(desktop, RUNNING)
            badge = desktop.locator("#badge")
            assert badge.get_attribute("data-status") == "answer" and badge.inner_text() in ("Answer", "回答")
            assert desktop.locator("#claims li").count() == 2
            assert desktop.locator("#citations li").count() == 2
            claim = desktop.evaluate("state.claims[0].text")

            # Citation 1 opens its chunk in context with the quoted span highlighted.
            desktop.click("#claims .cite[data-citation='1']")
            desktop.wait_for_selector("#context:not([hidden]) mark")
            assert desktop.locator("#context mark").inner_text().strip() == claim.strip()
            assert desktop.locator("#context-title").inner_text().startswith("[1] 3.2 单点登录")
            assert desktop.locator("#context .chunk.neighbour").count() >= 1
            desktop.screenshot(path=str(shots / "page-desktop.png"), full_page=True)

            # In Chinese: every label the page writes follows the language, placeholders included
            # (the hints say the version and moment the demo tenant asks with when none is given),
            # and at once: switching relabels what the page already has instead of asking again.
            desktop.wait_for_function("document.getElementById('version').placeholder === 'default 3.2'")
            assert desktop.get_attribute("#as-of", "placeholder") == "default 2026-08-27 16:00 UTC"
            desktop.route("**/v1/documents", lambda route: route.abort())  # a refetch would leave it stale
            desktop.click("#language")
            assert desktop.locator("#badge").inner_text() == "回答"
            labels = desktop.evaluate(
                "[...document.querySelectorAll('[data-i18n]')].filter((n) => n.offsetParent !== null)"
                ".map((n) => n.textContent).concat([document.getElementById('badge').textContent,"
                " document.getElementById('cache').textContent,"
                " document.getElementById('context-where').textContent,"
                " ...[...document.querySelectorAll('#citations .where')].map((n) => n.textContent)])"
            )
            words = re.compile(r"\b(?:and later|up to|p\.|rev)\b|[a-z]{4,}")
            english = [label for label in labels if words.search(label)]
            assert english == [] and "来源" in labels
            assert desktop.get_attribute("#version", "placeholder") == "默认 3.2"
            assert desktop.get_attribute("#as-of", "placeholder") == "默认 2026-08-27 16:00 UTC"
            desktop.screenshot(path=str(shots / "page-zh.png"), full_page=True)
            desktop.unroute("**/v1/documents")
            desktop.click("#language")
            assert desktop.locator("#badge").inner_text() == "Answer"

            # What only a maintainer may see: an abstain, and nothing of it in the page.
            _ask(desktop, RESTRICTED, explain=True)
            assert desktop.locator("#badge").get_attribute("data-status") == "abstain"
            assert "nothing you may see covers this" in desktop.locator("#reasons").inner_text()
            assert desktop.locator("#explain-panel").is_hidden()  # an asker's key gets no explain table
            dom = desktop.content()
            leaked = [mark for mark in _restricted_marks(folder) if mark in dom]
            assert leaked == []

            # Phone width.
            phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
            phone.goto(f"{base}/")
            phone.fill("#key", keys.public)
            phone.click("#key-form button")
            _ask(phone, RUNNING)
            assert phone.locator("#citations li").count() == 2
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390
            phone.click("#claims .cite[data-citation='1']")
            phone.wait_for_selector("#context:not([hidden]) mark")
            phone.screenshot(path=str(shots / "page-phone.png"), full_page=True)

            # A conversation: the follow-up is asked as resolved against the turn before, answered
            # from the right document; a thumbs down with a comment is recorded.
            desktop.uncheck("#explain")
            desktop.click("#new-conversation")
            _ask(desktop, "2.8 的 Team 计划能用 SAML 吗？")
            assert desktop.locator("#history li").count() == 0
            _ask(desktop, "那 3.2 呢？")
            assert desktop.locator("#resolved").inner_text().endswith("3.2 的 Team 计划能用 SAML 吗？")
            assert desktop.locator("#history li").count() == 1
            assert "3.2 单点登录（SSO）常见问题" in desktop.locator("#citations").inner_text()
            desktop.click("#feedback-down")
            desktop.fill("#feedback-comment", "想问的是 Enterprise 计划")
            desktop.click("#feedback-send")
            desktop.wait_for_selector("#feedback-done:not([hidden])")
            # one rating per answer: a second click cannot turn the thumbs-down into a thumbs-up
            assert desktop.is_disabled("#feedback-up") and desktop.is_disabled("#feedback-down")
            desktop.click("#claims .cite[data-citation='1']")
            desktop.wait_for_selector("#context:not([hidden])")
            desktop.keyboard.press("Escape")  # closes the citation as its close button does
            assert desktop.is_hidden("#context")
            desktop.route("**/v1/conversations/**", lambda route: route.abort())  # the server is gone
            desktop.fill("#question", "那 2.8 呢？")
            desktop.click("#ask-button")
            desktop.wait_for_selector("#error:not([hidden])")
            assert "did not answer" in desktop.locator("#error").inner_text()  # not "Failed to fetch"
            desktop.unroute("**/v1/conversations/**")
            # a follow-up that carries only a version says the version its question text does not show
            desktop.click("#new-conversation")
            desktop.fill("#version", "2.8")
            _ask(desktop, "Team 计划能用 SAML 吗？")
            desktop.fill("#version", "")
            _ask(desktop, "那 3.2 呢？")
            assert desktop.locator("#resolved").inner_text().endswith("Team 计划能用 SAML 吗？ · version 3.2")
            # another key is another asker: nothing of the last key's conversation stays, and asking
            # again starts a conversation of its own (it used to answer 404 for the old one)
            desktop.click("#key-forget")
            assert desktop.locator("#history li").count() == 0 and desktop.is_hidden("#answer")
            desktop.fill("#key", keys.public)
            desktop.click("#key-form button")
            _ask(desktop, RUNNING)
            assert desktop.is_hidden("#error") or not desktop.locator("#error").inner_text().strip()
            desktop.screenshot(path=str(shots / "page-conversation.png"), full_page=True)

            # An operator sees the explain table, and withdraws a document after confirming.
            operator = browser.new_page(viewport={"width": 1100, "height": 900})
            operator.goto(f"{base}/")
            operator.fill("#key", keys.operator)
            operator.click("#key-form button")
            _ask(operator, RUNNING, explain=True)
            operator.wait_for_selector("#explain-panel:not([hidden]) tbody tr")
            assert "cited [1]" in operator.locator("#explain-table").inner_text()
            operator.goto(f"{base}/operator")
            operator.wait_for_selector("#documents tbody tr")
            operator.wait_for_selector("#feedback-table tbody tr")
            rated = operator.locator("#feedback-table tbody").inner_text()
            assert "想问的是 Enterprise 计划" in rated and "3.2 的 Team 计划能用 SAML 吗？" in rated
            row = operator.locator("#documents tr[data-id='faq-3.2-sso']")
            assert row.get_attribute("data-status") == "active"
            dialogs: list[str] = []
            operator.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
            row.locator("button[data-withdraw]").click()
            operator.wait_for_selector("#documents tr[data-id='faq-3.2-sso'][data-status='withdrawn']")
            assert dialogs and "faq-3.2-sso" in dialogs[0]

            # After the withdraw, the running question no longer cites the withdrawn document.
            _ask(desktop, RUNNING)
            assert "3.2 单点登录（SSO）常见问题" not in desktop.locator("#citations").inner_text()

            # The operator page: the held-back community post with its signals, a key made (its
            # secret shown once) and listed, and an upload that becomes answerable.
            operator.wait_for_selector("#quarantine-table tbody tr[data-id='community-qa-injection']")
            operator.fill("#key-name", "support-bot")
            operator.fill("#key-roles", "public")
            operator.click("#key-create button[type=submit]")
            operator.wait_for_selector("#key-secret:not([hidden])")
            assert "vk_" in operator.locator("#key-secret").inner_text()
            operator.wait_for_selector("#keys-table tbody tr >> text=support-bot")
            operator.set_input_files(
                "#upload-files",
                files=[
                    {"name": "tide-export.md", "mimeType": "text/markdown", "buffer": WEB_PAGE.encode()},
                    {"name": "vault.pdf", "mimeType": "application/pdf", "buffer": build_pdf(VAULT_PDF)},
                    {"name": "tapes.png", "mimeType": "image/png", "buffer": SCAN},
                ],
            )
            operator.click("#upload-button")
            operator.wait_for_selector("#upload-report[data-done=true]")
            assert "added 3" in operator.locator("#upload-report").inner_text()
            operator.wait_for_selector(f"#documents tr[data-id='{WEB_URL}']")
            operator.screenshot(path=str(shots / "operator.png"), full_page=True)

            # A page of a website source (veracity sync): its citation links to the cited heading.
            later = (datetime.now(UTC) + timedelta(minutes=2)).isoformat()  # the demo asks at 2026-08-27
            desktop.evaluate(f"document.getElementById('as-of').value = {later!r}")
            _ask(desktop, "How long are tide table exports kept?")
            link = desktop.locator("#citations a.source-link")
            assert link.count() == 1 and link.get_attribute("href") == f"{WEB_URL}#retention"
            assert link.get_attribute("rel") == "noopener noreferrer"

            # A PDF's citation, and a scanned image's (read by OCR), open the page itself with the cited
            # lines boxed: the box drawn in the screenshot sits where the citation's coordinates say.
            for question, shot in (
                ("How long are nightly snapshots kept in the vault?", "page-region.png"),
                ("How often are cold storage tapes rotated?", "image-region.png"),
            ):
                _ask(desktop, question)
                desktop.click("#claims .cite[data-citation='1']")
                desktop.wait_for_selector("#page-view[data-loaded=true]")
                _check_box(desktop, shots / shot)
        finally:
            browser.close()
