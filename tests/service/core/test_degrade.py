"""Degradation, each fault injected: dense down → lexical, reranker down or slow → fused order,
catalog unreachable or return gate failing → deny (an abstain with the reason, nothing served)."""

from __future__ import annotations

import threading

import pytest

from veracity.model.contracts import Chunk, ChunkKind, Hit, Scores
from veracity.model.errors import CatalogUnavailableError, DenseUnavailableError
from veracity.service.core.degrade import Degradation, GuardedEmbedder, fused_order
from veracity.service.core.gateway import Gateway, GatewaySettings

RUNNING = (
    "我们正在使用 2.8 的 Team 计划和旧 SAML 单点登录。升级到 3.2 后，还能继续使用 SAML 吗？"
    "如果成员数超过新计划上限，多出来的成员会被自动删除吗？"
)
SHORT = "3.2 的 Team 能用 SAML 吗"


class Broken:
    """A component that fails every call."""

    name = "broken"
    model_id = "broken"
    dim = 0

    def embed_batch(self, texts, *, kind="passage"):
        raise RuntimeError("model server gone")

    def rerank(self, query, hits, documents, *, question):
        raise RuntimeError("reranker crashed")


class Slow:
    """A reranker that hangs until released."""

    name = "slow"

    def __init__(self, inner):
        self.inner = inner
        self.release = threading.Event()

    def rerank(self, query, hits, documents, *, question):
        self.release.wait(10)
        return self.inner.rerank(query, hits, documents, question=question)


@pytest.fixture
def gateway(served_kb):
    settings = GatewaySettings(rerank_timeout_s=1.0, dense_retry_s=60, answer_sessions=1)
    opened = Gateway.open(served_kb[0], settings=settings)
    yield opened, served_kb[1]
    opened.close()


def answering(gate: Gateway):
    """The engine that answers (the gateway's only answering session), to inject faults into."""
    with gate.sessions.session() as session:
        return session.kb.engine


def test_embedder_down_answers_lexically_and_says_so(gateway) -> None:
    gate, keys = gateway
    caller = gate.admit(keys.public)
    healthy = gate.ask(caller, SHORT)
    assert not healthy.degraded and {n for n, _ in healthy.answer.trace.channels} == {"bm25", "dense"}
    real = gate.embedder.inner
    gate.embedder.inner = Broken()
    gate.cache.clear()
    served = gate.ask(caller, SHORT, explain=True)
    assert served.degraded == (Degradation.DENSE_UNAVAILABLE,)
    assert {name for name, _ in served.answer.trace.channels} == {"bm25"}
    assert served.answer.status.value == "answer"
    assert [c.source_id for c in served.answer.citations] == ["faq-3.2-sso"]
    data = served.as_dict()
    assert data["degraded"] == ["dense_unavailable"] and data["trace"]["degraded"] == ["dense_unavailable"]
    assert [w["code"] for w in data["reason_words"]] == ["dense_unavailable"]
    operator = gate.admit(keys.operator)
    assert not gate.embedder.available
    assert "model server gone" in gate.status(operator)["components"]["dense"]
    # Without dense similarity the answer decision reads the dense features' training mean: the
    # running question is still answered from keywords, and the reasons say so.
    running = gate.ask(caller, RUNNING).as_dict()
    assert running["status"] == "answer"
    assert [w["code"] for w in running["reason_words"]] == ["dense_unavailable"]
    again = gate.ask(caller, SHORT)
    assert again.cache == "miss" and again.degraded  # degraded answers are never cached
    gate.embedder.inner = real
    gate.embedder.retry_after_s = 0
    gate.embedder._down_until = 0.0
    recovered = gate.ask(caller, SHORT)
    assert not recovered.degraded and recovered.cache == "miss"


def test_guarded_embedder_stays_off_for_a_while_after_a_failure() -> None:
    guarded = GuardedEmbedder(Broken(), retry_after_s=60)
    with pytest.raises(DenseUnavailableError, match="model server gone"):
        guarded.embed_batch(["x"])
    assert not guarded.available
    with pytest.raises(DenseUnavailableError, match="unavailable"):
        guarded.embed_batch(["x"])


@pytest.mark.parametrize("fault", ["raises", "times out"])
def test_reranker_failure_keeps_the_fused_order(gateway, fault) -> None:
    gate, keys = gateway
    guard = answering(gate).reranker
    guard.inner = Broken() if fault == "raises" else Slow(guard.inner)
    served = gate.ask(gate.admit(keys.public), RUNNING)
    if isinstance(guard.inner, Slow):
        guard.inner.release.set()
    assert served.degraded == (Degradation.RERANK_UNAVAILABLE,)
    trace = served.answer.trace
    chunks, documents = answering(gate).snapshot.chunks, answering(gate).snapshot.documents

    def by_trust(ids):  # each trust pool is fused and reranked on its own
        pools: dict[str, list[str]] = {}
        for cid in ids:
            pools.setdefault(documents[chunks[cid].document_id].trust.value, []).append(cid)
        return pools

    assert by_trust(cid for cid, _, _ in trace.reranked) == by_trust(cid for cid, _ in trace.fused)
    assert served.answer.status.value in {"answer", "partial"}  # every later gate still ran


