"""The sentence reader as a passage reranker: the Reranker contract, beliefs and the reread order."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from veracity.model.contracts import Hit, Principal, Query, Scores
from veracity.parse.chunking import chunk_document
from veracity.parse.documents import make_document
from veracity.pipeline.rerank import ExplainableReranker, FusionOrderReranker, Reranker
from veracity.pipeline.reread import ChooserReranker, passage_beliefs, reread_scores
from veracity.testing.fakes import FakeChooser
from veracity.text.questions import analyze_question

QUESTION = "How long are daily snapshots kept?"
BODIES = {
    "a": "Snapshots are stored in a second region. They are encrypted at rest.",
    "b": "The console lists every snapshot. Daily snapshots are kept for 30 days.",
    "c": "Restores take about an hour. Support can speed them up.",
}


def _evidence() -> tuple[list[Hit], dict]:
    hits, documents = [], {}
    for number, (source_id, body) in enumerate(sorted(BODIES.items())):
        meta = {
            "id": source_id, "revision": "1", "title": f"Backups {source_id}", "tenant": "t",
            "valid_from": "2026-01-01", "status": "active", "visibility": "public", "trust": "official",
        }  # fmt: skip
        document = make_document(meta, body)
        documents[document.document_id] = document
        for chunk in chunk_document(document):
            hits.append(Hit(chunk=chunk, scores=Scores(fusion=1.0 - 0.1 * number), rank=len(hits) + 1))
    return hits, documents


QUERY = Query(QUESTION, Principal.of("t", "public"), None, datetime(2026, 6, 1, tzinfo=UTC))
ASKED = analyze_question(QUESTION)


def rerankers() -> list[Reranker]:
    return [
        ExplainableReranker(),
        FusionOrderReranker(),
        ChooserReranker(FakeChooser({QUESTION: "30 days"}), FusionOrderReranker()),
        ChooserReranker(FakeChooser({}), ExplainableReranker(), depth=2),
    ]


@pytest.mark.parametrize("reranker", rerankers(), ids=lambda r: f"{r.name}")
def test_every_reranker_keeps_the_contract(reranker: Reranker) -> None:
    hits, documents = _evidence()
    out = reranker.rerank(QUERY, hits, documents, question=ASKED)
    assert sorted(h.chunk.chunk_id for h in out) == sorted(h.chunk.chunk_id for h in hits)
    assert [h.rank for h in out] == list(range(1, len(hits) + 1))
    assert all(h.scores.rerank is not None for h in out)
    keys = [(-(h.scores.rerank or 0.0), h.chunk.chunk_id) for h in out]
    assert keys == sorted(keys)  # ordered by score, ties by chunk id
    assert (
        reranker.rerank(QUERY, list(reversed(hits)), documents, question=ASKED) == out
    )  # input order does not matter


def test_the_reader_lifts_the_passage_that_answers_and_names_its_part() -> None:
    hits, documents = _evidence()
    chooser = FakeChooser({QUESTION: "30 days"})
    out = ChooserReranker(chooser, FusionOrderReranker()).rerank(QUERY, hits, documents, question=ASKED)
    assert "30 days" in out[0].chunk.text
    assert dict(out[0].scores.rerank_parts)["reader"] == pytest.approx(1 / (1 + 2.718281828**-4), abs=1e-4)
    assert chooser.calls == [(QUESTION, 6)]  # two sentences a passage, three passages, one call


def test_only_the_head_is_read_and_the_tail_keeps_its_order() -> None:
    hits, documents = _evidence()
    chooser = FakeChooser({QUESTION: "30 days"})
    out = ChooserReranker(chooser, FusionOrderReranker(), depth=1).rerank(
        QUERY, hits, documents, question=ASKED
    )
    assert [h.chunk.document_id for h in out] == [h.chunk.document_id for h in hits]  # "b" was not read
    assert "reader" not in dict(out[1].scores.rerank_parts)


def test_beliefs_take_the_best_sentence_and_a_passage_without_one_is_zero() -> None:
    chooser = FakeChooser({QUESTION: "30 days"})
    beliefs = passage_beliefs(chooser, QUESTION, [("s", BODIES["a"]), ("s", BODIES["b"]), ("s", "")])
    assert beliefs[1] > 0.98 and beliefs[0] < 0.02 and beliefs[2] == 0.0


def test_reread_scores_put_the_head_above_the_tail_in_belief_order() -> None:
    assert reread_scores([3.0, 2.0, 1.0], [0.2, 0.9]) == [3.2, 3.9, 1.0]
    assert reread_scores([3.0, 2.0], []) == [3.0, 2.0]
