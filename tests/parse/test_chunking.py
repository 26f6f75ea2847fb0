"""Chunking: fixed windows, Markdown structure, contextual prefixes, ids, facts."""

from __future__ import annotations

import dataclasses
import re
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veracity.model.contracts import Chunk, ChunkKind, Document
from veracity.model.errors import ConfigError, ValidationError
from veracity.parse.chunking import (
    CHUNK_SIZE,
    Strategy,
    chunk_document,
    chunk_for_index,
    chunk_id_for,
    context_prefix,
    fact_chunk_map,
    oversize_chunks,
    parse_strategy,
    with_context,
)
from veracity.parse.documents import make_document
from veracity.text.normalize import normalize_body

TITLE = "星舟工作台 2.x 升级到 3.2 迁移指南"

TABLE = """| 配置项 | 2.x 默认值 | 3.2 默认值 |
| --- | --- | --- |
| max_retries | 3 | 5 |
| timeout_ms | 1000 | 3000 |"""

CODE = """```bash
# 先备份旧配置
starship backup --all --out /var/backups/starship
starship migrate --from 2.8 --to 3.2
```"""

LONG_PARAGRAPH = (
    "迁移完成后，成员的角色会按照新的权限模型重新映射。"
    "原来的管理员角色会拆分为空间管理员和计费管理员。"
    "访客账号在 3.2 中默认只读，需要管理员手动授予编辑权限！"
    "如果成员属于多个团队，系统会合并他们的权限并保留最高级别。"
    "停用的成员不会被迁移，他们的历史记录仍然保留在审计日志中。"
    "你是否需要在迁移前导出成员列表？"
    "建议在维护窗口内执行成员迁移，以免影响正在进行的协作。"
)

GUIDE = f"""# {TITLE}

本文说明如何把星舟工作台从 2.x 升级到 3.2。升级前请阅读全部步骤。

## 配置变化

3.2 调整了两个默认值，下表列出差异。

{TABLE}

升级后请检查自定义配置是否仍然生效。

## 执行迁移

在升级前先备份，然后运行迁移命令：

{CODE}

- 迁移期间服务只读
- 迁移完成后重启工作台

## 成员处理

{LONG_PARAGRAPH}

## 回滚

如果迁移失败，可以使用备份恢复到 2.8。
"""

META: dict[str, Any] = {
    "id": "doc-x",
    "revision": "1",
    "title": TITLE,
    "tenant": "t",
    "valid_from": "2026-01-01",
    "status": "active",
    "visibility": "public",
    "trust": "official",
    "version_min": "2.0",
    "version_max": "3.2",
}


def make(body: str, **extra: Any) -> Document:
    """A test document with ``body`` and metadata overrides."""
    return make_document({**META, **extra}, body)


def assert_well_formed(document: Document, chunks: tuple[Chunk, ...], size: int) -> None:
    """The invariants every strategy keeps."""
    assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))
    assert [chunk.start for chunk in chunks] == sorted(chunk.start for chunk in chunks)
    assert len({chunk.chunk_id for chunk in chunks}) == len(chunks)
    for chunk in chunks:
        assert document.body[chunk.start : chunk.end] == chunk.text
        assert chunk.text.strip() == chunk.text != ""
        assert chunk.document_id == document.document_id
        assert chunk.document_digest == document.content_digest
        expected = tuple(f.fact_id for f in document.facts if f.quote in chunk.text)
        assert chunk.fact_ids == expected


# -- options ---------------------------------------------------------------


@pytest.mark.parametrize(("size", "overlap"), [(100, 100), (100, 150), (0, 0), (-5, 0), (10, -1)])
@pytest.mark.parametrize("strategy", list(Strategy))
def test_bad_size_or_overlap_is_rejected(strategy: Strategy, size: int, overlap: int) -> None:
    with pytest.raises(ValidationError) as caught:
        chunk_document(make(GUIDE), strategy, size=size, overlap=overlap)
    assert isinstance(caught.value, ValueError)


def test_strategy_parser_lists_valid_values() -> None:
    assert parse_strategy("contextual") is Strategy.CONTEXTUAL
    assert chunk_document(make(GUIDE), "fixed", size=200)[0].ordinal == 0
    with pytest.raises(ConfigError, match="fixed, structural, contextual"):
        parse_strategy("semantic")


