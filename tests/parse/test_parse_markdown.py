"""Markdown to structure nodes: front matter, heading paths, tables, offsets, fuzzing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veracity.model.errors import ValidationError
from veracity.parse.front_matter import load_markdown_file
from veracity.parse.markdown import parse_markdown
from veracity.parse.nodes import NodeKind
from veracity.parse.parsers import parse_file
from veracity.text.normalize import normalize_body

SAMPLE = """---
id: install-guide
title: 安装指南
---

# 安装指南

开始之前请阅读本页。

## 系统要求

| 计划 | 单点登录 |
| --- | --- |
| Team | OIDC |
| Enterprise | SAML 和 OIDC |

- Python 3.11
  - 64 位系统
- 2 GB 内存

## 安装

```bash
pip install starship
```

> 提示：安装后重启。
"""


def test_nodes_have_kinds_heading_paths_and_table_cells(consistent: Callable[..., None]) -> None:
    parsed = parse_markdown(SAMPLE, source="guide.md")
    assert parsed.metadata == {"id": "install-guide", "title": "安装指南"}
    assert parsed.title == "安装指南"
    kinds = [node.kind for node in parsed.nodes]
    assert kinds == [
        NodeKind.HEADING,
        NodeKind.PARAGRAPH,
        NodeKind.HEADING,
        NodeKind.TABLE,
        NodeKind.LIST,
        NodeKind.HEADING,
        NodeKind.CODE,
        NodeKind.PARAGRAPH,
    ]
    table = parsed.nodes[3]
    assert table.heading_path == ("安装指南", "系统要求")
    assert table.header == ("计划", "单点登录")
    assert table.cells()[1] == (("计划", "Enterprise"), ("单点登录", "SAML 和 OIDC"))
    assert parsed.nodes[6].heading_path == ("安装指南", "安装")
    assert parsed.nodes[6].text.startswith("```bash")
    assert [node.level for node in parsed.nodes if node.kind is NodeKind.HEADING] == [1, 2, 2]
    consistent(parsed)


def test_body_is_the_normalized_source_so_identity_matches_the_front_matter_loader() -> None:
    corpus = Path(__file__).resolve().parents[2] / "src" / "veracity" / "fixtures" / "starship"
    for path in sorted(corpus.glob("*.md")):
        parsed = parse_file(path)
        document = load_markdown_file(path)
        assert parsed.body == document.body
        assert parsed.metadata["id"] == document.source_id


def test_demo_corpus_nodes_agree_with_the_structural_chunker(consistent: Callable[..., None]) -> None:
    corpus = Path(__file__).resolve().parents[2] / "src" / "veracity" / "fixtures" / "starship"
    for path in sorted(corpus.glob("*.md")):
        consistent(parse_file(path))


def test_title_falls_back_to_the_first_level_one_heading() -> None:
    assert parse_markdown("## Intro\n\n# Real title\n\ntext").title == "Real title"
    assert parse_markdown("plain text only").title is None


def test_unclosed_front_matter_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="never closed"):
        parse_markdown("---\nid: x\n\n# Title\n", source="broken.md")


_MARKDOWN_PIECES = st.sampled_from(
    [
        "# ", "## ", "###### ", "####### ", "#", "\n", "\n\n", "\r\n", " ", "   ", "\t",
        "- ", "* ", "+ ", "1. ", "2) ", "> ", "| a | b |", "|---|---|", "| 1 | 2 |",
        "```", "~~~", "    code", "---", "===", "text", "中文", "单点登录", "<div>", "</div>",
        "\\", "`", "*", "_", "[x](y)", "\u3000", "\u00a0", "\u2028", "\x0c", "\u0301", "e\u0301",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_MARKDOWN_PIECES, st.text(max_size=6)), max_size=40).map("".join))
def test_fuzz_markdown_never_crashes_and_offsets_slice_back(text: str) -> None:
    try:
        parsed = parse_markdown(text, source="fuzz.md")
    except ValidationError:
        return
    assert normalize_body(parsed.body) == parsed.body
    for node in parsed.nodes:
        assert parsed.body[node.start : node.end] == node.text
        assert node.text.strip() == node.text != ""


def _block_tokens(parser, text: str) -> list[tuple]:
    tokens = parser.parse(text)
    return [(t.type, t.tag, t.map, t.level, t.nesting, t.content, t.info, t.markup) for t in tokens]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_MARKDOWN_PIECES, st.text(max_size=6)), max_size=40).map("".join))
def test_block_parse_without_inline_runs_gives_the_full_parse_blocks(text: str) -> None:
    # the parser skips parsing inline runs into children; every block token, and each inline
    # token's content (headings, table cells), must be what the full CommonMark parse gives
    from markdown_it import MarkdownIt

    from veracity.parse.markdown import _MARKDOWN

    full = MarkdownIt("commonmark").enable("table")
    for sample in (text, SAMPLE, "# **粗体** 标题 [链接](x)\n\n| `a|b` | *c* |\n|---|---|\n| 1 | 2 |\n"):
        assert _block_tokens(_MARKDOWN, sample) == _block_tokens(full, sample)
