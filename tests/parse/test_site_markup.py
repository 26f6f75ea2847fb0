"""Doc-site markup (MkDocs, VitePress, Docusaurus, MyST) is cleaned to plain Markdown, content kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from veracity.parse.chunking import chunk_for_index
from veracity.parse.documents import make_document
from veracity.parse.errors import TemplateSourceError
from veracity.parse.parsers import parse_file, parse_text
from veracity.parse.site_markup import clean_inline_markup, clean_site_markup, looks_like_template

SITES = Path(__file__).parent / "sites"

LEAKS = {
    "admonition or tab marker": re.compile(r"^\s*(?:!!!|\?\?\?|===)", re.MULTILINE),
    "container fence": re.compile(r"^\s*:::", re.MULTILINE),
    "heading anchor or attribute list": re.compile(r"\{\s*:?\s*[#.][\w-]+[^}]*\}"),
    "snippet include": re.compile(r"--8<--"),
    "script, style or template": re.compile(r"<(?:script|style|template)\b", re.IGNORECASE),
    "Vue or JSX component": re.compile(r"</?[A-Z][\w.]*[\s/>]"),
    "MDX import": re.compile(r"^import\s", re.MULTILINE),
    "HTML comment": re.compile(r"<!--"),
    "icon shortcode": re.compile(r":material-[\w-]+:"),
}


def leaks(text: str) -> list[str]:
    return [name for name, pattern in LEAKS.items() if pattern.search(text)]


def test_mkdocs_admonitions_and_tabs_keep_title_and_dedented_body() -> None:
    text = (
        '!!! note "Python versions"\n\n    Needs 3.10.\n\n'
        '=== "pip"\n\n    ```bash\n    pip install x\n    ```\n\n'
        "??? tip\n    Collapsed body.\n\nAfter."
    )
    assert clean_site_markup(text) == (
        "Python versions\n\nNeeds 3.10.\n\npip\n\n```bash\npip install x\n```\n\nCollapsed body.\n\nAfter."
    )


def test_nested_admonition_inside_a_tab_inside_a_list_item() -> None:
    text = '1. Step\n\n    === "A"\n\n        !!! example\n\n            `a: 1` works.\n'
    cleaned = clean_site_markup(text)
    assert "    A" in cleaned and "    `a: 1` works." in cleaned
    assert not leaks(cleaned)


def test_containers_keep_content_and_custom_title_and_drop_fences() -> None:
    text = (
        "::: tip 提示\n代理需要 Node 18。\n:::\n\n"
        "::: details Click me {open}\nHidden.\n:::\n\n"
        ":::note[Needs rights]\nWrite access.\n:::\n\n"
        "::::: info\n:::{admonition} Nested\nInner.\n:::\n:::::\n\n"
        "::: warning\nNo title.\n:::"
    )
    cleaned = clean_site_markup(text)
    assert cleaned.strip().split("\n\n") == [
        "提示", "代理需要 Node 18。", "Click me", "Hidden.", "Needs rights", "Write access.",
        "Nested", "Inner.", "No title.",
    ]  # fmt: skip


def test_autodoc_placeholders_and_their_options_are_dropped() -> None:
    text = (
        "## Helper Functions\n\n::: httpx.request\n    :docstring:\n\n"
        "::: pkg.module.Client\n    options:\n      show_source: false\n\nText after.\n\n"
        "::: tip Note\nA tip stays.\n:::\n"
    )
    cleaned = clean_site_markup(text)
    assert "docstring" not in cleaned and "show_source" not in cleaned and "httpx.request" not in cleaned
    assert "Text after." in cleaned and "Note" in cleaned and "A tip stays." in cleaned


def test_anchors_attribute_lists_icons_and_inline_components_go_code_stays() -> None:
    line = '## Install { #install .big } <Badge type="tip" text="2.4" /> :material-check: `{#keep}` {{ $x }}'
    assert clean_inline_markup(line) == "## Install `{#keep}`"
    assert clean_inline_markup("[Start](x.md){ .md-button } and <kbd>Ctrl</kbd>") == "[Start](x.md) and Ctrl"
    assert (
        clean_inline_markup("See <https://example.com> or a < b > c")
        == "See <https://example.com> or a < b > c"
    )


def test_script_style_comments_imports_and_snippets_are_dropped() -> None:
    text = (
        "import Tabs from '@theme/Tabs';\nimport {\n  A,\n  B,\n} from './x';\n"
        "export const meta = {\n  a: 1,\n};\n\n"
        "<script setup>\nconst a = 1\n\nconst b = 2\n</script>\n\n"
        "<style scoped>\n.a { color: red }\n</style>\n\n"
        "<!-- a note\nover lines -->\n{/* mdx comment */}\n\n"
        '--8<-- "snippets/a.md"\n\n--8<--\nb.md\nc.md\n--8<--\n\n'
        '```python\n--8<-- "example.py"\n```\n\n'
        "{* ../../docs_src/first_steps/tutorial001_py310.py hl[3] *}\n\n{!./src/example.md!}\n\n"
        "Kept."
    )
    assert clean_site_markup(text).strip() == "Kept."
    # an include marker is only markup on a line of its own; in prose or code it is text
    assert clean_site_markup("Write {* x *} here.").strip() == "Write {* x *} here."


def test_jsx_tags_go_and_the_markdown_between_them_stays() -> None:
    text = '<Tabs\n  groupId="os">\n<TabItem value="linux" label="Linux">\n\nOn Linux.\n\n</TabItem>\n</Tabs>'
    assert clean_site_markup(text).strip() == "On Linux."


def test_fenced_code_is_kept_verbatim() -> None:
    code = "```html\n<script setup>\n!!! note\n::: tip\n{#id} <Badge />\n```"
    assert clean_site_markup(code) == code
    directive = "```{note}\n:class: dropdown\nMyST body.\n```"
    assert clean_site_markup(directive).strip() == "MyST body."


def test_templates_are_recognized_outside_code() -> None:
    assert looks_like_template('{% extends "base.html" %}\n{% block content %}x{% endblock %}')
    assert not looks_like_template("<html><body><pre>{% if x %}</pre><p>Jinja docs</p></body></html>")
    with pytest.raises(TemplateSourceError, match="template"):
        parse_text("{% block footer %}<footer></footer>{% endblock %}", "html")


@pytest.mark.parametrize("site", ["mkdocs", "vitepress"])
def test_example_sites_leave_no_markup_in_bodies_titles_or_chunks(site: str) -> None:
    files = sorted((SITES / site).rglob("*.md"))
    assert files
    parsed_any = 0
    for file in files:
        if any(part.startswith(".") for part in file.relative_to(SITES / site).parts):
            continue
        try:
            parsed = parse_file(file)
        except Exception as exc:  # the VitePress home page holds no text, only front matter
            assert "no text" in str(exc), file
            continue
        parsed_any += 1
        assert not leaks(parsed.body), (file, leaks(parsed.body))
        assert parsed.title is None or not leaks(parsed.title)
        document = make_document(
            {"id": file.stem, "revision": "1", "title": parsed.title or file.stem, "tenant": "t",
             "valid_from": "2026-01-01", "status": "active", "visibility": "public", "trust": "official"},
            parsed.body,
        )  # fmt: skip
        for chunk in chunk_for_index(document):
            assert not leaks(chunk.text), (file, chunk.text)
            assert all(not leaks(heading) for heading in chunk.heading_path)
            assert len(chunk.text) <= 800
    assert parsed_any >= 3
