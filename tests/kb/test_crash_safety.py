"""kill -9 an ingest at random points: the file stays consistent and a re-run completes it."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.kb.tables import is_postgres, tables_of
from veracity.index.embedders import FakeEmbedder
from veracity.index.versioned import index_for
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb, open_kb, read_manifest

SCRIPT = """
import sys
import pytest

from tests.kb.tables import is_postgres, tables_of
from veracity.index.embedders import FakeEmbedder
from veracity.index.versioned import index_for
from veracity.kb.directory import open_or_create_kb, write_manifest
from veracity.ingest.run import ingest_paths
kb = open_or_create_kb(sys.argv[1], FakeEmbedder())
print("started", flush=True)
ingest_paths(kb, [sys.argv[2]], tenant="acme", roles=["public"])
write_manifest(sys.argv[1], kb)
print("done", flush=True)
"""


def _corpus(folder: Path, count: int) -> None:
    folder.mkdir()
    for n in range(count):
        line = "第 {n} 篇第 {p} 段：网关参数 gateway.timeout 的说明。"
        paragraphs = "\n\n".join(line.format(n=n, p=p) * 4 for p in range(6))
        (folder / f"doc-{n:03d}.md").write_text(
            f"---\nid: doc-{n:03d}\nrevision: '1'\ntitle: 文档 {n}\ntenant: acme\nvalid_from: 2026-01-01\n"
            f"status: active\nvisibility: public\ntrust: official\n---\n\n# 文档 {n}\n\n{paragraphs}\n",
            "utf-8",
        )


def _run(script: str, *args: object, kill_after: float | None = None) -> tuple[float, bool]:
    """Run ``script``; SIGKILL it ``kill_after`` seconds after it starts working. ``(seconds, killed)``."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "started"
    start = time.perf_counter()
    killed = False
    if kill_after is not None:
        try:
            process.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            process.kill()  # SIGKILL: no cleanup, no atexit, no finally
            killed = True
    process.wait()
    return time.perf_counter() - start, killed


def _locations(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """Two new knowledge-base locations on ``backend``: a calibration one and the one under test."""
    if backend == "sqlite":
        return tmp_path / "calibration", tmp_path / "kb"
    make = request.getfixturevalue("pg_databases")
    return make(), make()


def _sound(kb: Any) -> None:
    """The database finds nothing wrong with itself (SQLite's integrity check; PostgreSQL's schema)."""
    connection = kb.catalog.store.connection
    if is_postgres(kb):
        assert kb.catalog.store.check_integrity() == []
    else:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_kill_nine_during_ingest_then_rerun_completes(tmp_path, kb_backend, request) -> None:
    docs = tmp_path / "docs"
    _corpus(docs, 120)
    calibration, kb_dir = _locations(tmp_path, kb_backend, request)
    create_kb(calibration, FakeEmbedder()).catalog.store.close()
    duration, _ = _run(SCRIPT, calibration, docs)  # how long a whole ingest takes on this machine now
    create_kb(kb_dir, FakeEmbedder()).catalog.store.close()
    rng = random.Random(7)
    kills = 0
    for _ in range(3):
        kills += _run(SCRIPT, kb_dir, docs, kill_after=rng.uniform(0.02, 0.6) * duration)[1]
        kb = open_kb(kb_dir, FakeEmbedder())
        _sound(kb)
        indexed = set(kb.snapshot.documents)
        catalog_ids = {d.document_id for d in kb.catalog.documents()}
        assert indexed <= catalog_ids  # the index never holds what the catalog lacks
        kb.catalog.store.close()
    assert kills >= 2, "most ingests finished before their kill: make the corpus larger"

    kb = open_kb(kb_dir, FakeEmbedder())
    report = ingest_paths(kb, [docs], tenant="acme")
    assert report.rejected == ()
    catalog_ids = {d.document_id for d in kb.catalog.documents()}
    assert len(catalog_ids) == 120
    assert set(kb.snapshot.documents) == catalog_ids
    assert sum(len(ids) for ids in kb.snapshot.chunks_by_document.values()) == sum(
        len(kb.catalog.chunks(d)) for d in catalog_ids
    )
    read_manifest(kb_dir)  # the manifest is whole: its digest checks


REINDEX_SCRIPT = """
import sys
import pytest

from tests.kb.tables import is_postgres, tables_of
from veracity.index.embedders import FakeEmbedder
from veracity.index.versioned import index_for
from veracity.kb.directory import open_kb
from veracity.kb.reindex import rebuild
kb = open_kb(sys.argv[1], FakeEmbedder())
print("started", flush=True)
rebuild(kb, sys.argv[1])
print("done", flush=True)
"""


def test_kill_nine_during_reindex_never_half_publishes(tmp_path, kb_backend, request) -> None:
    from veracity.index.sqlite.verify import verify_version
    from veracity.index.sqlite.versions import list_versions, read_pointer
    from veracity.kb.reindex import rebuild

    docs = tmp_path / "docs"
    _corpus(docs, 150)
    kb_dir = _locations(tmp_path, kb_backend, request)[1]
    kb = create_kb(kb_dir, FakeEmbedder())
    ingest_paths(kb, [docs], tenant="acme", roles=["public"])
    kb.catalog.store.close()
    duration, _ = _run(REINDEX_SCRIPT, kb_dir)  # a whole rebuild, to place the kills inside one
    rng = random.Random(11)
    kills = 0
    for _ in range(4):
        kills += _run(REINDEX_SCRIPT, kb_dir, kill_after=rng.uniform(0.0, 0.9) * duration)[1]
        kb = open_kb(kb_dir, FakeEmbedder())
        _sound(kb)
        connection = kb.catalog.store.connection
        current = read_pointer(connection)[0]
        states = {v.version: v.state for v in list_versions(connection)}
        assert states[current] == "published" and list(states.values()).count("published") == 1
        # the published version is whole: it matches the catalog and passes every check
        assert verify_version(
            index_for(kb.catalog.store, version=current), kb.catalog, kb.embedder
        ).passed
        kb.catalog.store.close()
    assert kills >= 2, "most rebuilds finished before their kill: make the corpus larger"

    kb = open_kb(kb_dir, FakeEmbedder())
    report = rebuild(kb, kb_dir)
    assert report.published and report.verification.passed
    connection = kb.catalog.store.connection
    states = {v.version: v.state for v in list_versions(connection)}
    assert "building" not in states.values()  # abandoned builds were failed and dropped
    for version, state in states.items():
        if state in ("failed", "dropped"):
            assert tables_of(kb, version) == set(), version
    read_manifest(kb_dir)
