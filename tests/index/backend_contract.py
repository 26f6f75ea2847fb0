"""Contract tests every ``SearchBackend`` passes (IndexSnapshot, SQLiteSearchIndex, ...).

Subclass :class:`BackendContract` and implement ``make_backend(items, embedder)``.
The corpus has two tenants, documents of every status, and two documents with
identical text (so scores tie and the chunk id must break the tie).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from veracity.index.embedders import FakeEmbedder
from veracity.index.snapshot import SearchBackend
from veracity.model.contracts import Chunk, Document, Trust
from veracity.model.errors import EmbedderMismatchError
from veracity.parse.chunking import chunk_for_index
from veracity.parse.documents import make_document
from veracity.text.tokens import tokenize

Items = list[tuple[Document, tuple[Chunk, ...]]]

TEXTS = {
    "install": (
        "# 安装\n\n星舰 3.2 需要 Python 3.11。运行 starship init 初始化配置。"
        "\n\n## 重试\n\n配置项 config.max_retries 控制重试次数，默认值为 3。"
    ),
    "upgrade": "# 升级\n\n使用 --to 参数指定迁移的目标版本，例如 --to 3.2。升级前请备份数据库。",
    "sso": "# 单点登录\n\n3.2 的 Team 计划不能再使用旧版 SAML 单点登录，需要迁移到 OIDC。",
    "logs": "# 日志\n\n日志默认保留 30 天，可以在控制台修改保留时间。离线模式下仍可查看日志。",
    "twin-a": "# 证书\n\n错误码 E1042 表示证书已过期，需要重新签发证书。",
    "twin-b": "# 证书\n\n错误码 E1042 表示证书已过期，需要重新签发证书。",
    "old": "# 旧版\n\n2.8 的 Team 计划可以使用 SAML 单点登录。",
}


def doc(source: str, tenant: str = "acme", status: str = "active", text: str | None = None) -> Document:
    """A public official document of ``tenant``."""
    return make_document(
        {
            "id": source,
            "revision": "1",
            "title": source,
            "tenant": tenant,
            "valid_from": "2024-01-01T00:00:00Z",
            "status": status,
            "visibility": "public",
            "trust": "official",
        },
        text if text is not None else TEXTS[source],
    )


def corpus(extra_b: int = 0) -> Items:
    """Tenant ``acme`` (all texts, one retired) and tenant ``beta`` (+ ``extra_b`` more docs)."""
    documents = [doc(name, status="retired" if name == "old" else "active") for name in TEXTS]
    documents += [doc(f"beta-{name}", tenant="beta", text=TEXTS[name]) for name in ("sso", "logs")]
    for i in range(extra_b):
        documents.append(
            doc(f"beta-{i}", tenant="beta", text=f"# 附录 {i}\n\nSAML 日志 证书 {i} 配置 重试 OIDC")
        )
    return [(d, chunk_for_index(d)) for d in documents]


def ids_of(items: Items, tenant: str, *sources: str) -> set[str]:
    """Document ids of ``sources`` (all of the tenant's when none given)."""
    return {d.document_id for d, _ in items if d.tenant == tenant and (not sources or d.source_id in sources)}


def chunk_ids(backend: SearchBackend, document_ids: set[str]) -> set[str]:
    """Every chunk id of the given documents."""
    return {cid for did in document_ids for cid in backend.chunks_by_document[did]}


class BackendContract:
    """The behaviour the pipeline relies on; see ``veracity.index.snapshot.SearchBackend``."""

    def make_backend(self, items: Items, embedder: FakeEmbedder) -> SearchBackend:
        """Build the backend under test over ``items``."""
        raise NotImplementedError

    @pytest.fixture
    def embedder(self) -> FakeEmbedder:
        return FakeEmbedder(dim=64)

    @pytest.fixture
    def setup(self, embedder: FakeEmbedder) -> tuple[SearchBackend, Items]:
        items = corpus()
        return self.make_backend(items, embedder), items

    def dense(self, backend, embedder, text: str, k: int, eligible: set[str], tenant: str = "acme"):
        vector = embedder.embed_batch([text], kind="query")[0]
        return backend.dense_search(
            tenant, vector, k=k, eligible_document_ids=eligible, model_id=embedder.model_id
        )

    def test_views_hold_every_document_and_chunk(self, setup) -> None:
        backend, items = setup
        assert set(backend.documents) == {d.document_id for d, _ in items}
        for document, chunks in items:
            assert backend.documents[document.document_id] == document
            assert backend.chunks_by_document[document.document_id] == tuple(c.chunk_id for c in chunks)
            for chunk in chunks:
                assert backend.chunks[chunk.chunk_id] == chunk
        assert len(backend.chunks) == sum(len(c) for _, c in items)
        by_trust = backend.document_ids_by_trust
        for trust in Trust:  # a partition of the documents by trust, each tier present
            assert by_trust[trust] == {d.document_id for d, _ in items if d.trust is trust}

    def test_results_come_only_from_eligible_documents(self, setup, embedder) -> None:
        backend, items = setup
        eligible = ids_of(items, "acme", "install", "upgrade")
        allowed = chunk_ids(backend, eligible)
        tokens = tokenize("3.2 版本 配置 SAML 证书 日志")
        lexical = backend.lexical_search("acme", tokens, k=50, eligible_document_ids=eligible)
        dense = self.dense(backend, embedder, "3.2 版本 配置 SAML 证书 日志", 50, eligible)
        assert lexical and {cid for cid, _ in lexical} <= allowed
        assert {cid for cid, _ in dense} == allowed  # dense ranks every eligible chunk when k is large

    def test_other_tenants_documents_are_never_scored(self, setup, embedder) -> None:
        backend, items = setup
        beta = ids_of(items, "beta")
        assert backend.lexical_search("acme", ["saml"], k=10, eligible_document_ids=beta) == []
        assert self.dense(backend, embedder, "SAML", 10, beta) == []
        assert backend.lexical_search("nobody", ["saml"], k=10, eligible_document_ids=beta) == []

    def test_document_frequencies_count_only_eligible_chunks(self, setup) -> None:
        backend, items = setup
        eligible = ids_of(items, "acme", "sso", "old", "install")
        total, found = backend.document_frequencies(
            "acme", ["saml", "e1042", "nowhere"], eligible_document_ids=eligible
        )
        assert total == len(chunk_ids(backend, eligible))
        expected = {
            term: sum(
                term in tokenize(backend.chunks[cid].text) for cid in chunk_ids(backend, eligible)
            )
            for term in ("saml", "e1042")
        }
        assert found == {**expected, "nowhere": 0} and expected["saml"] >= 2 and expected["e1042"] == 0
        assert backend.document_frequencies("acme", ["saml"], eligible_document_ids=set()) == (0, {"saml": 0})
        beta = ids_of(items, "beta")
        assert backend.document_frequencies("acme", ["saml"], eligible_document_ids=beta)[1] == {"saml": 0}

    def test_empty_eligible_set_scores_nothing(self, setup, embedder) -> None:
        backend, _ = setup
        assert backend.lexical_search("acme", ["saml"], k=10, eligible_document_ids=set()) == []
        assert self.dense(backend, embedder, "SAML", 10, set()) == []

    def test_k_is_respected_and_results_are_best_first(self, setup, embedder) -> None:
        backend, items = setup
        eligible = ids_of(items, "acme")
        tokens = tokenize("3.2 配置 证书 日志 SAML 重试")
        for k in (1, 2, 3):
            lexical = backend.lexical_search("acme", tokens, k=k, eligible_document_ids=eligible)
            dense = self.dense(backend, embedder, "3.2 配置 证书", k, eligible)
            assert len(lexical) == k and len(dense) == k
            for pairs in (lexical, dense):
                scores = [s for _, s in pairs]
                assert scores == sorted(scores, reverse=True)

    def test_lexical_scores_are_positive_only(self, setup) -> None:
        backend, items = setup
        eligible = ids_of(items, "acme")
        hits = backend.lexical_search("acme", tokenize("SAML 单点登录"), k=50, eligible_document_ids=eligible)
        assert hits and all(score > 0 for _, score in hits)
        assert backend.lexical_search("acme", ["不存在的词"], k=5, eligible_document_ids=eligible) == []

    def test_ties_break_by_chunk_id(self, setup, embedder) -> None:
        backend, items = setup
        twins = ids_of(items, "acme", "twin-a", "twin-b")
        lexical = backend.lexical_search("acme", tokenize("E1042 证书"), k=10, eligible_document_ids=twins)
        dense = self.dense(backend, embedder, "E1042 证书", 10, twins)
        for pairs in (lexical, dense):
            by_score: dict[float, list[str]] = {}
            for cid, score in pairs:
                by_score.setdefault(round(score, 9), []).append(cid)
            assert any(len(group) > 1 for group in by_score.values())
            assert all(group == sorted(group) for group in by_score.values())

    def test_a_tenants_scores_do_not_move_when_another_tenant_grows(self, embedder) -> None:
        small, large = corpus(), corpus(extra_b=12)
        before = self.make_backend(small, embedder)
        after = self.make_backend(large, embedder)
        eligible = ids_of(small, "acme")
        tokens = tokenize("SAML 日志 证书 配置 重试 OIDC")
        first = before.lexical_search("acme", tokens, k=20, eligible_document_ids=eligible)
        second = after.lexical_search("acme", tokens, k=20, eligible_document_ids=eligible)
        assert first and first == second
        beta_before = before.lexical_search("beta", tokens, k=5, eligible_document_ids=ids_of(small, "beta"))
        beta_after = after.lexical_search("beta", tokens, k=5, eligible_document_ids=ids_of(large, "beta"))
        assert beta_before != beta_after  # the check above is not vacuous: beta's own growth moves beta

    def test_dense_refuses_another_model(self, setup, embedder) -> None:
        backend, items = setup
        vector = np.ones(embedder.dim, dtype=np.float32)
        with pytest.raises(EmbedderMismatchError):
            backend.dense_search(
                "acme", vector, k=3, eligible_document_ids=ids_of(items, "acme"), model_id="other@1"
            )

    def test_queries_do_not_depend_on_the_eligible_collection_type(self, setup, embedder) -> None:
        backend, items = setup
        eligible: Sequence[str] = sorted(ids_of(items, "acme"))
        tokens = tokenize("配置 证书")
        as_list = backend.lexical_search("acme", tokens, k=5, eligible_document_ids=eligible)
        as_set = backend.lexical_search("acme", tokens, k=5, eligible_document_ids=set(eligible))
        assert as_list == as_set

    def test_a_document_outside_the_eligible_set_changes_no_score(self, embedder) -> None:
        base = corpus()
        hidden = doc("hidden", text="# 内部\n\nE1042 证书 SAML 配置 日志 罕见词汇 quasar 重试 3.2")
        before = self.make_backend(base, embedder)
        after = self.make_backend([*base, (hidden, chunk_for_index(hidden))], embedder)
        eligible = ids_of(base, "acme") - ids_of(base, "acme", "old")
        for text in ("E1042 证书 SAML", "配置 日志 quasar", "3.2 重试"):
            tokens = tokenize(text)
            first = before.lexical_search("acme", tokens, k=20, eligible_document_ids=eligible)
            second = after.lexical_search("acme", tokens, k=20, eligible_document_ids=eligible)
            assert first and first == second
            dense_before = self.dense(before, embedder, text, 20, eligible)
            assert dense_before == self.dense(after, embedder, text, 20, eligible)
        # not vacuous: once the hidden document is eligible, it is found and the statistics move
        widened = after.lexical_search(
            "acme", tokenize("E1042 证书"), k=20, eligible_document_ids=eligible | {hidden.document_id}
        )
        assert set(after.chunks_by_document[hidden.document_id]) & {cid for cid, _ in widened}
