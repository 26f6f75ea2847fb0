"""No scoring side channel: a document the asker may not see changes nothing the asker receives."""

from __future__ import annotations

from typing import Any

import pytest

from veracity.index.lexical import TermStatistics
from veracity.model.contracts import Document, Principal
from veracity.parse.chunking import chunk_for_index
from veracity.parse.documents import make_document
from veracity.pipeline.engine import Answer, Engine
from veracity.pipeline.render import answer_dict
from veracity.pipeline.trace import Audience

QUESTION = "存储的数据用 AES-256 加密吗？"


def hidden_document() -> Document:
    """An internal document of the demo tenant that shares the question's rare words."""
    return make_document(
        {
            "id": "crypto-review-internal",
            "revision": "1",
            "title": "内部加密评审",
            "tenant": "starship",
            "version_min": "3.2",
            "valid_from": "2026-07-01T00:00:00Z",
            "status": "active",
            "visibility": "internal",
            "allowed_roles": ["security"],
            "trust": "official",
        },
        "# 内部加密评审\n\nAES-256 密钥轮换：AES-256 主密钥每 90 天轮换，存储的数据重新加密。",
    )


def ask(kb: Engine, config: Any) -> Answer:
    return kb.ask(QUESTION, Principal.of("starship", "public"), "3.2", config.as_of)


def public_view(answer: Answer) -> dict[str, Any]:
    return answer_dict(answer, explain=True, timings=False)


def add_hidden(kb: Engine) -> Document:
    document = hidden_document()
    kb.catalog.add(document, chunk_for_index(document))
    kb.reindex()
    return document


def test_hidden_document_changes_nothing_the_public_asker_receives(fake_kb, config) -> None:
    before = ask(fake_kb, config)
    assert before.citations and before.trace.channels
    hidden = add_hidden(fake_kb)
    after = ask(fake_kb, config)
    assert public_view(after) == public_view(before)  # answer, citations, per-channel scores and ranks
    assert after.trace.excluded_hidden == before.trace.excluded_hidden + 1  # operator trail still counts it
    operator = after.trace.to_dict(timings=False, audience=Audience.OPERATOR)
    assert operator["excluded_counts"]["role"] == before.trace.excluded_counts["role"] + 1
    # not vacuous: with index-wide term statistics the public scores would move
    snapshot = fake_kb.snapshot
    public_chunks = [cid for cid, _ in dict(before.trace.channels)["bm25"]]
    tokens = ["aes-256", "加密"]
    index = snapshot.lexical["starship"]  # type: ignore[attr-defined]
    wide = index.scores(tokens, allowed=public_chunks, statistics=TermStatistics.INDEX)
    narrow = index.scores(tokens, allowed=public_chunks, statistics=TermStatistics.ALLOWED)
    assert wide != narrow
    assert hidden.document_id in snapshot.documents


def test_hidden_document_changes_nothing_on_the_sqlite_index(demo_kb_dir, config) -> None:
    from veracity.index.embedders import FakeEmbedder
    from veracity.kb.directory import open_kb

    kb = open_kb(demo_kb_dir, FakeEmbedder())
    try:
        before = ask(kb, config)
        add_hidden(kb)
        after = ask(kb, config)
        assert before.trace.channels
        assert public_view(after) == public_view(before)
        assert after.trace.excluded_hidden == before.trace.excluded_hidden + 1
    finally:
        kb.catalog.store.close()


def test_the_asker_view_holds_no_count_of_hidden_documents(fake_kb, config) -> None:
    trace = ask(fake_kb, config).trace
    assert trace.excluded_hidden > 0
    asker = trace.to_dict()
    assert "excluded_hidden" not in asker and "gate_hidden" not in asker
    assert "role" not in asker["excluded_counts"]
    assert asker["filtered_before_score"] == len(trace.excluded)
    operator = trace.to_dict(audience="operator")
    assert operator["excluded_hidden"] == trace.excluded_hidden
    assert operator["filtered_before_score"] == trace.filtered_before_score
    with pytest.raises(Exception, match="asker, operator"):
        trace.to_dict(audience="public")