def test_return_gate_failure_denies_and_serves_no_candidate(gateway, monkeypatch) -> None:
    gate, keys = gateway
    catalog = answering(gate).catalog

    def unreachable(*args, **kwargs):
        raise CatalogUnavailableError("catalog replica timed out")

    monkeypatch.setattr(catalog, "resolve_many", unreachable)  # what the return gate calls
    served = gate.ask(gate.admit(keys.public), RUNNING, explain=True)
    answer = served.answer
    assert answer.status.value == "abstain" and answer.reasons == ("catalog_unavailable",)
    assert answer.claims == () and answer.citations == ()
    data = served.as_dict()
    assert data["degraded"] == ["catalog_unavailable"] and data["citations"] == []
    assert data["reason_words"][0]["en"] == "the catalog could not be checked, so nothing is said"
    assert not data["trace"]["fused"] and not data["trace"]["final"]  # no candidate id leaves either
    monkeypatch.undo()
    assert gate.ask(gate.admit(keys.public), RUNNING).answer.status.value == "answer"  # nothing cached


def test_catalog_unreachable_denies_and_is_not_ready(gateway) -> None:
    gate, keys = gateway
    caller = gate.admit(keys.public)
    assert gate.readiness()["ready"]
    gate.store.connection.close()  # the catalog cannot be read any more, by either connection
    gate.side.connection.close()
    served = gate.ask(caller, RUNNING)
    assert served.answer.status.value == "abstain" and served.degraded == (Degradation.CATALOG_UNAVAILABLE,)
    assert served.answer.citations == ()
    readiness = gate.readiness()
    assert not readiness["ready"] and not readiness["checks"]["catalog"]["ok"]


def _hit(chunk_id: str, fusion: float) -> Hit:
    chunk = Chunk(chunk_id, "d", "dd", (), 0, 0, 1, ChunkKind.PARAGRAPH, "x")
    return Hit(chunk=chunk, scores=Scores(fusion=fusion, rerank=0.9), rank=9)


def test_fused_order_ranks_by_fusion_then_chunk_id() -> None:
    ordered = fused_order([_hit("b", 0.01), _hit("c", 0.03), _hit("a", 0.01)])
    assert [(h.chunk.chunk_id, h.rank) for h in ordered] == [("c", 1), ("a", 2), ("b", 3)]
    assert ordered[0].scores.rerank == 1.0 and ordered[1].scores.rerank == pytest.approx(1 / 3)


def test_the_lexical_stand_in_keeps_the_embedder_contract_and_relates_nothing() -> None:
    import numpy as np

    from veracity.service.core.degrade import LexicalEmbedder

    embedder = LexicalEmbedder(512)
    texts = ["plan", "计划", "login", "登录", "plan"]
    vectors = embedder.embed_batch(texts)
    assert vectors.shape == (5, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[4])  # deterministic
    assert np.array_equal(embedder.embed_batch(["计划"])[0], vectors[1])  # rows independent of the batch
    similarities = vectors[:4] @ vectors[:4].T - np.eye(4)
    assert np.abs(similarities).max() < 0.3  # below any synonym threshold: nothing is "near"
    assert embedder.embed_batch([]).shape == (0, 512)


def test_the_service_keeps_the_answers_own_degradation(gateway) -> None:
    """An answer the LLM could not write (``llm_unavailable``) served while the dense model is down
    names both: the service's notes add to the answer's, never replace them."""
    from dataclasses import replace

    from veracity.pipeline.trace import Audience
    from veracity.service.core.served import ServedAnswer

    gate, keys = gateway
    answer = gate.ask(gate.admit(keys.public), SHORT).answer
    composer = (("name", "llm"), ("outcome", "llm_unavailable"))
    unwritten = replace(answer, trace=replace(answer.trace, composer=composer))
    served = ServedAnswer(
        answer=unwritten, cache="miss", degraded=(Degradation.DENSE_UNAVAILABLE,), sources=(),
        audience=Audience.ASKER, explain=True,
    )  # fmt: skip
    data = served.as_dict()
    assert data["degraded"] == ["llm_unavailable", "dense_unavailable"] == data["trace"]["degraded"]
    healthy = ServedAnswer(answer=answer, cache="miss", degraded=(), sources=(), audience=Audience.ASKER)
    assert healthy.as_dict()["degraded"] == []
