"""pg0007_index_layout and pg0008_postings_segments: an index of an earlier layout reads the same after.

The earlier layouts are recreated from a current index by SQL, the migrations'
records removed, and ``migrate`` run again: the first (postings keyed by tenant,
term and chunk with no document or length; foreign keys that cascaded; a
float-cosine HNSW index) goes through both; pg0007's (one postings row per chunk
with its document and length) through pg0008. The sign bits the migration
computes in SQL must equal those the writer computes in Python.
"""

from __future__ import annotations

import psycopg

from tests.index.backend_contract import corpus, ids_of
from tests.index.postgres.test_search_index import postgres_index
from veracity.catalog.postgres.migrations import migrate
from veracity.catalog.postgres.store import PostgresStore
from veracity.index.embedders import FakeEmbedder
from veracity.index.postgres.search import PostgresSearchIndex
from veracity.index.sqlite.resident import DenseMode
from veracity.text.tokens import tokenize

QUERIES = ("SAML 日志 证书 配置 重试 OIDC", "3.2 版本 升级", "E1042 证书")


def _results(index: PostgresSearchIndex, items, embedder) -> list[object]:
    found: list[object] = []
    for tenant in ("acme", "beta"):
        eligible = ids_of(items, tenant)
        for text in QUERIES:
            found.append(index.lexical_search(tenant, tokenize(text), k=20, eligible_document_ids=eligible))
            found.append(index.document_frequencies(tenant, tokenize(text), eligible_document_ids=eligible))
            vector = embedder.embed_batch([text], kind="query")[0]
            for threshold in (10**9, 0):  # the database's exact plan, then its sign-bits plan
                index.dense_mode, index.exact_max = DenseMode.SQL, threshold
                found.append(
                    index.dense_search(
                        tenant, vector, k=5, eligible_document_ids=eligible, model_id=embedder.model_id
                    )
                )
    return found


def _to_earlier_layout(raw: psycopg.Connection, vector_table: str) -> None:
    raw.execute("ALTER TABLE ix1_documents DROP COLUMN n_chunks, DROP COLUMN n_tokens")
    raw.execute("ALTER TABLE ix1_chunks ADD FOREIGN KEY (doc_key) REFERENCES ix1_documents ON DELETE CASCADE")
    raw.execute(
        "CREATE TABLE old_postings AS SELECT p.doc_tenant, p.term, u.k AS chunk_key, u.tf "
        "FROM ix1_postings AS p CROSS JOIN unnest(p.keys, p.tfs) AS u (k, tf) ORDER BY chunk_key"
    )
    raw.execute("DROP TABLE ix1_postings, ix1_segments")
    raw.execute("ALTER TABLE old_postings RENAME TO ix1_postings")
    raw.execute("ALTER TABLE ix1_postings ADD PRIMARY KEY (doc_tenant, term, chunk_key)")
    raw.execute(
        "ALTER TABLE ix1_postings ADD FOREIGN KEY (chunk_key) REFERENCES ix1_chunks ON DELETE CASCADE"
    )
    raw.execute("ALTER TABLE ix1_postings ENABLE ROW LEVEL SECURITY")
    raw.execute(
        "CREATE POLICY tenant_rows ON ix1_postings "
        "USING (doc_tenant = current_setting('veracity.tenant', true))"
    )
    raw.execute(f"ALTER TABLE {vector_table} DROP COLUMN bits")
    raw.execute(
        f"CREATE INDEX {vector_table}_hnsw ON {vector_table} USING hnsw (embedding vector_cosine_ops)"
    )
    raw.execute(
        f"ALTER TABLE {vector_table} ADD FOREIGN KEY (chunk_key) REFERENCES ix1_chunks ON DELETE CASCADE"
    )
    raw.execute("DELETE FROM _migrations WHERE name IN ('pg0007_index_layout', 'pg0008_postings_segments')")


def _to_rows_layout(raw: psycopg.Connection) -> None:
    """pg0007's postings: one row per (tenant, term, chunk) with the chunk's document and length."""
    raw.execute(
        "CREATE TABLE rows_postings AS SELECT p.doc_tenant, p.term, c.doc_key, u.k AS chunk_key, u.tf, "
        "c.n_tokens FROM ix1_postings AS p CROSS JOIN unnest(p.keys, p.tfs) AS u (k, tf) "
        "JOIN ix1_chunks AS c ON c.chunk_key = u.k ORDER BY p.doc_tenant, p.term, u.k"
    )
    raw.execute("DROP TABLE ix1_postings, ix1_segments")
    raw.execute("ALTER TABLE rows_postings RENAME TO ix1_postings")
    raw.execute("CREATE INDEX ix1_postings_by_term ON ix1_postings (doc_tenant, term)")
    raw.execute("DELETE FROM _migrations WHERE name = 'pg0008_postings_segments'")


def test_an_index_of_the_earlier_layout_reads_the_same_after_the_migration(pg_url) -> None:
    embedder = FakeEmbedder(dim=64)
    items = corpus(extra_b=5)
    index = postgres_index(pg_url, items, embedder)
    before = _results(index, items, embedder)
    vector_table = index.vector_model().table
    index.store.close()
    with psycopg.connect(pg_url, autocommit=True) as raw:
        with raw.transaction():
            _to_earlier_layout(raw, vector_table)
        assert migrate(raw) == ["pg0007_index_layout", "pg0008_postings_segments"]
        constraints = raw.execute(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text LIKE 'ix1_%'"
        ).fetchone()
        assert constraints == (0,)
        hnsw = raw.execute("SELECT count(*) FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'").fetchone()
        assert hnsw == (0,)
        differing = raw.execute(
            f"SELECT count(*) FROM {vector_table} WHERE bits <> binary_quantize(embedding)::bit(64)"
        ).fetchone()
        assert differing == (0,)
    after = _results(PostgresSearchIndex(PostgresStore(pg_url, pool_size=2)), items, embedder)
    assert after == before


def test_postings_of_one_row_per_chunk_become_one_segment_per_tenant(pg_url) -> None:
    embedder = FakeEmbedder(dim=64)
    items = corpus(extra_b=5)
    index = postgres_index(pg_url, items, embedder)
    before = _results(index, items, embedder)
    index.store.close()
    with psycopg.connect(pg_url, autocommit=True) as raw:
        with raw.transaction():
            _to_rows_layout(raw)
        assert migrate(raw) == ["pg0008_postings_segments"]
        segments = raw.execute(
            "SELECT doc_tenant, count(*) FROM ix1_segments GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert segments == [("acme", 1), ("beta", 1)]
        policies = raw.execute(
            "SELECT count(*) FROM pg_policies WHERE tablename IN ('ix1_postings', 'ix1_segments')"
        ).fetchone()
        assert policies == (2,)
    after = _results(PostgresSearchIndex(PostgresStore(pg_url, pool_size=2)), items, embedder)
    assert after == before