# -- fixed -----------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7, 90, 400, 10_000])
def test_fixed_windows_cover_the_body(size: int) -> None:
    document = make(GUIDE)
    chunks = chunk_document(document, Strategy.FIXED, size=size)
    assert_well_formed(document, chunks, size)
    assert all(len(chunk.text) <= size for chunk in chunks)
    covered = "".join(chunk.text for chunk in chunks)
    assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", document.body)
    for before, after in pairwise(chunks):
        assert before.end <= after.start
        assert document.body[before.end : after.start].strip() == ""


def test_fixed_windows_overlap() -> None:
    document = make(GUIDE)
    chunks = chunk_document(document, Strategy.FIXED, size=90, overlap=30)
    assert_well_formed(document, chunks, 90)
    assert all(len(chunk.text) <= 90 for chunk in chunks)
    assert chunks[-1].end == len(document.body)
    assert any(after.start < before.end for before, after in pairwise(chunks))


def test_fixed_windows_cut_tables_and_code_and_keep_heading_paths() -> None:
    document = make(GUIDE)
    chunks = chunk_document(document, Strategy.FIXED, size=90)
    for block in (TABLE, CODE):
        start = document.body.index(block)
        end = start + len(block)
        touching = [c for c in chunks if c.start < end and c.end > start]
        assert not any(c.start <= start and end <= c.end for c in touching)
        assert len(touching) >= 2
    assert chunks[0].heading_path == (TITLE,)
    member = document.body.index(LONG_PARAGRAPH) + 10
    inside = next(c for c in chunks if c.start >= member)
    assert inside.heading_path == (TITLE, "成员处理")
    assert {chunk.kind for chunk in chunks} >= {ChunkKind.TABLE, ChunkKind.CODE}


# -- structural --------------------------------------------------------------


def test_structural_keeps_tables_and_code_whole_exactly_once() -> None:
    document = make(GUIDE)
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=90)
    assert_well_formed(document, chunks, 90)
    for block in (TABLE, CODE):
        assert sum(block in chunk.text for chunk in chunks) == 1
        holder = next(chunk for chunk in chunks if block in chunk.text)
        assert holder.kind in {ChunkKind.TABLE, ChunkKind.CODE}
    # the "# comment" inside the code block is not a heading
    assert all("先备份旧配置" not in path for chunk in chunks for path in chunk.heading_path)


def test_structural_heading_paths_and_no_heading_text() -> None:
    document = make(GUIDE)
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=90)
    paths = {chunk.heading_path for chunk in chunks}
    assert paths == {
        (TITLE,),
        (TITLE, "配置变化"),
        (TITLE, "执行迁移"),
        (TITLE, "成员处理"),
        (TITLE, "回滚"),
    }
    lines = document.body.split("\n")
    headings = [line for line in lines if line.startswith("#") and "备份" not in line]
    assert len(headings) == 5
    assert not any(heading in chunk.text for heading in headings for chunk in chunks)
    table = next(chunk for chunk in chunks if TABLE in chunk.text)
    assert table.heading_path == (TITLE, "配置变化")
    assert table.kind is ChunkKind.TABLE and table.text == TABLE
    listed = next(chunk for chunk in chunks if "迁移期间服务只读" in chunk.text)
    assert listed.kind is ChunkKind.LIST


def test_structural_groups_blocks_of_one_section_within_budget() -> None:
    document = make(GUIDE)
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=400)
    assert_well_formed(document, chunks, 400)
    config = [chunk for chunk in chunks if chunk.heading_path == (TITLE, "配置变化")]
    assert len(config) == 1 and config[0].kind is ChunkKind.MIXED
    assert config[0].text.startswith("3.2 调整了") and config[0].text.endswith("仍然生效。")
    for chunk in chunks:
        assert len(chunk.text) <= 400


def test_over_long_paragraph_is_split_at_sentence_ends() -> None:
    document = make(GUIDE)
    size = 90
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=size)
    start = document.body.index(LONG_PARAGRAPH)
    end = start + len(LONG_PARAGRAPH)
    pieces = [chunk for chunk in chunks if chunk.start < end and chunk.end > start]
    assert len(pieces) >= 3
    assert "".join(piece.text for piece in pieces) == LONG_PARAGRAPH
    for piece in pieces:
        assert len(piece.text) <= size
        assert piece.kind is ChunkKind.PARAGRAPH
        assert piece.heading_path == (TITLE, "成员处理")
    for piece in pieces[:-1]:
        assert piece.text[-1] in "。！？"


