"""The return gate reads the live catalog in a constant number of statements per ask (the
candidates' documents, their revisions, the tenant's roles and the passing chunks, each at once),
and decides every candidate exactly as checking it alone against the catalog does."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from veracity.catalog.catalog import Catalog
from veracity.fixtures import TenantConfig
from veracity.index.embedders import FakeEmbedder
from veracity.kb.local import open_local
from veracity.model.contracts import Hit, Principal, Query
from veracity.model.errors import NotFoundError
from veracity.model.governance import HIDDEN_REASONS
from veracity.pipeline import retrieve
from veracity.pipeline.engine import Engine

GATE_STATEMENTS = 6
"""At most: BEGIN, the documents, their revisions, the roles, the chunks, COMMIT."""


def one_by_one(
    hits: list[Hit], query: Query, catalog: Catalog
) -> tuple[list[Hit], list[tuple[str, str]], int]:
    """The reference: each candidate resolved and its chunk read alone (the gate before #36)."""
    kept: list[Hit] = []
    rejections: list[tuple[str, str]] = []
    hidden = 0
    for hit in hits:
        chunk = hit.chunk
        live = catalog.resolve(chunk.document_id, query.principal, query.version, query.as_of)
        reason = None if live.eligible else str(live.primary_reason)
        if reason is None and live.content_digest != chunk.document_digest:
            reason = "digest"
        if reason is None:
            try:
                current: str | None = catalog.store.get_chunk(chunk.chunk_id).content_digest
            except NotFoundError:
                current = None
            if current != chunk.content_digest:
                reason = "chunk"
        if reason is None:
            kept.append(replace(hit, rank=len(kept) + 1))
        elif reason in HIDDEN_REASONS:
            hidden += 1
        else:
            rejections.append((chunk.chunk_id, reason))
    return kept, rejections, hidden


def every_chunk_as_a_candidate(kb: Engine) -> list[Hit]:
    """Every indexed chunk of every document (any tenant, any status), as ranked candidates."""
    snapshot = kb.snapshot
    assert snapshot is not None
    ids = [
        cid for document_id in sorted(snapshot.documents) for cid in snapshot.chunks_by_document[document_id]
    ]
    return [Hit(chunk=snapshot.chunks[cid], rank=rank) for rank, cid in enumerate(ids, start=1)]


@contextmanager
def statements_on(store: Any) -> Iterator[list[str]]:
    """The statements ``store`` runs in the block: its SQLite connection's, or on PostgreSQL every
    one psycopg sends (``BEGIN`` and ``COMMIT`` included)."""
    seen: list[str] = []

    def trace(_cursor: Any, sql: str, _bindings: Any) -> bool:
        seen.append(sql)
        return True

    if getattr(store.connection, "dialect", "sqlite") != "postgresql":
        store.connection.exec_trace = trace
        try:
            yield seen
        finally:
            store.connection.exec_trace = None
        return
    import psycopg

    with pytest.MonkeyPatch.context() as patch:
        original = psycopg.Cursor.execute

        def counted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(str(query))
            return original(cursor, query, *args, **kwargs)

        patch.setattr(psycopg.Cursor, "execute", counted)
        yield seen


def _changed_after_indexing(kb: Engine) -> None:
    """The catalog moves on after indexing, in every way the gate checks."""
    catalog = kb.catalog
    connection: Any = catalog.store.connection  # type: ignore[attr-defined]
    catalog.withdraw(catalog.document("faq-3.2-sso").document_id)  # status
    catalog.store.delete_document(catalog.document("release-notes-3.2").document_id)  # gone: status
    connection.execute(  # content changed while active: digest
        "UPDATE documents SET content_digest = ? WHERE document_id = ?",
        ("0" * 64, catalog.document("plans-3.2").document_id),
    )
    connection.execute(  # expired: validity
        "UPDATE documents SET valid_until = '2020-01-01T00:00:00.000000+00:00' WHERE document_id = ?",
        (catalog.document("admin-invites-3.2").document_id,),
    )
    migration = catalog.chunks(catalog.document("migration-2x-to-3.2").document_id)
    connection.execute("UPDATE chunks SET text = text || '!' WHERE chunk_id = ?", (migration[0].chunk_id,))
    connection.execute("DELETE FROM chunks WHERE chunk_id = ?", (migration[-1].chunk_id,))  # chunk


@pytest.mark.parametrize(
    ("role", "version", "roles_left"),
    [
        ("public", "3.2", None),
        ("public", None, None),
        ("maintainer", "3.2", None),
        ("public", "2.8", None),
        ("public", "3.2", {"maintainer"}),  # the asker's role no longer defined: everything hidden
    ],
)
def test_the_gate_decides_as_checking_each_candidate_alone(
    fake_kb: Engine,
    config: TenantConfig,
    role: str,
    version: str | None,
    roles_left: set[str] | None,
) -> None:
    _changed_after_indexing(fake_kb)
    if roles_left is not None:
        fake_kb.catalog.define_roles(config.tenant, roles_left)
    hits = every_chunk_as_a_candidate(fake_kb)
    query = Query(
        text="SSO", principal=Principal.of(config.tenant, role), version=version, as_of=config.as_of
    )
    with statements_on(fake_kb.catalog.store) as statements:
        decided = retrieve._return_gate(hits, query, fake_kb.catalog)
    expected = one_by_one(hits, query, fake_kb.catalog)
    assert decided == expected
    assert len(statements) <= GATE_STATEMENTS, statements
    kept, rejections, hidden = decided
    assert len(kept) + len(rejections) + hidden == len(hits)
    if roles_left is None and role == "public" and version == "3.2":
        assert {reason for _, reason in rejections} >= {"status", "digest", "validity", "chunk"}


def test_the_gate_reads_as_many_statements_for_many_candidates_as_for_few(
    fake_kb: Engine, config: TenantConfig
) -> None:
    hits = every_chunk_as_a_candidate(fake_kb)
    query = Query(
        text="SSO", principal=Principal.of(config.tenant, "public"), version="3.2", as_of=config.as_of
    )
    kept = {hit.chunk.chunk_id for hit in retrieve._return_gate(hits, query, fake_kb.catalog)[0][:3]}
    few = [hit for hit in hits if hit.chunk.chunk_id in kept]
    counts = []
    for some in (few, hits):
        with statements_on(fake_kb.catalog.store) as statements:
            retrieve._return_gate(some, query, fake_kb.catalog)
        counts.append(len(statements))
    assert counts[0] == counts[1] <= GATE_STATEMENTS
    with statements_on(fake_kb.catalog.store) as statements:
        assert retrieve._return_gate([], query, fake_kb.catalog) == ([], [], 0)
    assert statements == []


def test_a_chunk_whose_document_failed_is_not_read(
    fake_kb: Engine, config: TenantConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[list[str]] = []
    store = fake_kb.catalog.store
    original: Callable[..., Any] = store.get_chunks_by_id

    def recording(chunk_ids: list[str]) -> Any:
        read.append(list(chunk_ids))
        return original(chunk_ids)

    monkeypatch.setattr(store, "get_chunks_by_id", recording)
    faq = fake_kb.catalog.document("faq-3.2-sso")
    fake_kb.catalog.withdraw(faq.document_id)
    hits = every_chunk_as_a_candidate(fake_kb)
    query = Query(
        text="SSO", principal=Principal.of(config.tenant, "public"), version="3.2", as_of=config.as_of
    )
    kept, _, _ = retrieve._return_gate(hits, query, fake_kb.catalog)
    [asked] = read
    assert set(asked) == {hit.chunk.chunk_id for hit in kept}
    assert not {hit.chunk.chunk_id for hit in hits if hit.chunk.document_id == faq.document_id} & set(asked)


def test_an_ask_re_checks_its_candidates_in_four_statements(
    demo_kb_at: Any, config: TenantConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On either backend: the documents, their revisions, the roles and the chunks, inside the
    ask's read snapshot, however many candidates (a few statements per candidate before)."""
    checked: list[tuple[int, int]] = []
    gate = retrieve._return_gate

    def counting(hits: list[Hit], query: Query, catalog: Catalog) -> Any:
        with statements_on(catalog.store) as seen:
            decided = gate(hits, query, catalog)
        checked.append((len(hits), len(seen)))
        return decided

    monkeypatch.setattr(retrieve, "_return_gate", counting)
    kb = open_local(demo_kb_at, embedder=FakeEmbedder(), create=False)
    try:
        answer = kb.ask(
            config.running_question, tenant=config.tenant, roles=["public"], version="3.2", as_of=config.as_of
        )
    finally:
        kb.close()
    assert answer.citations
    assert checked and all(statements <= 4 for _, statements in checked), checked
    assert max(candidates for candidates, _ in checked) > 20
