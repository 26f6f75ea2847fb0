"""Withdraw, retire and delete on an on-disk knowledge base: catalog and index change together."""

from __future__ import annotations

import pytest

from tests.kb.tables import every_row_text, is_postgres
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import open_kb
from veracity.kb.lifecycle import change_status, delete, status_report
from veracity.model.contracts import Status
from veracity.model.errors import StaleWriteError


def test_withdraw_excludes_before_scoring_and_survives_reopen(demo_kb_at, ask_public) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    change = change_status(kb, demo_kb_at, "faq-3.2-sso", Status.WITHDRAWN)
    assert change.catalog_revision == 2
    reopened = open_kb(demo_kb_at, FakeEmbedder())
    answer = ask_public(reopened)
    assert ("faq-3.2-sso", change.document_id, "status") in answer.trace.excluded
    assert answer.trace.gate_rejections == ()  # the index knew already: filtered, not caught late
    assert "faq-3.2-sso" not in {c.source_id for c in answer.citations}


def test_stale_compare_and_set_changes_nothing(demo_kb_at) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    before = status_report(kb, demo_kb_at)
    with pytest.raises(StaleWriteError):
        change_status(kb, demo_kb_at, "faq-3.2-sso", Status.RETIRED, expected_revision=5)
    assert status_report(kb, demo_kb_at) == before
    assert kb.catalog.document("faq-3.2-sso").status is Status.ACTIVE


def test_deleted_document_is_gone_from_every_table_and_every_query(demo_kb_at, ask_public) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    doomed = kb.catalog.document("faq-3.2-sso")
    chunk_ids = [c.chunk_id for c in kb.catalog.chunks(doomed.document_id)]
    phrase = "切换到 OIDC 需要多长时间"
    assert phrase in doomed.body
    change = delete(kb, demo_kb_at, "faq-3.2-sso")
    assert change.chunks_removed == len(chunk_ids)
    kb = open_kb(demo_kb_at, FakeEmbedder())
    for question in ("3.2 的 Team 能用 SAML 吗", phrase, "Okta Keycloak Google Workspace 身份提供商"):
        answer = ask_public(kb, question)
        exposed = repr(answer)
        assert doomed.document_id not in exposed and not any(c in exposed for c in chunk_ids)
    for table, text in every_row_text(kb).items():
        assert doomed.document_id not in text and "faq-3.2-sso" not in text, table
        assert not any(c in text for c in chunk_ids), table
    if not is_postgres(kb):  # SQLite also overwrites the freed pages (secure_delete + VACUUM)
        raw = (demo_kb_at / "catalog.sqlite").read_bytes()
        assert doomed.document_id.encode() not in raw
        assert phrase.encode() not in raw
    assert status_report(kb, demo_kb_at)["index"]["documents"] == 17


def test_ingestion_ledger_records_states_and_quarantine(tmp_path, kb_backend, request) -> None:
    from veracity.catalog.ledger import history
    from veracity.ingest.run import ingest_paths
    from veracity.kb.directory import create_kb

    docs = tmp_path / "docs"
    docs.mkdir()
    head = "---\nid: {id}\nrevision: '1'\ntitle: T\ntenant: acme\nvalid_from: 2026-01-01\nstatus: {status}\n"
    tail = "visibility: public\ntrust: official\n---\n\n正文内容。"
    (docs / "good.md").write_text(head.format(id="good", status="active") + tail, "utf-8")
    (docs / "bad.md").write_text(head.format(id="bad", status="gone") + tail, "utf-8")
    location = tmp_path / "kb" if kb_backend == "sqlite" else request.getfixturevalue("pg_url")
    kb = create_kb(location, FakeEmbedder())
    ingest_paths(kb, [docs], roles=["public"], tenant="acme")
    connection = kb.catalog.store.connection
    assert [step["state"] for step in history(connection, "good.md")] == [
        "discovered", "parsed", "chunked", "embedded", "indexed", "active",
    ]  # fmt: skip
    assert [step["state"] for step in history(connection, "bad.md")] == ["discovered", "failed"]
    report = status_report(kb, location)
    assert report["ingestion"] == {"active": 1, "failed": 1}
    assert [q["source"] for q in report["quarantine"]] == ["bad.md"]
    assert "status" in report["quarantine"][0]["reason"]

    (docs / "bad.md").write_text(head.format(id="bad", status="active") + tail, "utf-8")
    ingest_paths(kb, [docs], tenant="acme")
    report = status_report(kb, location)
    assert report["quarantine"] == []
    assert report["ingestion"] == {"active": 1, "unchanged": 1}
