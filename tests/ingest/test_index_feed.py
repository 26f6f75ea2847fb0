"""A lexical-only index is written as each catalog transaction commits, and ends as a final sync would.

``veracity.ingest.indexing.IndexFeed``: the writer indexes what a transaction wrote once it
has committed (instead of waiting for the parse workers), and the final sync still carries
removals and status changes. With an embedder nothing is indexed before the last file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from veracity.catalog.catalog import Catalog
from veracity.catalog.postgres.store import PostgresStore
from veracity.catalog.sqlite import SQLiteStore
from veracity.index.embedders import FakeEmbedder
from veracity.index.postgres.search import PostgresSearchIndex
from veracity.index.postgres.tables import ensure_index_tables
from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.index.sqlite.tables import IndexTables
from veracity.ingest import run as ingest_run
from veracity.ingest.run import ingest_paths
from veracity.model.contracts import Principal
from veracity.model.governance import EligibilityScope
from veracity.pipeline.engine import Engine

DOC = (
    "---\nid: {id}\nrevision: '{revision}'\ntitle: T\ntenant: acme\nvalid_from: 2026-01-01\n"
    "status: active\nvisibility: public\ntrust: official\n---\n\n# 第 {n} 节\n\n{body}\n"
)


def _write(folder: Path, n: int, *, revision: str = "1", body: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = DOC.format(id=f"doc-{n}", revision=revision, n=n, body=body or f"编号 k{n}x 的说明文字。")
    (folder / f"doc-{n}.md").write_text(text, "utf-8")


def _folder(tmp_path: Path, monkeypatch, files: int, *, per_transaction: int) -> Path:
    """``files`` sources in a folder, ingested ``per_transaction`` files per catalog transaction."""
    docs = tmp_path / "docs"
    for n in range(files):
        _write(docs, n)
    monkeypatch.setattr(ingest_run, "FILES_PER_TRANSACTION", per_transaction)
    return docs


def _engine(
    tmp_path: Path, embedder: FakeEmbedder | None, kb_backend: str = "sqlite", request=None
) -> Engine:
    """An engine on ``kb_backend`` whose index is the store's own (lexical only without an embedder)."""
    if kb_backend == "sqlite":
        store = SQLiteStore(tmp_path / "kb.sqlite")
        return Engine(Catalog(store), embedder, backend=SQLiteSearchIndex(store))
    postgres = PostgresStore(request.getfixturevalue("pg_url"), pool_size=2)
    index = PostgresSearchIndex(postgres)
    with postgres.transaction():
        ensure_index_tables(postgres.connection, IndexTables(index.version))
    return Engine(Catalog(postgres), embedder, backend=index)


def _indexed_after_each_commit(monkeypatch, engine: Engine) -> list[int]:
    """The number of indexed documents seen each time the index is added to."""
    seen: list[int] = []
    index = engine.snapshot
    original = index.add

    def add(items, embedder, **options):  # type: ignore[no-untyped-def]
        items = list(items)
        seen.append(len(items))
        return original(items, embedder, **options)

    monkeypatch.setattr(index, "add", add)
    return seen


def test_each_transaction_is_indexed_when_it_commits(tmp_path, monkeypatch, kb_backend, request) -> None:
    docs = _folder(tmp_path, monkeypatch, 7, per_transaction=3)
    engine = _engine(tmp_path, None, kb_backend, request)
    adds = _indexed_after_each_commit(monkeypatch, engine)
    report = ingest_paths(engine, [docs], roles=["public"], jobs=1)
    assert adds == [3, 3, 1, 0]  # three transactions, then the final sync finds nothing new
    assert report.index.added_documents == 7 and report.index.indexed_chunks == report.chunks_added
    assert engine.snapshot.stats().chunks == report.chunks_added
    assert report.seconds["write"] > 0


def test_the_final_sync_still_carries_a_revision_s_retired_predecessor(
    tmp_path, monkeypatch, kb_backend, request
) -> None:
    docs = _folder(tmp_path, monkeypatch, 4, per_transaction=2)
    engine = _engine(tmp_path, None, kb_backend, request)
    ingest_paths(engine, [docs], roles=["public"], jobs=1)
    _write(docs, 0, revision="2", body="改写后的说明文字。")
    report = ingest_paths(engine, [docs], roles=["public"], jobs=1)
    assert report.revised == ("doc-0",) and report.index.updated_documents == 1
    active = {d.document_id for d in engine.catalog.documents() if d.status.value == "active"}
    assert len(active) == 4
    as_of = datetime(2026, 6, 1, tzinfo=UTC)
    scope = EligibilityScope(Principal.of("acme", "public"), None, as_of, frozenset({"public"}))
    eligible = engine.snapshot.eligible_document_ids(scope)  # the index's own governance snapshot
    assert eligible == active  # the retired first revision is not among them


@pytest.mark.parametrize("files", [1, 5])
def test_with_an_embedder_nothing_is_indexed_before_the_last_file(tmp_path, monkeypatch, files) -> None:
    docs = _folder(tmp_path, monkeypatch, files, per_transaction=2)
    engine = _engine(tmp_path, FakeEmbedder())
    adds = _indexed_after_each_commit(monkeypatch, engine)
    report = ingest_paths(engine, [docs], roles=["public"], jobs=1)
    assert adds == [files]  # one add, from the final sync
    assert report.index.embedded_chunks == report.chunks_added
