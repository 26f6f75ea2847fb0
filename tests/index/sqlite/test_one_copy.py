"""One copy of the text: the SQLite index reads chunk text and document bodies from the catalog.

The index records what was indexed (digests) but no text; a stale index never
invents text the catalog no longer has, and the return gate drops such chunks
as it did when the index kept its own copy.
"""

from __future__ import annotations

import json

import apsw
import pytest

from tests.index.backend_contract import doc
from veracity.catalog.demo import demo_catalog
from veracity.index.embedders import FakeEmbedder
from veracity.index.sqlite.records import embedded_text_digest
from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.index.sqlite.tables import IndexTables
from veracity.index.sqlite.verify import verify_version
from veracity.index.sqlite.versions import begin_version
from veracity.model.contracts import Principal
from veracity.parse.chunking import chunk_for_index
from veracity.pipeline.engine import Engine

SENTENCE = "紫色长颈鹿在周二下午校准了量子风车 purple-giraffe-7731"


@pytest.fixture
def kb() -> Engine:
    """The demo catalog with one more document holding :data:`SENTENCE`, indexed in SQLite."""
    catalog = demo_catalog()
    extra = doc("giraffe", tenant="starship", text=f"# 长颈鹿\n\n{SENTENCE}。")
    catalog.add(extra, chunk_for_index(extra))
    knowledge = Engine(catalog, FakeEmbedder(), backend=SQLiteSearchIndex(catalog.store))
    knowledge.reindex()
    return knowledge


def _connection(kb: Engine) -> apsw.Connection:
    return kb.catalog.store.connection  # type: ignore[attr-defined, no-any-return]


def _index(kb: Engine) -> SQLiteSearchIndex:
    assert isinstance(kb.snapshot, SQLiteSearchIndex)
    return kb.snapshot


