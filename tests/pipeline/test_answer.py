"""Policy, claim/citation verification and conflicts, on hand-made evidence."""

from __future__ import annotations

import pytest

from veracity.model.contracts import AnswerStatus, Citation, Claim, Hit, Scores
from veracity.model.errors import CitationError
from veracity.parse.chunking import chunk_document
from veracity.parse.documents import make_document
from veracity.pipeline.answer import compose, verify_claims
from veracity.pipeline.evidence import build_packet
from veracity.text.questions import analyze_question


def citation(cid: int) -> Citation:
    return Citation(cid, "d" * 64, "doc", "1", f"c{cid}", ("h",), 0, 1, "x" * 64)


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ([Claim("a", ())], "cites nothing"),
        ([Claim("a", (1, 1))], "twice"),
        ([Claim("a", (1, 7))], "not in the evidence"),
    ],
)
def test_bad_citations_are_rejected(claims, message) -> None:
    with pytest.raises(CitationError, match=message):
        verify_claims(claims, [citation(1), citation(2)])
    assert issubclass(CitationError, ValueError)


def test_good_citations_pass() -> None:
    verify_claims([Claim("a", (1,)), Claim("b", (1, 2))], [citation(1), citation(2)])


def _doc(source_id: str, trust: str, body: str, facts: list[dict]):
    meta = {
        "id": source_id,
        "revision": "1",
        "title": source_id,
        "tenant": "t",
        "valid_from": "2026-01-01",
        "status": "active",
        "visibility": "public",
        "trust": trust,
        "facts": facts,
    }
    return make_document(meta, body)


def _hits(*documents):
    hits, by_id = [], {}
    for document in documents:
        by_id[document.document_id] = document
        for chunk in chunk_document(document):
            hits.append(Hit(chunk=chunk, scores=Scores(rerank=1.0), rank=len(hits) + 1))
    return hits, by_id


def test_equal_trust_conflict_abstains_and_keeps_citations() -> None:
    yes = _doc("a", "official", "套餐 A 支持 SAML 登录。", [{"id": "f", "quote": "套餐 A 支持 SAML 登录。"}])
    no = _doc(
        "b",
        "official",
        "套餐 A 不支持 SAML 登录。",
        [{"id": "f", "quote": "套餐 A 不支持 SAML 登录。", "stance": "contradicts"}],
    )
    hits, docs = _hits(yes, no)
    packet = build_packet("q", hits, docs, ["f"])
    result = compose(analyze_question("套餐 A 支持 SAML 吗？"), packet, docs, ["f"])
    assert result.status is AnswerStatus.ABSTAIN
    assert result.reasons == ("conflict:f",)
    assert len(result.citations) == 2 and result.claims == ()


def test_less_trusted_contradiction_is_settled_by_trust() -> None:
    yes = _doc("a", "official", "套餐 A 支持 SAML 登录。", [{"id": "f", "quote": "套餐 A 支持 SAML 登录。"}])
    no = _doc(
        "b",
        "community",
        "套餐 A 不支持 SAML 登录。",
        [{"id": "f", "quote": "套餐 A 不支持 SAML 登录。", "stance": "contradicts"}],
    )
    hits, docs = _hits(yes, no)
    packet = build_packet("q", hits, docs, ["f"])
    assert packet.conflicts and packet.conflicts[0].resolved_by_trust
    result = compose(analyze_question("套餐 A 支持 SAML 吗？"), packet, docs, ["f"])
    assert result.status is AnswerStatus.ANSWER
    assert [c.source_id for c in result.citations] == ["a"]


def test_duplicate_and_overlapping_chunks_are_not_independent_evidence() -> None:
    a = _doc("a", "official", "同一句话。", [])
    b = _doc("b", "official", "同一句话。", [])
    hits, docs = _hits(a, b)
    packet = build_packet("q", hits + hits[:1], docs)
    assert len(packet.hits) == 1 and len(packet.duplicate_chunk_ids) == 2


def test_partial_names_missing_and_says_nothing_about_it() -> None:
    a = _doc("a", "official", "事实一成立。\n\n无关内容。", [{"id": "one", "quote": "事实一成立。"}])
    hits, docs = _hits(a)
    packet = build_packet("q", hits, docs, ["one", "two"])
    result = compose(analyze_question("问题？"), packet, docs, ["one", "two"])
    assert result.status is AnswerStatus.PARTIAL
    assert result.missing_fact_ids == ("two",)
    assert [c.fact_ids for c in result.claims] == [("one",)]


def test_no_required_fact_present_abstains() -> None:
    a = _doc("a", "official", "无关内容。", [])
    hits, docs = _hits(a)
    result = compose(analyze_question("问题？"), build_packet("q", hits, docs, ["x"]), docs, ["x"])
    assert result.status is AnswerStatus.ABSTAIN and result.citations == ()
