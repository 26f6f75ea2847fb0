"""SQLiteSearchIndex: the SearchBackend contract, parity with IndexSnapshot, FTS5 and vec0 rules."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from tests.index.backend_contract import BackendContract, Items, corpus, doc, ids_of
from veracity.catalog.catalog import Catalog
from veracity.catalog.demo import demo_catalog
from veracity.catalog.sqlite import SQLiteStore
from veracity.index.embedders import FakeEmbedder
from veracity.index.snapshot import IndexSnapshot, index_text
from veracity.index.sqlite.fts import FTS_AUTOMERGE, fts_table_name
from veracity.index.sqlite.search import DenseMode, SQLiteSearchIndex
from veracity.index.sqlite.vectors import fetch_vectors, load_partition
from veracity.model.contracts import AnswerStatus, Principal
from veracity.model.errors import ConfigError, SearchIndexError
from veracity.model.governance import EligibilityScope, eligibility
from veracity.parse.chunking import chunk_for_index
from veracity.pipeline.engine import Engine
from veracity.text.tokens import tokenize


class CountingEmbedder(FakeEmbedder):
    """A FakeEmbedder that counts the texts it embeds."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
        self.texts = 0

    def embed_batch(self, texts, *, kind="passage"):
        self.texts += len(texts)
        return super().embed_batch(texts, kind=kind)


def sqlite_index(items: Items, embedder, **options) -> SQLiteSearchIndex:
    catalog = Catalog(SQLiteStore(":memory:"))
    for document, chunks in items:
        catalog.add(document, chunks)
    index = SQLiteSearchIndex(catalog.store, **options)  # type: ignore[arg-type]
    index.sync(catalog, embedder)
    return index


class TestIndexSnapshotContract(BackendContract):
    def make_backend(self, items, embedder):
        return IndexSnapshot.build(items, embedder)


class TestSQLiteContract(BackendContract):
    def make_backend(self, items, embedder):
        return sqlite_index(items, embedder)


class TestSQLiteSQLModeContract(BackendContract):
    """Dense search by vec0 KNN (threshold 0) instead of the resident matrix."""

    def make_backend(self, items, embedder):
        index = sqlite_index(items, embedder, dense_mode=DenseMode.SQL)
        index.sql_exact_max = 0
        return index


class TestSQLiteBinaryContract(BackendContract):
    """Dense search by sign-bit Hamming pre-selection + float rescoring, at every size."""

    def make_backend(self, items, embedder):
        index = sqlite_index(items, embedder)
        index.quantized_min_rows, index.oversample, index.min_candidates = 1, 2, 0
        return index


def test_binary_plan_is_used_above_the_threshold_and_keeps_to_the_eligible_rows(embedder) -> None:
    items = corpus(extra_b=30)
    index = sqlite_index(items, embedder)
    index.quantized_min_rows, index.oversample, index.min_candidates = 1, 1, 0
    eligible = ids_of(items, "beta")
    vector = embedder.embed_batch(["SAML 日志"], kind="query")[0]
    search = lambda: index.dense_search(  # noqa: E731
        "beta", vector, k=3, eligible_document_ids=eligible, model_id=embedder.model_id
    )
    found = search()
    assert index.last_dense_plan == "resident-binary" and len(found) == 3
    assert {cid for cid, _ in found} <= {c for d in eligible for c in index.chunks_by_document[d]}
    index.quantized_min_rows = None
    exact = search()
    assert index.last_dense_plan == "resident-exact"
    exact_scores = dict(exact)
    assert all(abs(exact_scores[c] - s) < 1e-6 for c, s in found if c in exact_scores)  # rescored exactly


def assert_same_ranking(found, expected, tol: float = 1e-5) -> None:
    """Equal rankings up to float rounding: ids may only swap or fall off where scores tie within ``tol``."""
    assert len(found) == len(expected)
    for (a_id, a_score), (b_id, b_score) in zip(found, expected, strict=True):
        assert abs(a_score - b_score) <= tol
        if a_id != b_id:
            assert abs(dict(expected).get(a_id, b_score) - b_score) <= tol


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder(dim=64)