def test_single_sentence_longer_than_size_is_cut_at_size() -> None:
    sentence = "这是一个没有任何句号而且非常非常长的句子" * 5 + "。"
    document = make(f"# 标题\n\n{sentence}")
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=30)
    assert_well_formed(document, chunks, 30)
    assert [len(chunk.text) for chunk in chunks] == [30, 30, 30, 11]
    assert "".join(chunk.text for chunk in chunks) == sentence


def test_code_larger_than_size_stands_alone_and_unclosed_fence_runs_to_end() -> None:
    body = "前言。\n\n~~~python\nprint('a')\n\n# not a heading\nprint('b')\n\n| not | a table |"
    document = make(body)
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=10)
    assert [chunk.kind for chunk in chunks] == [ChunkKind.PARAGRAPH, ChunkKind.CODE]
    assert chunks[1].text == body[body.index("~~~") :]
    assert chunks[1].heading_path == ()


# -- contextual -----------------------------------------------------------


@pytest.mark.parametrize("size", [90, 400])
def test_contextual_matches_structural_with_prefixes(size: int) -> None:
    document = make(GUIDE)
    structural = chunk_document(document, Strategy.STRUCTURAL, size=size)
    contextual = chunk_document(document, Strategy.CONTEXTUAL, size=size)
    assert len(contextual) == len(structural)
    assert [c.text for c in contextual] == [c.text for c in structural]
    assert [c.chunk_id for c in contextual] == [c.chunk_id for c in structural]
    assert [c.document_digest for c in contextual] == [c.document_digest for c in structural]
    assert [(c.start, c.end) for c in contextual] == [(c.start, c.end) for c in structural]
    assert all(c.context_prefix == "" for c in structural)
    for chunk in contextual:
        assert TITLE in chunk.context_prefix
        assert "版本 2.0–3.2" in chunk.context_prefix
        assert chunk.context_prefix.endswith(" > ".join(chunk.heading_path))
        assert chunk.context_prefix not in chunk.text
    assert with_context(document, structural) == contextual
    assert context_prefix(document, (TITLE, "回滚")) == f"{TITLE} | 版本 2.0–3.2 | {TITLE} > 回滚"


# -- ids ------------------------------------------------------------------


@pytest.mark.parametrize("strategy", list(Strategy))
def test_chunk_ids_are_stable_across_runs(strategy: Strategy) -> None:
    first = chunk_document(make(GUIDE), strategy, size=120)
    second = chunk_document(make(GUIDE), strategy, size=120)
    assert first == second
    for chunk in first:
        expected = chunk_id_for(chunk.document_id, chunk.heading_path, chunk.ordinal, chunk.text)
        assert chunk.chunk_id == expected


def test_editing_the_last_section_keeps_earlier_chunks() -> None:
    original = make(GUIDE)
    edited_body = GUIDE.replace("恢复到 2.8。", "恢复到 2.8，并通知所有成员。")
    edited = make(edited_body)
    before = chunk_document(original, size=120)
    after = chunk_document(edited, size=120)
    assert len(before) == len(after)
    # every chunk but the last keeps text, place and ordinal
    for old, new in zip(before[:-1], after[:-1], strict=True):
        assert (old.text, old.start, old.ordinal, old.heading_path) == (
            new.text,
            new.start,
            new.ordinal,
            new.heading_path,
        )
    assert before[-1].text != after[-1].text
    # document_id hashes the content, so a real edit renames every chunk; with the
    # document id held fixed only the edited chunk's id changes.
    same_id = dataclasses.replace(edited, document_id=original.document_id)
    pinned = chunk_document(same_id, size=120)
    assert pinned[0].chunk_id == before[0].chunk_id
    assert [c.chunk_id for c in pinned[:-1]] == [c.chunk_id for c in before[:-1]]
    assert pinned[-1].chunk_id != before[-1].chunk_id


def test_whitespace_only_edit_keeps_ids() -> None:
    document = make("# 标题\n\n第一句。  第二句。")
    again = make("# 标题\n\n第一句。 第二句。")
    assert document.document_id == again.document_id
    first = chunk_document(document)[0]
    second = chunk_document(again)[0]
    assert first.chunk_id == second.chunk_id and first.text != second.text


# -- facts ----------------------------------------------------------------