def _tables_holding(connection: apsw.Connection, needle: str) -> set[str]:
    """Every table with a text or blob column whose value contains ``needle``."""
    names = [str(r[0]) for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    found = set()
    for name in names:
        try:
            columns = [str(r[1]) for r in connection.execute(f'PRAGMA table_info("{name}")')]
            for column in columns:
                sql = f'SELECT 1 FROM "{name}" WHERE instr(CAST("{column}" AS BLOB), CAST(? AS BLOB)) LIMIT 1'
                if connection.execute(sql, (needle,)).fetchone():
                    found.add(name)
        except apsw.SQLError:  # virtual tables a plain SELECT cannot read (vec0 internals)
            continue
    return found


def test_the_text_is_stored_once_in_the_catalog(kb) -> None:
    connection = _connection(kb)
    assert _tables_holding(connection, SENTENCE) == {"documents", "chunks"}
    prefix = str(
        connection.execute("SELECT context_prefix FROM chunks WHERE context_prefix != ''").fetchone()[0]
    )
    assert not {t for t in _tables_holding(connection, prefix) if t.startswith(("ix", "fts", "vec"))}
    giraffe = kb.catalog.document("giraffe")
    index = _index(kb)
    assert index.documents[giraffe.document_id].body == giraffe.body
    for chunk in kb.catalog.chunks(giraffe.document_id):
        assert index.chunks[chunk.chunk_id] == chunk


def _make_old_form(connection: apsw.Connection, tables: IndexTables) -> None:
    """Rewrite the version's records as index versions wrote them before the text left the index."""
    for key, chunk_id, record in connection.execute(
        f"SELECT chunk_key, chunk_id, record FROM {tables.chunks}"
    ).fetchall():
        text, prefix = connection.execute(
            "SELECT text, context_prefix FROM chunks WHERE chunk_id = ?", (chunk_id,)
        ).fetchone()
        raw = json.loads(record)
        del raw["indexed_digest"]
        raw.update(text=text, context_prefix=prefix)
        old = json.dumps(raw, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        connection.execute(f"UPDATE {tables.chunks} SET record = ? WHERE chunk_key = ?", (old, key))
    for key, document_id, record in connection.execute(
        f"SELECT doc_key, document_id, record FROM {tables.documents}"
    ).fetchall():
        (body,) = connection.execute(
            "SELECT body FROM documents WHERE document_id = ?", (document_id,)
        ).fetchone()
        raw = json.loads(record)
        del raw["body_digest"]
        raw["body"] = body
        old = json.dumps(raw, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        connection.execute(f"UPDATE {tables.documents} SET record = ? WHERE doc_key = ?", (old, key))


def test_an_index_version_written_with_its_own_text_still_reads(kb, config) -> None:
    index = _index(kb)
    principal = Principal.of(config.tenant, config.role)
    before = kb.ask(config.running_question, principal, config.target_version, config.as_of)
    chunks = {cid: index.chunks[cid] for cid in index.chunks}
    documents = dict(index.documents)
    connection, tables = _connection(kb), IndexTables(index.version)
    with kb.catalog.store.transaction():  # type: ignore[attr-defined]
        _make_old_form(connection, tables)
        connection.execute("UPDATE index_pointer SET generation = generation + 1")
        # the old copy is what such a version reads, even where the catalog now differs
        connection.execute("UPDATE chunks SET text = text || '改' WHERE chunk_id = ?", (next(iter(chunks)),))
    assert {cid: index.chunks[cid] for cid in index.chunks} == chunks
    assert dict(index.documents) == documents
    connection.execute("UPDATE chunks SET text = substr(text, 1, length(text) - 1) WHERE chunk_id = ?",
                       (next(iter(chunks)),))  # fmt: skip
    assert verify_version(index, kb.catalog, kb.embedder).passed
    assert index.sync(kb.catalog, kb.embedder).updated_documents == 0
    after = kb.ask(config.running_question, principal, config.target_version, config.as_of)
    assert after.status is before.status
    assert [c.chunk_id for c in after.citations] == [c.chunk_id for c in before.citations]
    with kb.catalog.store.transaction():  # type: ignore[attr-defined]
        new = begin_version(connection, embedder=None)  # what reindex builds: the new form
    SQLiteSearchIndex(kb.catalog.store, version=new.version).sync(kb.catalog, kb.embedder)  # type: ignore[arg-type]
    for (record,) in connection.execute(f"SELECT record FROM {new.chunks}"):
        assert "indexed_digest" in json.loads(record) and "text" not in json.loads(record)


def test_a_changed_catalog_chunk_gives_no_text_and_is_dropped_at_the_return_gate(kb, config) -> None:
    faq = kb.catalog.document("faq-3.2-sso")
    ids = [c.chunk_id for c in kb.catalog.chunks(faq.document_id)]
    _connection(kb).execute(
        "UPDATE chunks SET text = text || ' 已改' WHERE document_id = ?", (faq.document_id,)
    )
    index = _index(kb)
    assert all(index.chunks[cid].text == "" and index.chunks[cid].context_prefix == "" for cid in ids)
    answer = kb.ask(
        config.running_question, Principal.of(config.tenant, config.role), config.target_version, config.as_of
    )
    rejected = answer.trace.gate_rejections
    assert rejected and {reason for _, reason in rejected} == {"chunk"}
    assert {cid for cid, _ in rejected} <= set(ids)
    assert "faq-3.2-sso" not in {c.source_id for c in answer.citations}


def test_a_deleted_catalog_document_leaves_no_text_in_the_index(kb, config) -> None:
    faq = kb.catalog.document("faq-3.2-sso")
    ids = [c.chunk_id for c in kb.catalog.chunks(faq.document_id)]
    _connection(kb).execute("DELETE FROM documents WHERE document_id = ?", (faq.document_id,))  # cascades
    index = _index(kb)
    assert index.documents[faq.document_id].body == ""
    assert all(index.chunks[cid].text == "" for cid in ids)
    answer = kb.ask(
        config.running_question, Principal.of(config.tenant, config.role), config.target_version, config.as_of
    )
    assert "faq-3.2-sso" not in {c.source_id for c in answer.citations}
    assert not set(answer.trace.final) & set(ids)


def test_verification_sees_text_the_catalog_changed_and_a_tampered_record(kb) -> None:
    index, connection = _index(kb), _connection(kb)
    assert verify_version(index, kb.catalog, kb.embedder).passed
    chunk = next(iter(kb.catalog.chunks(kb.catalog.document("giraffe").document_id)))
    connection.execute("UPDATE chunks SET text = ? WHERE chunk_id = ?", (chunk.text + "!", chunk.chunk_id))
    failed = verify_version(index, kb.catalog, kb.embedder)
    assert "chunks" in {c.name for c in failed.checks if not c.passed}
    connection.execute("UPDATE chunks SET text = ? WHERE chunk_id = ?", (chunk.text, chunk.chunk_id))
    assert verify_version(index, kb.catalog, kb.embedder).passed
    table = IndexTables(index.version).chunks
    record = json.loads(connection.execute(f"SELECT record FROM {table} WHERE chunk_id = ?",
                                           (chunk.chunk_id,)).fetchone()[0])  # fmt: skip
    assert record["indexed_digest"] == embedded_text_digest(chunk)
    record["indexed_digest"] = "0" * 64
    connection.execute(
        f"UPDATE {table} SET record = ? WHERE chunk_id = ?", (json.dumps(record), chunk.chunk_id)
    )
    assert not verify_version(index, kb.catalog, kb.embedder).passed