def test_scores_equal_the_in_memory_snapshot(embedder) -> None:
    items = corpus(extra_b=5)
    snapshot, index = IndexSnapshot.build(items, embedder), sqlite_index(items, embedder)
    rng = random.Random(7)
    vocabulary = sorted({t for _, chunks in items for c in chunks for t in tokenize(index_text(c))})
    for tenant in ("acme", "beta"):
        everything = ids_of(items, tenant)
        for _ in range(25):
            eligible = {d for d in everything if rng.random() < 0.6} or everything
            tokens = [*rng.sample(vocabulary, 4), "3.2", "3.2"]
            a = snapshot.lexical_search(tenant, tokens, k=8, eligible_document_ids=eligible)
            b = index.lexical_search(tenant, tokens, k=8, eligible_document_ids=eligible)
            assert [cid for cid, _ in a] == [cid for cid, _ in b]
            assert np.allclose([s for _, s in a], [s for _, s in b], rtol=1e-12, atol=0)
            vector = embedder.embed_batch([" ".join(tokens)], kind="query")[0]
            a = snapshot.dense_search(
                tenant, vector, k=8, eligible_document_ids=eligible, model_id=embedder.model_id
            )
            b = index.dense_search(
                tenant, vector, k=8, eligible_document_ids=eligible, model_id=embedder.model_id
            )
            assert_same_ranking(b, a)


@pytest.mark.parametrize("identifier", ["3.2", "config.max_retries", "--to", "e1042", "python"])
def test_identifier_tokens_survive_fts5(embedder, identifier) -> None:
    items = corpus()
    index = sqlite_index(items, embedder)
    hits = index.lexical_search("acme", [identifier], k=5, eligible_document_ids=ids_of(items, "acme"))
    assert hits
    assert all(identifier in tokenize(index_text(index.chunks[cid])) for cid, _ in hits)


def test_fts5_holds_exactly_the_veracity_tokens() -> None:
    catalog = demo_catalog()
    index = SQLiteSearchIndex(catalog.store)
    index.sync(catalog, FakeEmbedder())
    table = fts_table_name("starship", index.version)
    connection = catalog.store.connection
    stored: dict[int, list[str]] = {}
    for term, key in connection.execute(f"SELECT term, doc FROM {table}_instances ORDER BY doc, offset"):
        stored.setdefault(key, []).append(term)
    keys = dict(connection.execute(f"SELECT chunk_id, chunk_key FROM ix{index.version}_chunks"))
    for chunk_id, key in keys.items():
        assert stored.get(key, []) == tokenize(index_text(index.chunks[chunk_id]))
    # an ingest's many small segments are merged FTS_AUTOMERGE at a time, not FTS5's default 4
    config = dict(connection.execute(f"SELECT k, v FROM {table}_config"))
    assert config["automerge"] == FTS_AUTOMERGE != 4


def test_vec0_selective_filter_returns_exactly_min_k_eligible() -> None:
    embedder = FakeEmbedder(dim=16)
    items = corpus(extra_b=60)  # beta: 62 documents
    index = sqlite_index(items, embedder, dense_mode=DenseMode.SQL)
    index.sql_exact_max = 0  # always the vec0 KNN
    few = ids_of(items, "beta", "beta-3", "beta-40")  # a selective filter: 2 of 62 documents
    eligible_chunks = sum(len(index.chunks_by_document[d]) for d in few)
    vector = embedder.embed_batch(["SAML 日志"], kind="query")[0]
    for k in (1, eligible_chunks, eligible_chunks + 5, 50):
        hits = index.dense_search("beta", vector, k=k, eligible_document_ids=few, model_id=embedder.model_id)
        assert index.last_dense_plan == "vec0-knn"
        assert len(hits) == min(k, eligible_chunks)
        assert {index.chunks[cid].document_id for cid, _ in hits} <= few