def test_fact_is_carried_only_by_the_chunk_with_its_whole_quote() -> None:
    facts = [
        {"id": "f-retries", "quote": "| max_retries | 3 | 5 |"},
        {"id": "f-guest", "quote": "访客账号在 3.2 中默认只读"},
    ]
    document = make(GUIDE, facts=facts)
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=90)
    assert_well_formed(document, chunks, 90)
    mapping = fact_chunk_map(chunks)
    assert set(mapping) == {"f-retries", "f-guest"}
    for fact in document.facts:
        (holder,) = mapping[fact.fact_id]
        chunk = next(c for c in chunks if c.chunk_id == holder)
        assert fact.quote in chunk.text
        assert all(fact.fact_id not in c.fact_ids for c in chunks if c.chunk_id != holder)


def test_quote_split_across_fixed_windows_is_carried_by_neither() -> None:
    body = "甲" * 40 + "关键事实在这里" + "乙" * 40
    quote = "关键事实在这里"
    document = make(body, facts=[{"id": "f-key", "quote": quote}])
    chunks = chunk_document(document, Strategy.FIXED, size=43)
    assert body.index(quote) < 43 < body.index(quote) + len(quote)
    assert all(chunk.fact_ids == () for chunk in chunks)
    assert fact_chunk_map(chunks) == {}
    whole = chunk_document(document, Strategy.FIXED, size=100)
    assert fact_chunk_map(whole) == {"f-key": (whole[0].chunk_id,)}


# -- properties -------------------------------------------------------------

_WORDS = st.sampled_from(
    ["迁移", "配置", "成员", "星舟", "版本", "3.2", "max_retries", "backup", "the", "服务"]
)
_PUNCT = st.sampled_from(["", "，", "。", "！", "？", ". ", " "])
_LINE = st.lists(st.tuples(_WORDS, _PUNCT), min_size=1, max_size=12).map(
    lambda pairs: "".join(w + p for w, p in pairs).strip()
)
_CELL = st.sampled_from(["a", "配置", "3.2", "默认值", "---", "x y"])


def _table(rows: list[list[str]]) -> str:
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


_TABLE = (
    st.integers(1, 3)
    .flatmap(
        lambda cols: st.lists(st.lists(_CELL, min_size=cols, max_size=cols), min_size=1, max_size=4)
    )
    .map(_table)
)
_CODE = st.tuples(
    st.sampled_from(["```", "~~~", "````"]),
    st.sampled_from(["", "bash", "python"]),
    st.lists(
        st.sampled_from(["# 注释", "run --to 3.2", "", "| x |", "- item", "echo 完成"]), max_size=5
    ),
).map(lambda t: re.sub(r"\n{3,}", "\n\n", "\n".join([t[0] + t[1], *t[2], t[0]])))
_HEADING = st.tuples(st.integers(1, 6), _LINE).map(lambda t: "#" * t[0] + " " + t[1])
_PARAGRAPH = st.lists(_LINE, min_size=1, max_size=4).map("\n".join)
_LIST = st.lists(
    st.tuples(st.sampled_from(["- ", "* ", "+ ", "1. "]), _LINE), min_size=1, max_size=5
).map(lambda items: "\n".join(m + t for m, t in items))
_BLOCK = st.one_of(
    st.tuples(st.just("heading"), _HEADING),
    st.tuples(st.just("paragraph"), _PARAGRAPH),
    st.tuples(st.just("table"), _TABLE),
    st.tuples(st.just("code"), _CODE),
    st.tuples(st.just("list"), _LIST),
)


