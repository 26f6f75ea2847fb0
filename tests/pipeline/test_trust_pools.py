"""Each trust tier is its own pool: community and untrusted pages, caught by the injection
detector or not, never change the official evidence, its scores or the decision's inputs."""

from __future__ import annotations

import pytest

from veracity.fixtures import fixture_documents, tenant_config
from veracity.index.embedders import FakeEmbedder
from veracity.model.contracts import Principal, Trust
from veracity.parse.documents import make_document
from veracity.pipeline.engine import Engine
from veracity.pipeline.retrieve import trust_pools

QUESTIONS = (
    "3.2 的 Team 计划还能用 SAML 登录吗？",
    "What is the member limit of the Team plan in 3.2?",
    "成员数超过上限时，多出来的成员会被自动删除吗？",
)

# plain pages that share the questions' words in both languages and slip past any detector
PAGES = {
    "forum-members": (
        Trust.COMMUNITY,
        "Team plan member limit: members over the limit are deleted. 成员上限 SAML 登录 Team 计划 删除成员。",
    ),
    "pasted-notes": (
        Trust.UNTRUSTED,
        "SAML login for the Team plan in 3.2, member limit, automatically deleted members, "
        "计划 上限 自动删除。",
    ),
}


def _knowledge_base(extra: bool) -> Engine:
    config = tenant_config()
    documents = list(fixture_documents())
    if extra:
        for source_id, (trust, body) in PAGES.items():
            fields = {
                "id": source_id, "revision": "1", "title": source_id, "source_type": "community_qa",
                "tenant": config.tenant, "version_min": "3.2", "valid_from": "2026-07-01T00:00:00Z",
                "status": "active", "visibility": "public", "trust": trust.value,
            }  # fmt: skip
            documents.append(make_document(fields, body))
    return Engine.from_documents(documents, FakeEmbedder(), roles={config.tenant: config.roles})


def _official_view(kb: Engine, question: str):
    config = tenant_config()
    answer = kb.ask(question, Principal.of(config.tenant, "public"), config.target_version, config.as_of)
    documents = kb.snapshot.documents
    official = {c for c, d in kb.snapshot.chunks.items() if documents[d.document_id].trust is Trust.OFFICIAL}
    trace = answer.trace
    channels = {name: [p for p in pairs if p[0] in official] for name, pairs in trace.channels}
    fused = [p for p in trace.fused if p[0] in official]
    reranked = [r[:2] for r in trace.reranked if r[0] in official]
    decisions = [d for d in trace.decisions if d[6] == "official"]
    return channels, fused, reranked, decisions


@pytest.mark.parametrize("question", QUESTIONS)
def test_other_tiers_never_move_the_official_pool(question) -> None:
    clean, crowded = _knowledge_base(extra=False), _knowledge_base(extra=True)
    before, after = _official_view(clean, question), _official_view(crowded, question)
    assert after[:3] == before[:3]  # channels, fused and reranked scores of every official chunk
    if after[3]:  # the official tier decided (no community claim took the sub-question's place)
        assert after[3] == before[3]


def test_pools_split_by_trust_official_first() -> None:
    kb = _knowledge_base(extra=True)
    by_trust = kb.snapshot.document_ids_by_trust
    pools = trust_pools(set(kb.snapshot.documents), by_trust)
    trusts = [{kb.snapshot.documents[d].trust for d in pool} for pool in pools]
    assert trusts == [{Trust.OFFICIAL}, {Trust.COMMUNITY}, {Trust.UNTRUSTED}]
    assert set().union(*pools) == set(kb.snapshot.documents)
    assert trust_pools(set(), by_trust) == []
    some = sorted(kb.snapshot.documents)[::2]  # a subset, given as a list: the same split of it
    assert [sorted(p) for p in trust_pools(some, by_trust)] == [
        sorted(d for d in some if kb.snapshot.documents[d].trust is trust)
        for trust in Trust
        if any(kb.snapshot.documents[d].trust is trust for d in some)
    ]