def test_dense_plans_agree(embedder) -> None:
    items = corpus(extra_b=30)
    resident = sqlite_index(items, embedder)
    sql = SQLiteSearchIndex(resident.store, dense_mode=DenseMode.SQL)
    vector = embedder.embed_batch(["证书 日志 SAML"], kind="query")[0]
    eligible = ids_of(items, "beta")
    expected = resident.dense_search(
        "beta", vector, k=10, eligible_document_ids=eligible, model_id=embedder.model_id
    )
    for threshold in (0, 10_000):
        sql.sql_exact_max = threshold
        found = sql.dense_search(
            "beta", vector, k=10, eligible_document_ids=eligible, model_id=embedder.model_id
        )
        assert_same_ranking(found, expected)


def test_resident_matrix_equals_the_stored_vectors(embedder) -> None:
    index = sqlite_index(corpus(extra_b=3), embedder)
    model = index.vector_model()
    assert model is not None
    loaded = load_partition(index.store.connection, model.table, "beta", model.dim)
    assert loaded is not None
    keys, matrix = loaded
    fetched_keys, fetched = fetch_vectors(index.store.connection, model.table, keys.tolist(), model.dim)
    assert np.array_equal(keys, fetched_keys) and np.array_equal(matrix, fetched)


def test_sync_updates_status_and_removes_without_re_embedding() -> None:
    embedder = CountingEmbedder()
    items = corpus()
    index = sqlite_index(items, embedder)
    catalog = Catalog(index.store)
    embedded = embedder.texts
    assert embedded == sum(len(c) for _, c in items)
    install = next(d for d, _ in items if d.source_id == "install")
    catalog.withdraw(install.document_id)
    report = index.sync(catalog, embedder)
    assert (report.updated_documents, report.added_documents, embedder.texts) == (1, 0, embedded)
    assert index.documents[install.document_id].status.value == "withdrawn"
    logs = next(d for d, _ in items if d.source_id == "logs" and d.tenant == "acme")
    catalog.store.delete_document(logs.document_id)
    assert index.sync(catalog, embedder).removed_documents == 1
    assert logs.document_id not in index.documents
    assert index.lexical_search("acme", ["日志"], k=5, eligible_document_ids=ids_of(items, "acme")) == []
    assert index.stats().vectors == index.stats().chunks
    extra = doc("fresh", text="# 新文档\n\n离线模式说明。")
    catalog.add(extra, chunk_for_index(extra))
    assert index.sync(catalog, embedder).added_documents == 1
    assert embedder.texts == embedded + len(chunk_for_index(extra))


def test_refresh_brings_in_line_only_the_documents_it_names() -> None:
    embedder = CountingEmbedder()
    items = corpus()
    index = sqlite_index(items, embedder)
    catalog = Catalog(index.store)
    install = next(d for d, _ in items if d.source_id == "install")
    logs = next(d for d, _ in items if d.source_id == "logs" and d.tenant == "acme")
    catalog.withdraw(install.document_id)
    catalog.withdraw(logs.document_id)
    assert index.refresh(catalog, [install.document_id]) is True
    assert index.documents[install.document_id].status.value == "withdrawn"
    assert index.documents[logs.document_id].status.value == "active"  # not named: left to sync
    assert index.refresh(catalog, [install.document_id]) is False  # nothing left to change
    catalog.store.delete_document(install.document_id)
    assert index.refresh(catalog, [install.document_id]) is True
    assert install.document_id not in index.documents
    extra = doc("fresh", text="# 新文档\n\n离线模式说明。")
    catalog.add(extra, chunk_for_index(extra))
    assert index.refresh(catalog, [extra.document_id]) is False  # not indexed yet: sync indexes it
    assert extra.document_id not in index.documents
    report = index.sync(catalog, embedder)
    assert (report.updated_documents, report.removed_documents, report.added_documents) == (1, 0, 1)


def test_vectors_are_all_or_nothing(embedder) -> None:
    items = corpus()
    lexical_only = sqlite_index(items[:3], None)
    with pytest.raises(ConfigError, match="without vectors"):
        lexical_only.add(items[3:], embedder)
    with_vectors = sqlite_index(items[:3], embedder)
    with pytest.raises(ConfigError, match="needs its embedder"):
        with_vectors.add(items[3:], None)
    with pytest.raises(SearchIndexError, match="no vectors"):
        lexical_only.dense_search(
            "acme", np.ones(64, np.float32), k=1, eligible_document_ids=ids_of(items, "acme"), model_id="m"
        )


