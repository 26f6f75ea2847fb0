"""kill -9 an ingest at random points: the file stays consistent and a re-run completes it."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

from veracity.embedders import FakeEmbedder
from veracity.kb import create_kb, open_kb, read_manifest
from veracity.kb_ingest import ingest_paths

SCRIPT = """
import sys
from veracity.embedders import FakeEmbedder
from veracity.kb import open_or_create_kb, write_manifest
from veracity.kb_ingest import ingest_paths
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


def test_kill_nine_during_ingest_then_rerun_completes(tmp_path) -> None:
    docs = tmp_path / "docs"
    _corpus(docs, 120)
    kb_dir = tmp_path / "kb"
    create_kb(kb_dir, FakeEmbedder()).catalog.store.close()
    rng = random.Random(7)
    kills = 0
    for _ in range(3):
        process = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(kb_dir), str(docs)], stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None and process.stdout.readline().strip() == "started"
        time.sleep(rng.uniform(0.05, 1.5))
        if process.poll() is None:
            process.kill()  # SIGKILL: no cleanup, no atexit, no finally
            kills += 1
        process.wait()
        kb = open_kb(kb_dir, FakeEmbedder())
        connection = kb.catalog.store.connection
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        indexed = set(kb.snapshot.documents)
        catalog_ids = {d.document_id for d in kb.catalog.documents()}
        assert indexed <= catalog_ids  # the index never holds what the catalog lacks
        kb.catalog.store.close()
    assert kills >= 1, "the ingest finished before any kill: make the corpus larger"

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
