"""Row-level security: a reader role sees one tenant's rows, whatever its query forgets to say.

The service reads as a role without ``BYPASSRLS`` (a member of ``veracity_reader``)
and sets ``veracity.tenant`` per transaction from the key's principal. These
tests connect as such a role and query every tenant-scoped table, catalog and
index alike, *without* a ``WHERE tenant = …``.
"""

from __future__ import annotations

import urllib.parse
import uuid

import psycopg
import pytest

from tests.index.backend_contract import corpus, ids_of
from tests.index.postgres.test_search_index import postgres_index
from veracity.catalog.postgres.migrations import READER_ROLE
from veracity.catalog.postgres.store import PostgresStore
from veracity.catalog.scope import acting_for
from veracity.index.embedders import FakeEmbedder
from veracity.index.postgres.search import PostgresSearchIndex
from veracity.text.tokens import tokenize

CATALOG = {"documents": "tenant", "chunks": "doc_tenant", "document_roles": "doc_tenant",
           "document_facts": "doc_tenant", "tenant_roles": "tenant", "source_files": "tenant"}  # fmt: skip


@pytest.fixture
def scoped(pg_url):
    """``(owner_url, reader_url, index)``: the two-tenant corpus, and a login role in the reader role."""
    index = postgres_index(pg_url, corpus(), FakeEmbedder(dim=64))
    index.store.put_roles("acme", ["public"])
    index.store.put_roles("beta", ["public"])
    role = f"asker_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN IN ROLE {READER_ROLE}")
    parts = urllib.parse.urlsplit(pg_url)
    reader_url = urllib.parse.urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))
    yield pg_url, reader_url, index
    index.store.close()
    with psycopg.connect(pg_url, autocommit=True) as owner:
        owner.execute(f"DROP ROLE IF EXISTS {role}")


def tenant_tables(connection) -> dict[str, str]:
    """Every tenant-scoped table of the database (catalog and every index version) → its tenant column."""
    found = dict(CATALOG)
    for (table,) in connection.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
        "AND (tablename LIKE 'ix%' OR tablename LIKE 'vec%')"
    ).fetchall():
        columns = {r[0] for r in connection.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,)
        )}  # fmt: skip
        if "doc_tenant" in columns or "tenant" in columns:
            found[table] = "doc_tenant" if "doc_tenant" in columns else "tenant"
    return found


def test_the_reader_role_cannot_bypass_row_level_security(scoped) -> None:
    _, reader_url, _ = scoped
    with psycopg.connect(reader_url) as reader:
        bypass, superuser = reader.execute(
            "SELECT rolbypassrls, rolsuper FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert (bypass, superuser) == (False, False)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            reader.execute("DELETE FROM documents")


def test_a_forgotten_where_tenant_still_returns_only_the_tenants_rows(scoped) -> None:
    owner_url, reader_url, _ = scoped
    with psycopg.connect(owner_url) as owner:
        tables = tenant_tables(owner)
        assert {"ix1_documents", "ix1_chunks", "ix1_postings"} <= set(tables)
        assert any(name.startswith("vec1_") for name in tables)
        expected = {
            table: dict(owner.execute(f"SELECT {column}, count(*) FROM {table} GROUP BY {column}").fetchall())
            for table, column in tables.items()
        }
    filled = [
        t for t in tables if t in ("documents", "chunks", "tenant_roles") or t.startswith(("ix1_", "vec1_"))
    ]
    assert all(set(expected[t]) == {"acme", "beta"} for t in filled if t != "ix1_document_roles")
    with psycopg.connect(reader_url) as reader:
        for table in tables:  # no tenant set: nothing at all
            assert reader.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table
        for tenant in ("acme", "beta"):
            with reader.transaction():
                reader.execute("SELECT set_config('veracity.tenant', %s, true)", (tenant,))
                for table, column in tables.items():
                    rows = reader.execute(f"SELECT {column} FROM {table}").fetchall()  # no WHERE tenant
                    assert {r[0] for r in rows} <= {tenant}, table
                    assert len(rows) == expected[table].get(tenant, 0), table
                joined = reader.execute(  # a join that forgets the tenant on both sides
                    "SELECT DISTINCT d.tenant FROM ix1_postings AS p CROSS JOIN unnest(p.keys) AS u (k) "
                    "JOIN ix1_chunks AS c ON c.chunk_key = u.k "
                    "JOIN ix1_documents AS d ON d.doc_key = c.doc_key"
                ).fetchall()
                assert joined == [(tenant,)]


def test_a_tenant_scoped_store_and_index_answer_only_for_that_tenant(scoped) -> None:
    owner_url, reader_url, _ = scoped
    store = PostgresStore(owner_url, reader_url=reader_url, pool_size=2)
    try:
        everyone = {d.tenant for d in store.find_documents()}  # the owner: every tenant
        assert everyone == {"acme", "beta"}
        index = PostgresSearchIndex(store)
        items = corpus()
        with acting_for("acme"), store.read():
            assert {d.tenant for d in store.find_documents()} == {"acme"}  # tenant=None: "all"
            assert store.roles("beta") == frozenset()
            assert set(index.documents) == ids_of(items, "acme")
            # a caller that names the wrong tenant's documents still gets nothing of theirs
            leaked = index.lexical_search(
                "beta", tokenize("SAML 日志"), k=10, eligible_document_ids=ids_of(items, "beta")
            )
            assert leaked == []
        with store.read():
            assert {d.tenant for d in store.find_documents()} == {"acme", "beta"}
    finally:
        store.close()