def test_sql_governance_filter_agrees_with_eligibility() -> None:
    catalog = demo_catalog()
    index = SQLiteSearchIndex(catalog.store)
    index.sync(catalog, FakeEmbedder())
    for document in (
        doc("v-min", text="# a\n\nx"),
        doc("v-range", text="# b\n\ny"),
    ):
        catalog.add(document, chunk_for_index(document))
    index.sync(catalog, FakeEmbedder())
    start = datetime(2026, 1, 1, tzinfo=UTC)
    roles = ["public", "support", "maintainer", "security", "intruder"]
    rng = random.Random(3)
    for _ in range(120):
        tenant = rng.choice(["starship", "acme", ""])
        principal = Principal(tenant=tenant, roles=frozenset(rng.sample(roles, rng.randint(0, 2))))
        version = rng.choice(["2.8", "2.8.1", "3", "3.2", "3.2.1", "3.3", "10.0", None])
        as_of = start + timedelta(days=rng.randint(0, 400), hours=rng.randint(0, 23))
        scope = EligibilityScope(principal, version, as_of, catalog.roles(tenant) if tenant else frozenset())
        expected = {d.document_id for d in index.documents.values() if eligibility(d, scope).eligible}
        assert index.eligible_document_ids(scope) == expected


@pytest.fixture
def demo_pair(config):
    embedder = FakeEmbedder()
    memory = Engine.demo(embedder)
    catalog = demo_catalog()
    persistent = Engine(catalog, embedder, backend=SQLiteSearchIndex(catalog.store))
    persistent.reindex()
    return memory, persistent


def _facts(answer) -> set[str]:
    return {fact for claim in answer.claims for fact in claim.fact_ids}


def test_demo_question_answers_the_same_on_both_backends(demo_pair, config) -> None:
    memory, persistent = demo_pair
    principal = Principal.of(config.tenant, config.role)
    a = memory.ask(config.running_question, principal, config.target_version, config.as_of)
    b = persistent.ask(config.running_question, principal, config.target_version, config.as_of)
    assert a.status is b.status is AnswerStatus.ANSWER
    assert _facts(a) == _facts(b) and {"sso-team-32", "members-preserved-32"} <= _facts(b)
    assert [c.chunk_id for c in a.citations] == [c.chunk_id for c in b.citations]
    ids = lambda answer: [[cid for cid, _ in pairs] for _, pairs in answer.trace.channels]  # noqa: E731
    assert ids(a) == ids(b)


def test_demo_question_with_the_real_default_embedder(demo_kb, config) -> None:
    catalog = demo_catalog()
    persistent = Engine(catalog, demo_kb.embedder, backend=SQLiteSearchIndex(catalog.store))
    persistent.reindex()
    principal = Principal.of(config.tenant, config.role)
    a = demo_kb.ask(config.running_question, principal, config.target_version, config.as_of)
    b = persistent.ask(config.running_question, principal, config.target_version, config.as_of)
    assert a.status is b.status is AnswerStatus.ANSWER
    assert _facts(a) == _facts(b)
    assert [c.chunk_id for c in a.citations] == [c.chunk_id for c in b.citations]


def test_withdrawn_after_indexing_is_rejected_at_the_return_gate(demo_pair, config) -> None:
    _, kb = demo_pair
    faq = kb.catalog.document("faq-3.2-sso")
    kb.catalog.withdraw(faq.document_id)  # the SQLite index is now stale
    answer = kb.ask(
        config.running_question, Principal.of(config.tenant, config.role), config.target_version, config.as_of
    )
    rejected = answer.trace.gate_rejections
    assert rejected and {reason for _, reason in rejected} == {"status"}
    assert {kb.snapshot.chunks[cid].document_id for cid, _ in rejected} == {faq.document_id}
    assert "faq-3.2-sso" not in {c.source_id for c in answer.citations}
    kb.reindex()  # now the index knows: the document is filtered before scoring
    again = kb.ask(
        config.running_question, Principal.of(config.tenant, config.role), config.target_version, config.as_of
    )
    assert again.trace.gate_rejections == ()
