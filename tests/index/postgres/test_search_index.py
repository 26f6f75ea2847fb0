"""PostgresSearchIndex: the SearchBackend contract (resident, SQL and sign-bit dense), parity with SQLite."""

from __future__ import annotations

import pytest

from tests.index.backend_contract import BackendContract, Items, corpus, ids_of
from tests.index.sqlite.test_search_index import sqlite_index
from veracity.catalog.catalog import Catalog
from veracity.catalog.postgres.store import PostgresStore
from veracity.index.embedders import FakeEmbedder
from veracity.index.postgres.search import PostgresSearchIndex
from veracity.index.postgres.tables import ensure_index_tables
from veracity.index.sqlite.tables import IndexTables
from veracity.text.tokens import tokenize


def postgres_index(url: str, items: Items, embedder, **options) -> PostgresSearchIndex:
    store = PostgresStore(url, pool_size=2)
    catalog = Catalog(store)
    with store.transaction():
        for document, chunks in items:
            catalog.add(document, chunks)
    index = PostgresSearchIndex(store, **options)
    with store.transaction():
        ensure_index_tables(store.connection, IndexTables(index.version))
    index.sync(catalog, embedder)
    return index


class TestPostgresContract(BackendContract):
    """The default: dense search on the tenant's matrix held in memory (SQLite's resident plans)."""

    dense_mode = "resident"
    exact_max: int | None = None

    @pytest.fixture(autouse=True)
    def _databases(self, pg_databases) -> None:
        self.make_database = pg_databases

    def make_backend(self, items, embedder):
        index = postgres_index(self.make_database(), items, embedder, dense_mode=self.dense_mode)
        if self.exact_max is not None:
            index.exact_max = self.exact_max
        return index


class TestPostgresSqlContract(TestPostgresContract):
    """Dense search in the database, every eligible vector's exact cosine."""

    dense_mode = "sql"


class TestPostgresSignBitsContract(TestPostgresContract):
    """Dense search in the database, ranked by sign bits first instead of the exact scan."""

    dense_mode = "sql"
    exact_max = 0

    def test_the_sign_bits_plan_was_used(self, setup) -> None:
        backend, items = setup
        vector = FakeEmbedder(dim=64).embed_batch(["SAML"], kind="query")[0]
        backend.dense_search(
            "acme",
            vector,
            k=2,
            eligible_document_ids=ids_of(items, "acme"),
            model_id=FakeEmbedder(dim=64).model_id,
        )
        assert backend.last_dense_plan == "sign-bits"


def test_scores_equal_the_sqlite_index(pg_url) -> None:
    embedder = FakeEmbedder(dim=64)
    items = corpus(extra_b=5)
    postgres, sqlite = postgres_index(pg_url, items, embedder), sqlite_index(items, embedder)
    in_database = PostgresSearchIndex(postgres.store, dense_mode="sql")
    for tenant in ("acme", "beta"):
        eligible = ids_of(items, tenant)
        for text in ("SAML 日志 证书 配置 重试 OIDC", "3.2 版本 升级", "E1042 证书"):
            tokens = tokenize(text)
            a = postgres.lexical_search(tenant, tokens, k=20, eligible_document_ids=eligible)
            b = sqlite.lexical_search(tenant, tokens, k=20, eligible_document_ids=eligible)
            assert [c for c, _ in a] == [c for c, _ in b]
            assert [round(s, 9) for _, s in a] == [round(s, 9) for _, s in b]
            vector = embedder.embed_batch([text], kind="query")[0]
            options = {"k": 20, "eligible_document_ids": eligible, "model_id": embedder.model_id}
            expected = sqlite.dense_search(tenant, vector, **options)
            assert postgres.dense_search(tenant, vector, **options) == expected
            assert postgres.last_dense_plan == "resident-exact"
            assert in_database.dense_search(tenant, vector, **options) == expected


def test_the_index_pointer_is_read_once_per_read_block(pg_url, monkeypatch) -> None:
    from veracity.index.postgres import search

    items = corpus()
    index = postgres_index(pg_url, items, FakeEmbedder(dim=64))
    reads: list[int] = []
    real = search.read_pointer
    monkeypatch.setattr(search, "read_pointer", lambda connection: reads.append(1) or real(connection))
    chunk_ids = [c.chunk_id for document, chunks in items for c in chunks if document.tenant == "acme"]
    with index.store.read():
        assert all(index.chunks[c].chunk_id == c for c in chunk_ids) and len(chunk_ids) > 3
        index.lexical_search("acme", tokenize("SAML"), k=3, eligible_document_ids=ids_of(items, "acme"))
    assert len(reads) == 1
    with index.store.read():  # a new block reads it again: a publish in between would be seen
        index.chunks[chunk_ids[0]]
    assert len(reads) == 2
    index.chunks[chunk_ids[0]]  # outside a block: every read asks
    index.chunks[chunk_ids[0]]
    assert len(reads) == 4
