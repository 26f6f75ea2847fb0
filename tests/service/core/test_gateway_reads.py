"""A search through the gateway reads one snapshot of the catalog: on PostgreSQL one transaction
(``BEGIN … COMMIT``) for the whole retrieval, as an ask, not one per statement (#36)."""

from __future__ import annotations

from typing import Any

import pytest

from veracity.catalog.keys import ApiKey
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import init_demo_kb
from veracity.service.core.gateway import Caller, Gateway

AS_OF = "2026-08-27T16:00:00Z"


def test_a_search_is_one_read_snapshot_on_postgresql(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    init_demo_kb(pg_url, FakeEmbedder()).catalog.store.close()
    gate = Gateway.open(pg_url)
    caller = Caller(ApiKey("k", "k", "starship", ("public",), False, "2026-01-01T00:00:00Z"))
    try:
        gate.search(caller, "3.2 的 Team 能用 SAML 吗", as_of=AS_OF)  # warm: what an engine loads once
        sent: list[str] = []
        original = psycopg.Cursor.execute

        def counted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            sent.append(str(query))
            return original(cursor, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", counted)
        found = gate.search(caller, "升级到 3.2 以后，我们公司的登录方式还能照旧吗？", as_of=AS_OF)
        monkeypatch.undo()
    finally:
        gate.close()
    assert found["hits"] and found["degraded"] == []
    assert sum(sql.startswith("BEGIN") for sql in sent) == 1, sent
    catalog_reads = [sql for sql in sent if "FROM documents AS d WHERE" in sql or "FROM chunks WHERE" in sql]
    # the return gate: the candidates' documents at once, their chunks at once
    assert len(catalog_reads) == 2, catalog_reads
