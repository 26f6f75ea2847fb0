"""The answer pipeline end to end on the demo: governance, evidence, policy, citations."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from veracity.fixtures import TenantConfig
from veracity.model.contracts import AnswerStatus, Principal
from veracity.model.errors import IdentityError
from veracity.pipeline.engine import Engine
from veracity.pipeline.render import answer_dict

REQUIRED = ("sso-team-32", "members-preserved-32")


def ask(
    kb: Engine, config: TenantConfig, question: str | None = None, role: str = "public", **kw
):
    return kb.ask(
        question or config.running_question,
        Principal.of(config.tenant, role),
        config.target_version,
        config.as_of,
        **kw,
    )


def chunk_holding(kb: Engine, source_id: str, heading: str) -> str:
    document = kb.catalog.document(source_id)
    return next(
        c.chunk_id for c in kb.catalog.chunks(document.document_id) if heading in c.heading_path
    )


def cited_fact_chunks(answer) -> dict[str, set[str]]:
    by_id = {c.citation_id: c for c in answer.citations}
    found: dict[str, set[str]] = {}
    for claim in answer.claims:
        for fact in claim.fact_ids:
            found.setdefault(fact, set()).update(by_id[cid].chunk_id for cid in claim.citation_ids)
    return found


@pytest.mark.parametrize("required", [None, REQUIRED])
def test_running_question_answers_with_both_facts_cited_to_their_chunks(
    demo_kb, config, required
) -> None:
    answer = ask(demo_kb, config, required_fact_ids=required)
    assert answer.status is AnswerStatus.ANSWER
    cited = cited_fact_chunks(answer)
    assert set(cited) >= set(REQUIRED)
    snapshot = demo_kb.snapshot
    for fact, chunk_ids in cited.items():
        assert all(fact in snapshot.chunks[cid].fact_ids for cid in chunk_ids)
    assert cited["members-preserved-32"] == {
        chunk_holding(demo_kb, "migration-2x-to-3.2", "成员处理")
    }
    for claim in answer.claims:  # extractive: every claim is text of a chunk it cites
        texts = [
            snapshot.chunks[c.chunk_id].text
            for c in answer.citations
            if c.citation_id in claim.citation_ids
        ]
        assert any(claim.text in text for text in texts)


def test_running_question_filters_nine_before_scoring(demo_kb, config) -> None:
    trace = ask(demo_kb, config).trace
    assert trace.eligible_documents == 9
    assert trace.filtered_before_score == 9
    assert trace.excluded_counts == {"role": 5, "status": 1, "validity": 1, "version": 2}


def test_no_target_version_filters_no_version(demo_kb, config) -> None:
    trace = demo_kb.ask(config.running_question, Principal.of("starship", "public"), None, config.as_of).trace
    assert trace.target_version is None
    # the two 2.8 documents are retired too: without a version they are excluded by status
    assert trace.excluded_counts == {"role": 5, "status": 3, "validity": 1}
    assert trace.eligible_documents == 9


def test_removing_the_members_chunk_gives_partial_without_members_claim(demo_kb, config) -> None:
    members = chunk_holding(demo_kb, "migration-2x-to-3.2", "成员处理")
    answer = ask(demo_kb, config, required_fact_ids=REQUIRED, remove_chunk_ids={members})
    assert answer.status is AnswerStatus.PARTIAL
    assert answer.missing_fact_ids == ("members-preserved-32",)
    assert all("members-preserved-32" not in claim.fact_ids for claim in answer.claims)
    assert members not in {c.chunk_id for c in answer.citations}
    assert answer.trace.removed_by_caller == (members,)


def test_removing_the_members_chunk_without_case_facts_is_partial_too(demo_kb, config) -> None:
    members = chunk_holding(demo_kb, "migration-2x-to-3.2", "成员处理")
    answer = ask(demo_kb, config, remove_chunk_ids={members})
    assert answer.status is AnswerStatus.PARTIAL
    assert len(answer.uncovered_subquestions) == 1
    assert "成员" in answer.uncovered_subquestions[0]


@pytest.mark.parametrize("question", ["3.2 支持量子加密登录吗？", "桌面客户端可以改主题颜色吗？"])
def test_questions_the_evidence_does_not_hold_abstain(demo_kb, config, question) -> None:
    answer = ask(demo_kb, config, question)
    assert answer.status is AnswerStatus.ABSTAIN
    assert answer.claims == () and answer.citations == ()


def test_colloquial_login_question_answers_citing_sso_fact(demo_kb, config) -> None:
    answer = ask(demo_kb, config, "升级到 3.2 以后，我们公司的登录方式还能照旧吗？")
    assert answer.status is AnswerStatus.ANSWER
    assert "sso-team-32" in cited_fact_chunks(answer)


def _incident_markers(kb: Engine) -> list[str]:
    snapshot = kb.snapshot
    doc = next(d for d in snapshot.documents.values() if d.source_id == "incident-2026-08-sso")
    return [
        "incident-2026-08-sso",
        "INC-7731",
        doc.document_id,
        *snapshot.chunks_by_document[doc.document_id],
    ]


def test_public_user_never_sees_the_incident(demo_kb, config) -> None:
    for question in ("2026 年 8 月的 SSO 故障是怎么回事？", "SSO 登录故障的事故记录编号是多少？"):
        answer = ask(demo_kb, config, question)
        exposed = json.dumps(answer_dict(answer, explain=True), ensure_ascii=False)
        for marker in _incident_markers(demo_kb):
            assert marker not in exposed


def test_maintainer_gets_the_incident_cited(demo_kb, config) -> None:
    answer = ask(demo_kb, config, "2026 年 8 月的 SSO 故障是怎么回事？", role="maintainer")
    assert answer.status is AnswerStatus.ANSWER
    assert "incident-2026-08-sso" in {c.source_id for c in answer.citations}


def test_injection_page_is_a_candidate_but_never_context(demo_kb, config) -> None:
    answer = ask(demo_kb, config, required_fact_ids=REQUIRED)
    snapshot = demo_kb.snapshot
    injected = {
        cid
        for did, cids in snapshot.chunks_by_document.items()
        if snapshot.documents[did].source_id == "community-qa-injection"
        for cid in cids
    }
    assert injected & {cid for cid, _ in answer.trace.fused}
    assert injected <= {cid for cid, _ in answer.trace.quarantined} | (
        injected - {cid for cid, _ in answer.trace.fused}
    )
    assert not injected & set(answer.trace.final)
    assert answer.trace.roles == ("public",) and answer.trace.tenant == "starship"


def test_community_contradiction_is_settled_by_trust(demo_kb, config) -> None:
    trace = ask(demo_kb, config).trace
    assert all(rule for _, rule, _ in trace.conflicts)


def test_unknown_role_and_missing_identity_fail_closed(demo_kb, config) -> None:
    answer = ask(demo_kb, config, role="admin")
    assert answer.status is AnswerStatus.ABSTAIN
    assert answer.trace.eligible_documents == 0 and answer.trace.fused == ()
    with pytest.raises(IdentityError):
        demo_kb.ask("x", Principal(tenant="", roles=frozenset({"public"})), "3.2", config.as_of)
    with pytest.raises(IdentityError):
        demo_kb.ask("x", Principal(tenant="starship", roles=frozenset()), "3.2", config.as_of)


def test_ineligible_chunks_are_never_scored(fake_kb, config) -> None:
    snapshot = fake_kb.snapshot
    seen: list[set[str]] = []

    class SpyBackend:
        """Records what each channel and the term statistics may read, then delegates."""

        def __getattr__(self, name):
            return getattr(snapshot, name)

        def lexical_search(self, tenant, tokens, *, k, eligible_document_ids):
            seen.append(("bm25", set(eligible_document_ids)))
            return snapshot.lexical_search(
                tenant, tokens, k=k, eligible_document_ids=eligible_document_ids
            )

        def dense_search(self, tenant, vector, *, k, eligible_document_ids, model_id):
            seen.append(("dense", set(eligible_document_ids)))
            return snapshot.dense_search(
                tenant, vector, k=k, eligible_document_ids=eligible_document_ids, model_id=model_id
            )

        def document_frequencies(self, tenant, terms, *, eligible_document_ids):
            seen.append(("statistics", set(eligible_document_ids)))
            return snapshot.document_frequencies(tenant, terms, eligible_document_ids=eligible_document_ids)

    fake_kb.snapshot = SpyBackend()
    answer = ask(fake_kb, config)
    eligible_docs = {
        did
        for did, d in snapshot.documents.items()
        if d.source_id not in {"plans-2.8", "faq-2.8-sso", "preview-3.3", "draft-member-removal"}
        and d.visibility.value == "public"
    }
    eligible_chunks = {cid for did in eligible_docs for cid in snapshot.chunks_by_document[did]}
    calls = Counter(channel for channel, _ in seen)
    assert calls["bm25"] >= 1 and calls["bm25"] == calls["dense"] >= calls["statistics"] >= 1
    assert all(ids <= eligible_docs for _, ids in seen)  # each trust pool, never beyond eligibility
    assert set().union(*(ids for channel, ids in seen if channel == "bm25")) == eligible_docs
    official = {d for d in eligible_docs if snapshot.documents[d].trust.value == "official"}
    assert all(ids == official for channel, ids in seen if channel == "statistics")
    scored = {cid for _, pairs in answer.trace.channels for cid, _ in pairs}
    assert scored and scored <= eligible_chunks


def test_snapshot_search_scores_only_eligible_chunks(fake_kb) -> None:
    snapshot = fake_kb.snapshot
    one = next(d for d in snapshot.documents.values() if d.source_id == "plans-3.2")
    hits = snapshot.lexical_search(
        "starship", ["saml", "team"], k=50, eligible_document_ids={one.document_id}
    )
    assert hits and {cid for cid, _ in hits} <= set(snapshot.chunks_by_document[one.document_id])
    assert snapshot.lexical_search("starship", ["saml"], k=5, eligible_document_ids=set()) == []
    vector = fake_kb.embedder.embed_batch(["SAML"], kind="query")[0]
    assert (
        snapshot.dense_search(
            "starship", vector, k=5, eligible_document_ids=set(), model_id=fake_kb.embedder.model_id
        )
        == []
    )


def test_withdrawn_after_indexing_is_rejected_at_the_return_gate(fake_kb, config) -> None:
    faq = fake_kb.catalog.document("faq-3.2-sso")
    fake_kb.catalog.withdraw(faq.document_id)  # the index is now stale
    answer = ask(fake_kb, config, required_fact_ids=REQUIRED)
    rejected = answer.trace.gate_rejections
    assert rejected and {reason for _, reason in rejected} == {"status"}
    assert {fake_kb.snapshot.chunks[cid].document_id for cid, _ in rejected} == {faq.document_id}
    assert "faq-3.2-sso" not in {c.source_id for c in answer.citations}
    assert answer.status is AnswerStatus.ANSWER


def test_content_changed_while_active_is_rejected_at_the_return_gate(fake_kb, config) -> None:
    faq = fake_kb.catalog.document("faq-3.2-sso")
    connection = fake_kb.catalog.store.connection
    connection.execute(
        "UPDATE documents SET content_digest = ? WHERE document_id = ?", ("0" * 64, faq.document_id)
    )
    assert fake_kb.catalog.document(faq.document_id).status.value == "active"
    answer = ask(fake_kb, config, required_fact_ids=REQUIRED)
    assert {reason for _, reason in answer.trace.gate_rejections} == {"digest"}
    assert "faq-3.2-sso" not in {c.source_id for c in answer.citations}


def test_trace_holds_no_document_text(demo_kb, config) -> None:
    answer = ask(demo_kb, config, required_fact_ids=REQUIRED)
    serialized = json.dumps(answer.trace.to_dict(), ensure_ascii=False)
    for chunk in demo_kb.snapshot.chunks.values():
        for start in range(0, max(1, len(chunk.text) - 8), 8):
            piece = chunk.text[start : start + 8]
            if len(piece.strip()) == 8:
                assert piece not in serialized
    for document in demo_kb.snapshot.documents.values():
        assert document.title not in serialized
