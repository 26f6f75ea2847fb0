"""Postings in segments: merged by tier, removed chunks never scored nor their keys reused, arrays read back.

Built batch by batch (one chunk a batch), the PostgreSQL index must rank as the
SQLite index built in one go, hold a bounded number of segments, and drop a removed
document's postings at the next merge.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.index.backend_contract import corpus, ids_of
from tests.index.sqlite.test_search_index import sqlite_index
from veracity.catalog.catalog import Catalog
from veracity.catalog.postgres.store import PostgresStore
from veracity.index.embedders import FakeEmbedder
from veracity.index.postgres import segments
from veracity.index.postgres.search import PostgresSearchIndex
from veracity.index.postgres.tables import ensure_index_tables, postings_table
from veracity.index.sqlite.tables import IndexTables
from veracity.index.sqlite.verify import verify_version
from veracity.text.tokens import tokenize

QUERIES = ("SAML 日志 证书 配置 重试 OIDC", "3.2 版本 升级", "E1042 证书", "附录 7")


def _built_in_batches(url: str, items, embedder) -> tuple[PostgresSearchIndex, Catalog]:
    store = PostgresStore(url, pool_size=2)
    catalog = Catalog(store)
    index = PostgresSearchIndex(store)
    with store.transaction():
        ensure_index_tables(store.connection, IndexTables(index.version))
    for document, chunks in items:  # one document, one sync: one segment per batch
        with store.transaction():
            catalog.add(document, chunks)
        index.sync(catalog, embedder, batch_chunks=1)
    return index, catalog


def _lexical(index, items) -> list[object]:
    return [
        index.lexical_search(tenant, tokenize(text), k=20, eligible_document_ids=ids_of(items, tenant))
        for tenant in ("acme", "beta")
        for text in QUERIES
    ]


def _posting_keys(index: PostgresSearchIndex) -> list[int]:
    rows = index.store.connection.execute(
        f"SELECT u.k FROM {postings_table(index._state().tables)} AS p CROSS JOIN unnest(p.keys) AS u (k)"
    ).fetchall()
    return sorted({int(r[0]) for r in rows})


def test_many_small_batches_merge_and_rank_as_sqlite(pg_url, monkeypatch) -> None:
    monkeypatch.setattr(segments, "MERGE_FACTOR", 3)
    embedder = FakeEmbedder(dim=64)
    items = corpus(extra_b=12)
    index, catalog = _built_in_batches(pg_url, items, embedder)
    tables = index._state().tables
    counts = segments.segment_counts(index.store.connection, tables)
    assert sum(1 for d, _ in items if d.tenant == "beta") > 3 * 2  # merged more than once
    assert all(n < 3 for n in counts.values()), counts  # fewer than MERGE_FACTOR in the one tier
    assert _lexical(index, items) == _lexical(sqlite_index(items, embedder), items)
    verification = verify_version(index, catalog, embedder)
    assert verification.passed, verification.failures()


def test_a_removed_document_is_never_scored_and_its_keys_are_never_reused(pg_url, monkeypatch) -> None:
    monkeypatch.setattr(segments, "MERGE_FACTOR", 3)
    embedder = FakeEmbedder(dim=64)
    items = corpus(extra_b=2)
    index, catalog = _built_in_batches(pg_url, items, embedder)
    store = index.store
    last = items[-1][0]  # the newest document holds the highest chunk keys
    removed_keys = [
        int(r[0])
        for r in store.connection.execute(
            f"SELECT c.chunk_key FROM {index._state().tables.chunks} AS c JOIN "
            f"{index._state().tables.documents} AS d USING (doc_key) WHERE d.document_id = ?",
            (last.document_id,),
        ).fetchall()
    ]
    with store.transaction():
        store.delete_document(last.document_id)
    index.sync(catalog, embedder, batch_chunks=1)
    assert set(removed_keys) <= set(_posting_keys(index))  # waiting in their segment for a merge
    kept = [item for item in items if item[0].document_id != last.document_id]
    assert _lexical(index, kept) == _lexical(sqlite_index(kept, embedder), kept)

    fresh = corpus(extra_b=6)[len(items) - 1 :]  # documents never indexed before
    for document, chunks in fresh:
        with store.transaction():
            catalog.add(document, chunks)
        index.sync(catalog, embedder, batch_chunks=1)
    chunk_keys = {
        int(r[0]) for r in store.connection.execute(f"SELECT chunk_key FROM {index._state().tables.chunks}")
    }
    assert not chunk_keys & set(removed_keys)  # a new chunk never inherits a removed chunk's postings
    assert not set(removed_keys) & set(_posting_keys(index))  # merged away
    assert set(_posting_keys(index)) <= chunk_keys
    now = kept + fresh
    assert _lexical(index, now) == _lexical(sqlite_index(now, embedder), now)
    verification = verify_version(index, catalog, embedder)
    assert verification.passed, verification.failures()


def test_binary_arrays_and_joined_parts() -> None:
    header = (1).to_bytes(4, "big") + (0).to_bytes(4, "big") + (20).to_bytes(4, "big")
    data = header + (3).to_bytes(4, "big") + (1).to_bytes(4, "big")
    data += b"".join((8).to_bytes(4, "big") + v.to_bytes(8, "big", signed=True) for v in (5, -1, 2**40))
    assert segments._Int8Array(20).load(data).tolist() == [5, -1, 2**40]
    empty = (0).to_bytes(4, "big") * 3
    assert segments._Int8Array(20).load(empty).size == 0
    with pytest.raises(ValueError, match="one-dimensional"):
        segments._Int8Array(20).load((2).to_bytes(4, "big") + data[4:])
    keys = np.array([1, 3, 4, 9], dtype=np.int64)  # 7 was removed
    parts = [(np.array([4, 7, 9]), np.array([2, 1, 5])), (np.array([1, 3]), np.array([1, 1]))]
    joined = segments._joined("t", parts, keys)
    assert joined.keys.tolist() == [1, 3, 4, 9]
    assert joined.tf.tolist() == [1, 1, 2, 5]
    assert segments._joined("t", [], keys).keys.size == 0
    assert segments._joined("t", parts, np.empty(0, np.int64)).keys.size == 0
