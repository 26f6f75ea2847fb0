"""What a versioned rebuild costs: build, verify, publish and rollback, against ingest as the peer.

1. writes ``--docs`` synthetic Markdown files (``synthetic_kb.py``, several tenants);
2. ingests them into a new knowledge base (the peer: parse + chunk + catalog + index);
3. ``veracity reindex`` in-process (:func:`veracity.kb.reindex.rebuild`): a new
   version built from the catalog, verified, published; its build stages and the
   verification's checks are timed apart;
4. the pointer switch alone (one transaction), and ``rollback`` (catch-up sync +
   verification + switch);
5. query latency on the published version while nothing else runs, before and
   after the switch (same queries).

Embedding uses seeded random unit vectors (``RandomEmbedder``: no model), so the
numbers are veracity's own work; a real model adds its embedding time to the build.

    python benchmarks/bench_reindex.py --docs 2000

Prints measured numbers only; one run, and the machine may be shared (load averages printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from synthetic_kb import RandomEmbedder, write_corpus

from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.index.sqlite.verify import verify_version
from veracity.index.sqlite.versions import switch_to
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb, open_kb
from veracity.kb.reindex import rebuild, rollback
from veracity.text.tokens import tokenize

QUERIES = ("网关 超时 配置", "SSO 登录 管理员", "迁移 成员 权限", "E1042 错误 重试", "发布 版本 3.2")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def query_ms(index: SQLiteSearchIndex, tenants: int) -> float:
    """Median wall ms of BM25 top-30 over every document of a tenant (the index's own cost)."""
    by_tenant: dict[str, set[str]] = {}
    for document in index.documents.values():
        by_tenant.setdefault(document.tenant, set()).add(document.document_id)
    times = []
    for round_ in range(3):
        for i, text in enumerate(QUERIES):
            tenant = f"tenant-{(i + round_) % tenants}"
            start = time.perf_counter()
            index.lexical_search(
                tenant, tokenize(text), k=30, eligible_document_ids=by_tenant.get(tenant, set())
            )
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2000, help="synthetic documents (default 2000)")
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"load average at start: {load()}  (cpus: {os.cpu_count()})")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        write_corpus(root / "docs", args.docs, args.tenants, args.seed)
        embedder = RandomEmbedder()
        kb_dir = root / "kb"
        kb = create_kb(kb_dir, embedder)
        start = time.perf_counter()
        ingest_paths(kb, [root / "docs"])
        ingest_s = time.perf_counter() - start
        stats = kb.snapshot.stats()
        print(f"corpus: {stats.documents} documents, {stats.chunks} chunks, {stats.tenants} tenants")
        print(f"ingest (peer): {ingest_s:.2f} s = {stats.chunks / ingest_s:,.0f} chunks/s")
        before_ms = query_ms(SQLiteSearchIndex(kb.catalog.store), args.tenants)

        report = rebuild(kb, kb_dir)
        sync = report.sync
        print(
            f"reindex → version {report.version}: {report.seconds:.2f} s total "
            f"({report.seconds / ingest_s:.2f}× ingest); build: tokenize {sync.tokenize_seconds:.2f} s, "
            f"embed {sync.embed_seconds:.2f} s, write {sync.write_seconds:.2f} s"
        )
        pinned = SQLiteSearchIndex(kb.catalog.store, version=report.version)
        start = time.perf_counter()
        verification = verify_version(pinned, kb.catalog, kb.embedder)
        verify_s = time.perf_counter() - start
        print(
            f"verify alone: {verify_s:.2f} s ({verify_s / ingest_s:.2f}× ingest), "
            f"passed={verification.passed}"
        )
        for check in verification.checks:
            print(f"    {check.name:<9} {check.detail}")

        store = kb.catalog.store
        start = time.perf_counter()
        with store.transaction():
            switch_to(store.connection, 1, rollback=True)
            switch_to(store.connection, report.version)
        switch_ms = (time.perf_counter() - start) * 1000
        print(f"pointer switch (two switches in one transaction): {switch_ms:.2f} ms")
        after_ms = query_ms(SQLiteSearchIndex(kb.catalog.store), args.tenants)
        start = time.perf_counter()
        back = rollback(open_kb(kb_dir, embedder), kb_dir)
        print(
            f"rollback → version {back.version}: {time.perf_counter() - start:.2f} s "
            f"(catch-up added {back.sync.added_documents} documents, "
            f"verification passed={back.verification.passed})"
        )
        print(
            f"BM25 top-30 median: {before_ms:.2f} ms on version 1, "
            f"{after_ms:.2f} ms on version {report.version}"
        )
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