@st.composite
def markdown(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A normalized Markdown body and the spans of its tables and code blocks."""
    blocks = draw(st.lists(_BLOCK, min_size=1, max_size=12))
    parts: list[str] = []
    whole: list[tuple[int, int]] = []
    offset = 0
    for kind, text in blocks:
        if parts:
            offset += 2
        if kind in ("table", "code"):
            whole.append((offset, offset + len(text)))
        parts.append(text)
        offset += len(text)
    body = "\n\n".join(parts)
    assert normalize_body(body) == body
    return body, whole


_SIZES = st.integers(1, 300).flatmap(
    lambda size: st.tuples(st.just(size), st.integers(0, size - 1))
)


@settings(max_examples=150, deadline=None)
@given(markdown(), _SIZES)
def test_property_random_markdown(sample: tuple[str, list[tuple[int, int]]], sizes: Any) -> None:
    body, whole = sample
    size, overlap = sizes
    document = make(body)
    assert document.body == body
    for strategy in Strategy:
        chunks = chunk_document(document, strategy, size=size, overlap=overlap)
        assert_well_formed(document, chunks, size)
        headings_only = all(line.startswith("#") for line in body.split("\n") if line)
        assert bool(chunks) is (strategy is Strategy.FIXED or not headings_only)
        if strategy is Strategy.FIXED:
            assert all(len(chunk.text) <= size for chunk in chunks)
            assert all(b.end > a.end for a, b in pairwise(chunks))
            continue
        for before, after in pairwise(chunks):
            assert before.end <= after.start
        for start, end in whole:
            holders = [c for c in chunks if c.start <= start and end <= c.end]
            assert len(holders) == 1
            assert not any(c.start < end and c.end > start for c in chunks if c not in holders)
        for chunk in chunks:
            assert len(chunk.text) <= size or chunk.kind in (ChunkKind.TABLE, ChunkKind.CODE)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="#|-*`~ \n\t1.。a中", min_size=1, max_size=200), _SIZES)
def test_property_arbitrary_text_never_breaks(raw: str, sizes: Any) -> None:
    body = normalize_body(raw)
    if not body.strip():
        return
    document = make(body)
    size, overlap = sizes
    for strategy in Strategy:
        chunks = chunk_document(document, strategy, size=size, overlap=overlap)
        assert_well_formed(document, chunks, size)


# -- hard budget (the index's chunks) ----------------------------------------


def test_index_chunks_cut_long_tables_between_rows_with_the_header_in_the_prefix() -> None:
    rows = "\n".join(f"| key{i} | {'value ' * 10} |" for i in range(40))
    document = make(f"# T\n\n| key | value |\n| --- | --- |\n{rows}")
    chunks = chunk_for_index(document)
    assert_well_formed(document, chunks, CHUNK_SIZE)
    assert len(chunks) > 2 and all(c.kind is ChunkKind.TABLE for c in chunks)
    assert all(len(c.text) <= CHUNK_SIZE for c in chunks)
    assert chunks[0].text.startswith("| key | value |\n| --- | --- |")
    assert all(c.context_prefix.endswith("| | key | value |") for c in chunks[1:])
    assert "".join(document.body[c.start : c.end] + "\n" for c in chunks).strip() == document.body[5:]
    assert oversize_chunks(chunks) == 0


def test_index_chunks_cut_long_code_between_lines_and_count_an_uncuttable_line() -> None:
    code = "\n".join(f"x = {i}  # " + "y" * 50 for i in range(30))
    document = make(f"# T\n\n```\n{code}\n```\n\n```\n{'z' * 1000}\n```")
    chunks = chunk_for_index(document)
    assert_well_formed(document, chunks, CHUNK_SIZE)
    assert [c.kind for c in chunks] == [ChunkKind.CODE] * len(chunks)
    assert chunks[0].text.startswith("```\nx = 0") and chunks[-2].text.endswith("\n```")
    assert chunks[-1].text == f"```\n{'z' * 1000}\n```"  # fences stay with their line
    assert oversize_chunks(chunks) == 1
    assert all(len(c.text) <= 2 * CHUNK_SIZE for c in chunks[:-1])


def test_without_a_hard_budget_tables_and_code_stay_whole() -> None:
    code = "\n".join(f"line {i} " + "y" * 50 for i in range(30))
    document = make(f"```\n{code}\n```")
    assert len(chunk_document(document, Strategy.STRUCTURAL, size=400)) == 1
    assert len(chunk_document(document, Strategy.STRUCTURAL, size=400, max_block=800)) > 1


@settings(max_examples=100, deadline=None)
@given(markdown(), st.integers(5, 200))
def test_property_hard_budget_holds_except_single_lines(sample: tuple[str, Any], size: int) -> None:
    body, _ = sample
    document = make(body)
    chunks = chunk_document(document, Strategy.STRUCTURAL, size=size, max_block=2 * size)
    assert_well_formed(document, chunks, size)
    for chunk in chunks:
        if len(chunk.text) > 2 * size:
            lines = chunk.text.split("\n")
            inner = [line for line in lines if not re.fullmatch(r"\s*(`{3,}|~{3,})\S*", line)]
            assert len(inner) <= 1 or (chunk.kind is ChunkKind.TABLE and len(inner) <= 3)
