"""Index versions: build → verify → publish through the pointer, rollback, what every kept version sees."""

from __future__ import annotations

import numpy as np
import pytest

from tests.kb.tables import every_row_text, indexed_ids, is_postgres, tables_of
from veracity.index.embedders import FakeEmbedder
from veracity.index.sqlite.verify import verify_version
from veracity.index.sqlite.versions import get_version, list_versions, read_pointer
from veracity.index.versioned import index_for
from veracity.kb.directory import open_kb, read_manifest
from veracity.kb.lifecycle import change_status, delete, status_report
from veracity.kb.reindex import publish, rebuild, rollback
from veracity.model.contracts import Status
from veracity.model.errors import EmbedderMismatchError, IndexVerificationError, SearchIndexError
from veracity.parse.chunking import chunk_for_index
from veracity.parse.documents import make_document


class DriftingEmbedder(FakeEmbedder):
    """A fake whose vectors change from call to call: what a broken or swapped model looks like."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed_batch(self, texts, *, kind="passage"):
        self.calls += 1
        rows = super().embed_batch(texts, kind=kind)
        noise = np.random.default_rng(self.calls).standard_normal(rows.shape).astype(np.float32)
        mixed = rows + noise
        return mixed / np.linalg.norm(mixed, axis=1, keepdims=True)


def test_rebuild_publishes_a_verified_version_and_keeps_answers(demo_kb_at, ask_public) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    before = ask_public(kb)
    report = rebuild(kb, demo_kb_at)
    assert (report.version, report.published, report.replaced) == (2, True, 1)
    assert report.verification.passed
    names = [c.name for c in report.verification.checks]
    assert names == ["documents", "chunks", "lexical", "vectors", "probes"]
    probes = next(c for c in report.verification.checks if c.name == "probes")
    assert probes.numbers["probes"] == 12 and probes.numbers["reembedded"] == 12
    connection = kb.catalog.store.connection
    assert read_pointer(connection)[0] == 2
    assert [(v.version, v.state) for v in list_versions(connection)] == [(1, "retired"), (2, "published")]
    after = ask_public(open_kb(demo_kb_at, FakeEmbedder()))
    assert after.status == before.status
    assert [c.chunk_id for c in after.citations] == [c.chunk_id for c in before.citations]
    manifest = read_manifest(demo_kb_at)
    assert manifest["index"]["version"] == 2 and manifest["index"]["verification"]["passed"] is True
    assert [v["state"] for v in manifest["versions"]] == ["retired", "published"]
    stored = get_version(connection, 2).manifest
    assert stored["verification"]["digests"]["chunks"] == stored["verification"]["digests"]["catalog_chunks"]


def test_a_reader_follows_the_pointer_and_drops_its_cache(demo_kb_at) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    reader = index_for(kb.catalog.store)
    assert reader.version == 1 and len(reader.documents) == 18
    rebuild(kb, demo_kb_at, publish=False)
    assert reader.version == 1  # built and verified, not published: readers do not see it
    publish(kb, demo_kb_at)
    assert reader.version == 2 and reader.cache_info()["version"] == 2


def test_failed_verification_is_never_published(demo_kb_at, ask_public) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    before = ask_public(kb)
    with pytest.raises(IndexVerificationError) as caught:
        rebuild(kb, demo_kb_at, embedder=DriftingEmbedder())
    failed = [c.name for c in caught.value.verification.checks if not c.passed]
    assert failed == ["probes"]
    connection = kb.catalog.store.connection
    assert read_pointer(connection)[0] == 1
    version = get_version(connection, 2)
    assert version.state == "failed" and "cosine" in (version.reason or "")
    assert tables_of(kb, 2) == set()  # its tables are gone
    again = ask_public(open_kb(demo_kb_at, FakeEmbedder()))
    assert [c.chunk_id for c in again.citations] == [c.chunk_id for c in before.citations]


def test_verification_catches_tampered_postings_vectors_and_records(demo_kb_at) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    index = index_for(kb.catalog.store, version=1)
    assert verify_version(index, kb.catalog, kb.embedder).passed
    connection = kb.catalog.store.connection
    vec = connection.execute("SELECT value FROM ix1_meta WHERE key = 'vector_table'").fetchone()[0]
    key = connection.execute("SELECT min(chunk_key) FROM ix1_chunks").fetchone()[0]
    if is_postgres(kb):  # one chunk's postings go missing
        at = "array_position(keys, ?::bigint)"  # the arrays' old values on both sides of SET
        connection.execute(
            f"UPDATE ix1_postings SET keys = keys[:{at} - 1] || keys[{at} + 1:], "
            f"tfs = tfs[:{at} - 1] || tfs[{at} + 1:] WHERE ?::bigint = ANY(keys)",
            (key,) * 5,
        )
    else:
        fts = connection.execute("SELECT fts_table FROM ix1_tenants").fetchone()[0]
        connection.execute(f"DELETE FROM {fts} WHERE rowid = ?", (key,))
    connection.execute(f"DELETE FROM {vec} WHERE chunk_key = ?", (key + 1,))
    # the record keeps the digest of the indexed text (not the text): tamper with that
    digest = '"indexed_digest":"'
    edit = f"UPDATE ix1_chunks SET record = replace(record, '{digest}', '{digest}X') WHERE chunk_key = ?"
    connection.execute(edit, (key + 2,))
    connection.execute("UPDATE ix1_documents SET status = 'active' WHERE status = 'withdrawn'")
    report = verify_version(index_for(kb.catalog.store, version=1), kb.catalog, kb.embedder)
    failed = {c.name: c for c in report.checks if not c.passed}
    assert set(failed) == {"documents", "chunks", "lexical", "vectors"}  # probes run on a sound index only
    assert failed["documents"].numbers["stale"] == 1
    assert failed["vectors"].numbers["vectors"] == failed["vectors"].numbers["chunks"] - 1


def test_withdraw_and_delete_reach_every_kept_version(demo_kb_at, ask_public) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    rebuild(kb, demo_kb_at)  # 1 retired (rollback target), 2 published
    withdrawn = change_status(kb, demo_kb_at, "faq-3.2-sso", Status.WITHDRAWN)
    for version in (1, 2):
        status = kb.catalog.store.connection.execute(
            f"SELECT status FROM ix{version}_documents WHERE document_id = ?", (withdrawn.document_id,)
        ).fetchone()[0]
        assert status == "withdrawn", version
    doomed = kb.catalog.document("admin-invites-3.2")
    tail = doomed.body.rstrip().splitlines()[-1][-30:]  # one line: repr() keeps it as it is
    assert any(tail in text for text in every_row_text(kb).values())
    delete(kb, demo_kb_at, "admin-invites-3.2")
    assert all(doomed.document_id not in indexed_ids(kb, v) for v in (1, 2))
    for table, text in every_row_text(kb).items():  # the retired version kept no copy either
        assert doomed.document_id not in text and tail not in text, table
    if not is_postgres(kb):  # nor do SQLite's freed pages (PostgreSQL: see erase_freed_pages)
        raw = (demo_kb_at / "catalog.sqlite").read_bytes()
        assert doomed.document_id.encode() not in raw and tail.encode() not in raw
    report = rollback(kb, demo_kb_at)
    assert report.version == 1 and report.sync.added_documents == 0 and report.verification.passed
    answer = ask_public(open_kb(demo_kb_at, FakeEmbedder()))
    assert "faq-3.2-sso" not in {c.source_id for c in answer.citations}
    assert doomed.document_id not in repr(answer)


def test_rollback_catches_up_with_documents_added_since(demo_kb_at, ask_public) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    rebuild(kb, demo_kb_at)
    metadata = {
        "id": "faq-3.2-saml-note", "revision": "1", "title": "SAML 补充说明", "tenant": "starship",
        "valid_from": "2026-01-01", "status": "active", "visibility": "public", "trust": "official",
        "version_min": "3.2", "version_max": "3.2",
    }  # fmt: skip
    body = "# SAML 补充说明\n\n3.2 的 Team 计划可以使用 SAML 单点登录，需要先验证域名。"
    note = make_document(metadata, body)
    kb.catalog.add(note, chunk_for_index(note))
    kb.reindex()  # incremental: into the published version (2) only
    assert note.document_id in indexed_ids(kb, 2) and note.document_id not in indexed_ids(kb, 1)
    report = rollback(kb, demo_kb_at)
    assert report.version == 1 and report.sync.added_documents == 1
    assert note.document_id in indexed_ids(kb, 1)
    status = status_report(kb, demo_kb_at)
    assert status["index"]["version"] == 1
    assert [(v["version"], v["state"]) for v in status["versions"]] == [(1, "published"), (2, "rolled-back")]
    with pytest.raises(SearchIndexError, match="no earlier index version"):
        rollback(kb, demo_kb_at)
    assert publish(kb, demo_kb_at, 2).version == 2  # forward again by name


def test_a_document_deleted_during_the_build_is_not_published(demo_kb_at) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    doomed = kb.catalog.document("admin-invites-3.2")
    calls = []

    def progress(done: int, total: int) -> None:
        if not calls:
            delete(kb, demo_kb_at, "admin-invites-3.2")  # between the build's batches and its verification
        calls.append(done)

    report = rebuild(kb, demo_kb_at, progress=progress)
    assert report.verification.passed and calls
    assert doomed.document_id not in indexed_ids(kb, report.version)
    assert len(indexed_ids(kb, report.version)) == 17


def test_old_versions_are_pruned_with_their_tables(demo_kb_at) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    for _ in range(3):
        last = rebuild(kb, demo_kb_at, keep=1)
    assert last.version == 4 and last.dropped == (2,)
    states = {v.version: v.state for v in list_versions(kb.catalog.store.connection)}
    assert states == {1: "dropped", 2: "dropped", 3: "retired", 4: "published"}
    assert tables_of(kb, 1) == tables_of(kb, 2) == set()
    assert tables_of(kb, 3) and tables_of(kb, 4)


def test_a_rebuild_with_another_model_and_back(demo_kb_at, ask_public) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    other = FakeEmbedder(dim=64)
    report = rebuild(kb, demo_kb_at, embedder=other)
    assert report.verification.passed
    reopened = open_kb(demo_kb_at, other)
    assert reopened.snapshot.vector_model().dim == 64
    assert ask_public(reopened).citations  # queries run on the new model
    with pytest.raises(EmbedderMismatchError):
        open_kb(demo_kb_at, FakeEmbedder())  # the published version is the 64-dim one now
    rollback(kb, demo_kb_at)
    assert open_kb(demo_kb_at).embedder.dim == 256  # the manifest names the published version's embedder
    assert read_manifest(demo_kb_at)["embedding"]["dim"] == 256


def test_publish_needs_a_verified_version(demo_kb_at) -> None:
    kb = open_kb(demo_kb_at, FakeEmbedder())
    with pytest.raises(SearchIndexError, match="no verified, unpublished index version"):
        publish(kb, demo_kb_at)
    with pytest.raises(SearchIndexError, match="no index version 9"):
        publish(kb, demo_kb_at, 9)
    with pytest.raises(SearchIndexError, match="already the published one"):
        publish(kb, demo_kb_at, 1)
