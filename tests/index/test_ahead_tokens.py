"""Index tokens computed ahead (by ingest's parse workers) are the writer's own, used once."""

from __future__ import annotations

from dataclasses import replace

from veracity.index.ahead import AheadTokens, index_tokens, joined_index_tokens
from veracity.model.contracts import Chunk, ChunkKind


def chunk(chunk_id: str, text: str, prefix: str = "") -> Chunk:
    return Chunk(chunk_id, "doc", "digest", ("指南",), 0, 0, len(text), ChunkKind.PARAGRAPH, text, prefix)


TEXTS = ("端口默认为 4173，可用 preview.port 修改。", "The `--without` option skips groups", "", "！？")


def test_held_tokens_are_the_index_tokens_and_used_once() -> None:
    chunks = [chunk(f"c{i}", text, "Guide / 预览") for i, text in enumerate(TEXTS)]
    ahead = AheadTokens()
    ahead.keep(chunks, [joined_index_tokens(c) for c in chunks])
    assert len(ahead) == len(chunks)
    for c in chunks:
        assert ahead.tokens(c) == index_tokens(c)
    assert len(ahead) == 0
    assert index_tokens(chunks[0])  # not vacuous: the prefix and text give tokens
    assert ahead.tokens(chunks[1]) == index_tokens(chunks[1])  # let go: tokenized again, same


def test_tokens_held_under_another_prefix_are_not_used() -> None:
    held = chunk("c1", "日志保留 30 天", prefix="旧标题")
    ahead = AheadTokens()
    ahead.keep([held], ["wrong tokens"])
    moved = replace(held, context_prefix="新标题")
    assert ahead.tokens(moved) == index_tokens(moved)
    assert ahead.tokens(held) == index_tokens(held)  # the entry went with the first ask


def test_a_full_memo_holds_nothing_more() -> None:
    chunks = [chunk(f"c{i}", f"entry {i}") for i in range(3)]
    ahead = AheadTokens(limit=2)
    ahead.keep(chunks, ["x"] * 3)
    assert len(ahead) == 0
    ahead.keep(chunks[:2], ["x", None])  # None: the writer tokenizes that one
    assert len(ahead) == 1 and ahead.tokens(chunks[0]) == ("x",)
    assert ahead.tokens(chunks[1]) == index_tokens(chunks[1])
