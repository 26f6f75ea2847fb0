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
  createElement: () => node(Symbol()), createTextNode: (text) => text, addEventListener() {} };
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


_ELEMENTS = """
globalThis.Node = class {};
class Element extends Node {
  constructor(tag) { super(); this.tag = tag; this.children = []; this.attributes = {}; this.dataset = {}; }
  set className(value) { this.attributes.class = value; }
  setAttribute(name, value) { this.attributes[name] = value; }
  addEventListener() {}
  append(...nodes) { this.children.push(...nodes); }
}
globalThis.document = { createElement: (tag) => new Element(tag), createTextNode: (text) => text,
  getElementById: () => new Element("div"), querySelectorAll: () => [], documentElement: {} };
globalThis.sessionStorage = { getItem: () => null, setItem() {}, removeItem() {} };
globalThis.navigator = { language: "en" };
function shape(node) {
  return typeof node === "string" ? node
    : { tag: node.tag, class: node.attributes.class, children: node.children.map(shape) };
}
"""


def test_a_table_claim_renders_as_a_table_with_the_quoted_row_marked() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    text = "Credits:\n| Plan | SLA | Credit |\n|---|---|---|\n"
    text += "| Team | 99.9% | 10% |\n| Enterprise | 99.95% | 25% |"
    row = text.index("| Enterprise")
    script = "\n".join(
        [
            _ELEMENTS,
            (STATIC / "common.js").read_text(encoding="utf-8"),
            f"const text = {json.dumps(text)};",
            "const parts = textParts(text);",
            f"const table = tableOf(parts[1].table, [[{row}, {row + 5}]]);",
            "console.log(JSON.stringify({ kinds: parts.map((p) => p.table ? 'table' : p.text),",
            "  table: shape(table) }));",
        ]
    )
    result = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30, check=True)
    data = json.loads(result.stdout)
    assert data["kinds"] == ["Credits:\n", "table"]
    table = data["table"]["children"][0]
    head, body = table["children"]
    assert [cell["children"] for cell in head["children"][0]["children"]] == [["Plan"], ["SLA"], ["Credit"]]
    assert [row.get("class") for row in body["children"]] == [None, "marked"]
    assert body["children"][1]["children"][0]["children"] == ["Enterprise"]
