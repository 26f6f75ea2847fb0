"""The page's script and icon without a browser: the stream's ``error`` event ends the pending
answer, and ``/favicon.ico`` is served (the browser tests are in test_page.py, with Chromium)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from veracity.service.page import STATIC

# A DOM just large enough for common.js and page.js to load and run one handler.
_DOM = """
const nodes = {};
function node(id) {
  if (!(id in nodes)) nodes[id] = { id, hidden: false, dataset: {}, textContent: "", disabled: false,
    addEventListener() {}, replaceChildren() {}, append() {}, scrollIntoView() {} };
  return nodes[id];
}
globalThis.Node = class {};
globalThis.document = { getElementById: node, querySelectorAll: () => [], documentElement: {},
  createElement: () => node(Symbol()), createTextNode: (text) => text };
globalThis.sessionStorage = { getItem: () => null, setItem() {}, removeItem() {} };
globalThis.navigator = { language: "en" };
"""


def _error_handler() -> str:
    script = (STATIC / "page.js").read_text(encoding="utf-8")
    handlers = re.search(r"const HANDLERS = \{(.*?)\};", script, re.S)
    assert handlers, "page.js keeps its event handlers in HANDLERS"
    entry = re.search(r"\berror:\s*([A-Za-z_]\w*)", handlers.group(1))
    assert entry, "the error event has a named handler"
    body = re.search(rf"function {entry.group(1)}\([^)]*\) \{{(.*?)\n\}}", script, re.S)
    assert body, f"{entry.group(1)} is defined in page.js"
    return body.group(1)


def test_the_stream_error_handler_ends_the_pending_answer_and_shows_the_error() -> None:
    handler = _error_handler()
    assert "showError(" in handler and '"answer"' in handler and "hidden = true" in handler


def test_the_stream_error_handler_runs_on_a_pending_answer() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the handler's text is checked by the test above")
    script = "\n".join(
        [
            _DOM,
            (STATIC / "common.js").read_text(encoding="utf-8"),
            (STATIC / "page.js").read_text(encoding="utf-8"),
            "resetAnswer();",
            'const pending = node("badge").dataset.status;',
            'HANDLERS.error({ status: 422, detail: "the question is empty; ask something" });',
            "console.log(JSON.stringify({ pending, answer: node('answer').hidden,",
            "  shown: !node('error').hidden, error: node('error').textContent }));",
        ]
    )
    run = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen == {
        "pending": "pending", "answer": True, "shown": True,
        "error": "422: the question is empty; ask something",
    }  # fmt: skip


def test_the_favicon_is_served_and_linked(client) -> None:
    http, _ = client
    icon = http.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content.lstrip().startswith(b"<svg")
    for page in ("/", "/operator"):
        assert '<link rel="icon" href="/static/favicon.svg"' in http.get(page).text
    assert http.get("/static/favicon.svg").status_code == 200
