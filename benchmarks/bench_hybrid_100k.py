"""Governance-filtered hybrid retrieval over a persistent SQLite knowledge base, and ingest rates.

What it does (seeded, see ``synthetic_kb.py``):

1. writes ``--chunks`` worth of synthetic Markdown (several tenants, governance
   metadata so a public principal asking about 3.2 sees ~30-60% of a tenant);
2. **ingest rate without embedding**: ``ingest_paths`` into a lexical-only
   knowledge base (parse + chunk + catalog + tokenize + FTS5), chunks/s, with the parse
   workers' CPU by step; once as shipped (the cue-word detector judges non-official chunks
   in the workers) and once with nothing judged at ingest (``ingest_paths(judge=False)``):
   the rate without model steps (``--no-model-free-ingest`` skips it); with
   ``--guard-judging``, once more with the trained guard in use, judging the non-official
   chunks in the workers instead of the cue words;
3. **query index**: ingests the same files with seeded Gaussian-mixture vectors (512 dims,
   no model: 100k texts are NOT embedded; see ``RandomEmbedder``), which also
   gives the rate with the vec0 insert; builds the in-memory ``IndexSnapshot``
   over the same documents and vectors as the peer;
4. **filtered hybrid query**: eligibility (SQL filter on the index, and the
   pipeline's Python filter for comparison; both must agree), then BM25 top-30
   + dense top-30 + RRF, no rerank; query vectors are precomputed (query
   embedding excluded, reported apart in 6). Same queries, same eligible sets,
   on both backends, in the same run; p50/p95 wall and CPU milliseconds;
5. dense-only through vec0 KNN (``DenseMode.SQL``) and the fetch-vs-KNN crossover;
6. **embedding rate** of the real ``use`` model on 500 corpus texts, apart, and beside it the
   **trained guard's scoring rate** on the same texts (what judging a chunk at ingest costs when
   the guard decides), in numpy and in the runtime ``load_guard()`` picks (``onnx-int8`` where
   onnxruntime is installed: ``veracity.guard.model.default_runtime``).

    python benchmarks/bench_hybrid_100k.py --chunks 100000 --queries 300

Prints measured numbers only. The machine may be shared: load averages are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from synthetic_kb import RandomEmbedder, documents_for, write_corpus

from veracity.catalog.catalog import Catalog
from veracity.catalog.sqlite import SQLiteStore
from veracity.guard.model import load_guard
from veracity.index.ann import ANN_MIN_ROWS
from veracity.index.quantized import QUANTIZED_MIN_ROWS
from veracity.index.snapshot import IndexSnapshot, index_text
from veracity.index.sqlite.search import DenseMode, SQLiteSearchIndex
from veracity.index.sqlite.tables import IndexTables
from veracity.ingest.run import ingest_paths
from veracity.model.contracts import Principal
from veracity.model.governance import EligibilityScope, eligible_documents
from veracity.pipeline.engine import Engine
from veracity.pipeline.fusion import reciprocal_rank_fusion
from veracity.pipeline.injection import use_guard
from veracity.reader.runtimes import RUNTIMES
from veracity.text import tokens as tokens_module
from veracity.text.tokens import _segment_cjk, tokenize

K = 30
AS_OF = datetime(2026, 6, 1, tzinfo=UTC)
VERSION = "3.2"


def scope_of(principal: Principal, roles: dict[str, frozenset[str]]) -> EligibilityScope:
    """The benchmark's eligibility scope for ``principal``: the fixed version and moment."""
    return EligibilityScope(principal, VERSION, AS_OF, roles[principal.tenant])


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


RESULTS: dict[str, Any] = {}
"""What ``--out`` writes: the figures the README's status table reads (``status_table.py``)."""


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2)}


def stats(samples_ms: list[float]) -> str:
    found = percentiles(samples_ms)
    return f"p50 {found['p50_ms']:7.2f} ms  p95 {found['p95_ms']:7.2f} ms"


def timed(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    """``function(*args, **kwargs)`` with its wall and CPU milliseconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return result, (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def ingest(
    folder: Path, files: list[Path], path: Path, embedder: RandomEmbedder | None, jobs: int | None,
    *, judge: bool = True,
):  # fmt: skip
    store = SQLiteStore(path)
    index = SQLiteSearchIndex(store)
    kb = Engine(Catalog(store), embedder, backend=index)  # type: ignore[arg-type]
    start, cpu, workers = time.perf_counter(), time.process_time(), _children_cpu()
    report = ingest_paths(kb, [folder], progress=None, jobs=jobs, judge=judge)
    return kb, report, time.perf_counter() - start, (time.process_time() - cpu, _children_cpu() - workers)


def _children_cpu() -> float:
    """CPU seconds of ended child processes (the ingest's parse workers, once their pool closes)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def print_ingest(label: str, report, seconds: float, cpu: tuple[float, float], jobs: int | None) -> None:
    s = report.seconds
    parts = " · ".join(f"{k} {v:.1f}s" for k, v in s.items())
    print(
        f"{label}: {report.chunks_added} chunks in {seconds:.1f} s wall"
        f" = {report.chunks_added / seconds:,.0f} chunks/s"
    )
    print(f"    writer stages (wall): {parts}")
    RESULTS.setdefault("ingest", {  # the first ingest printed: without vectors when it ran
        "label": label, "chunks": report.chunks_added, "wall_s": round(seconds, 1),
        "chunks_per_s": round(report.chunks_added / seconds),
        "stages_s": {k: round(v, 1) for k, v in s.items()},
    })  # fmt: skip
    own, workers = cpu
    total = own + workers
    print(f"    CPU time {total:.1f} s (writer {own:.1f} s, parse workers {workers:.1f} s,"
          f" jobs {jobs or 'auto'}) = {report.chunks_added / total:,.0f} chunks per CPU-second")
    steps = report.worker_seconds
    if steps:
        named = {"load": "parse + chunk", "tokenize": "index tokens", "judge": "injection verdicts"}
        shares = " · ".join(f"{named.get(k, k)} {v:.1f} s ({v / total:.0%})" for k, v in steps.items())
        print(f"    parse workers' CPU by step (share of all the ingest's CPU): {shares}")
    embed = s.get("embed", 0.0)
    if embed:
        print(f"    embedding (a model step, the writer's): {embed:.1f} s wall ({embed / seconds:.0%});"
              f" without it {report.chunks_added / (seconds - embed):,.0f} chunks/s")


def make_queries(kb: Engine, tenants: int, n: int, rng: np.random.Generator):
    """(principal, tokens, query vector) triples: terms of a random chunk, vector near that chunk's."""
    connection = kb.catalog.store.connection
    tables = IndexTables(kb.snapshot.version)
    rows = connection.execute(
        f"SELECT c.chunk_id, d.tenant FROM {tables.chunks} c JOIN {tables.documents} d USING (doc_key) "
        "ORDER BY c.chunk_key"
    )
    by_tenant: dict[str, list[str]] = {}
    for chunk_id, tenant in rows:
        by_tenant.setdefault(tenant, []).append(chunk_id)
    embedder = RandomEmbedder()
    queries = []
    for i in range(n):
        tenant = f"tenant-{i % tenants}"
        chunk = kb.snapshot.chunks[by_tenant[tenant][int(rng.integers(len(by_tenant[tenant])))]]
        terms = list(dict.fromkeys(tokenize(chunk.text)))
        picked = [
            terms[j]
            for j in rng.choice(len(terms), size=min(len(terms), int(rng.integers(3, 7))), replace=False)
        ]
        vector = (
            embedder.embed_batch([index_text(chunk)])[0] + rng.standard_normal(512).astype(np.float32) * 0.03
        )
        vector /= np.linalg.norm(vector)
        role = "public" if i % 3 else "support"
        queries.append((Principal.of(tenant, role), tokenize(" ".join(picked)), vector.astype(np.float32)))
    return queries


def hybrid(backend, principal: Principal, tokens, vector, eligible, model_id: str, parts=None):
    """BM25 top-K + dense top-K + RRF; appends the two channels' wall ms to ``parts`` if given."""
    start = time.perf_counter()
    lexical = backend.lexical_search(principal.tenant, tokens, k=K, eligible_document_ids=eligible)
    middle = time.perf_counter()
    dense = backend.dense_search(
        principal.tenant, vector, k=K, eligible_document_ids=eligible, model_id=model_id
    )
    if parts is not None:
        parts.append(((middle - start) * 1000, (time.perf_counter() - middle) * 1000))
    return reciprocal_rank_fusion({"bm25": [c for c, _ in lexical], "dense": [c for c, _ in dense]})


def exact_dense(index: SQLiteSearchIndex) -> None:
    """Exact dense search (the peer is exact): no sign-bit pre-selection, no approximate index."""
    index.quantized_min_rows = index.ann_min_rows = None


def default_dense(index: SQLiteSearchIndex) -> None:
    """The index's default dense plans."""
    index.quantized_min_rows, index.ann_min_rows = QUANTIZED_MIN_ROWS, ANN_MIN_ROWS


def bench_queries(kb: Engine, snapshot: IndexSnapshot | None, queries, model_id: str) -> None:
    """Filtered hybrid queries: SQLite (exact dense, default dense plan) vs the in-memory peer if built."""
    index: SQLiteSearchIndex = kb.snapshot  # type: ignore[assignment]
    reference = snapshot if snapshot is not None else index  # whose documents the Python filter reads
    exact_dense(index)
    roles = {p.tenant: kb.catalog.roles(p.tenant) for p, _, _ in queries}
    for principal in {p for p, _, _ in queries}:  # first query per tenant loads its arrays and matrix
        eligible = index.eligible_document_ids(scope_of(principal, roles))
        _, wall, _ = timed(hybrid, index, principal, ["x"], queries[0][2], eligible, model_id)
        print(f"  cold load {principal.tenant}/{sorted(principal.roles)[0]}: {wall:.0f} ms")
    t = {name: [] for name in ("sql_filter", "py_filter", "sql_step", "sql_step_cold", "sqlite",
                               "sqlite_cpu", "snapshot", "snapshot_cpu", "sqlite_lex", "sqlite_dense",
                               "snap_lex", "snap_dense",
                               "binary_dense", "hybrid_default")}  # fmt: skip
    plans: set[str] = set()
    recall_binary: list[float] = []
    recall_default: list[float] = []
    fractions = []
    same_top = 0
    tenant_docs: dict[str, int] = {}
    for document in reference.documents.values():
        tenant_docs[document.tenant] = tenant_docs.get(document.tenant, 0) + 1
    def default_plan(principal, tokens, vector, eligible, exact_top) -> None:
        default_dense(index)
        _, wall, _ = timed(hybrid, index, principal, tokens, vector, eligible, model_id)
        t["hybrid_default"].append(wall)
        plans.add(index.last_dense_plan)
        found = index.dense_search(principal.tenant, vector, k=10, eligible_document_ids=eligible,
                                   model_id=model_id)  # fmt: skip
        recall_default.append(len({c for c, _ in exact_top} & {c for c, _ in found}) / max(1, len(exact_top)))
        exact_dense(index)

    for number, (principal, tokens, vector) in enumerate(queries):
        scope = scope_of(principal, roles)
        eligible, wall, _ = timed(index.eligible_document_ids, scope)
        t["sql_filter"].append(wall)
        python_step, wall, _ = timed(eligible_documents, reference.documents, scope)
        t["py_filter"].append(wall)
        assert python_step.document_ids == eligible, "SQL and Python governance filters disagree"
        sql_step, wall, _ = timed(index.eligible_documents, scope)
        t["sql_step"].append(wall)
        assert sql_step == python_step, "SQL and Python exclusion reasons disagree"
        cold, wall, _ = timed(index.eligibility().compute, scope)
        t["sql_step_cold"].append(wall)
        assert cold == python_step, "SQL and Python exclusion reasons disagree"
        fractions.append(len(eligible) / tenant_docs[principal.tenant])
        eligible = frozenset(eligible)
        parts: list[tuple[float, float]] = []
        exact_top = index.dense_search(principal.tenant, vector, k=10, eligible_document_ids=eligible,
                                       model_id=model_id)  # fmt: skip
        if number % 2:  # the first run of a query reads its postings: alternate which plan goes first
            default_plan(principal, tokens, vector, eligible, exact_top)
        a, wall, cpu = timed(hybrid, index, principal, tokens, vector, eligible, model_id, parts)
        t["sqlite"].append(wall)
        t["sqlite_cpu"].append(cpu)
        if snapshot is not None:
            b, wall, cpu = timed(hybrid, snapshot, principal, tokens, vector, eligible, model_id, parts)
            t["snapshot"].append(wall)
            t["snapshot_cpu"].append(cpu)
            same_top += [c for c, _ in a[:10]] == [c for c, _ in b[:10]]
        if not number % 2:
            default_plan(principal, tokens, vector, eligible, exact_top)
        index.quantized_min_rows = 1
        binary, wall, _ = timed(index.dense_search, principal.tenant, vector, k=K,
                                eligible_document_ids=eligible, model_id=model_id)  # fmt: skip
        index.quantized_min_rows = None
        t["binary_dense"].append(wall)
        overlap = {c for c, _ in exact_top} & {c for c, _ in binary[:10]}
        recall_binary.append(len(overlap) / max(1, len(exact_top)))
        for name, (lexical_ms, dense_ms) in zip(("sqlite", "snap"), parts, strict=False):
            t[f"{name}_lex"].append(lexical_ms)
            t[f"{name}_dense"].append(dense_ms)
    n = len(queries)
    print(
        f"  eligible share of the tenant's documents: min {min(fractions):.0%} median "
        f"{statistics.median(fractions):.0%} max {max(fractions):.0%}"
        + (f"; identical fused top-10, SQLite vs peer: {same_top}/{n}" if snapshot is not None else "")
    )
    print(f"  governance filter, SQL on index      : {stats(t['sql_filter'])}")
    print(f"  governance filter, pipeline (Python) : {stats(t['py_filter'])}  [before this issue]")
    step = index.eligibility()
    cold_ratio = statistics.median(t["sql_step_cold"]) / statistics.median(t["py_filter"])
    print(f"  eligibility step in SQL with reasons, computed each time: {stats(t['sql_step_cold'])}"
          f"  [ratio to Python {cold_ratio:.2f}]")
    print(f"  eligibility step as the pipeline runs it (outcome kept per principal class and validity"
          f" interval; {step.hits} reused, {step.misses} computed): {stats(t['sql_step'])}")
    print(f"  dense binary (oversample {index.oversample}, at least {index.min_candidates} candidates)"
          f" {stats(t['binary_dense'])}; recall@10 vs exact"
          f" {statistics.mean(recall_binary):.3f}; ratio to exact dense"
          f" {statistics.median(t['binary_dense']) / statistics.median(t['sqlite_dense']):.2f}")
    print(f"  hybrid SQLite   wall {stats(t['sqlite'])}   cpu {stats(t['sqlite_cpu'])}")
    default_ratio = statistics.median(t["hybrid_default"]) / statistics.median(t["sqlite"])
    RESULTS["hybrid"] = {"queries": len(t["hybrid_default"]), **percentiles(t["hybrid_default"])}
    print(f"  hybrid SQLite, default dense plan ({', '.join(sorted(plans))}):"
          f" wall {stats(t['hybrid_default'])};"
          f" its dense recall@10 vs exact {statistics.mean(recall_default):.3f};"
          f" ratio to exact-dense hybrid {default_ratio:.2f}")
    print(f"    SQLite   bm25 {stats(t['sqlite_lex'])} · dense {stats(t['sqlite_dense'])}")
    if snapshot is not None:
        print(f"  hybrid snapshot wall {stats(t['snapshot'])}   cpu {stats(t['snapshot_cpu'])}")
        print(f"    snapshot bm25 {stats(t['snap_lex'])} · dense {stats(t['snap_dense'])}")
    info = index.cache_info()
    hits, reads = info["postings_hits"], info["postings_reads"]
    print(
        f"    SQLite postings cache: {hits}/{hits + reads} term lookups served from memory, "
        f"{info['postings_entries']:,} postings held; resident matrices {info['matrices_loaded']}"
    )
    if snapshot is not None:
        ratio = statistics.median(t["sqlite"]) / statistics.median(t["snapshot"])
        print(f"  ratio SQLite / in-memory snapshot (p50 wall): {ratio:.2f}")
    default_dense(index)  # the index's defaults again for what follows


READER_STAGE = "sentence_reader"
"""The learned reader's trace stage: printed on its own line with its own budget (issue #33: p50
≤ 150 ms), not counted in the end-to-end target (issue #35)."""


def bench_ask_stages(kb: Engine, queries, n: int) -> None:
    """``kb.ask`` end to end (random query vectors: no model), p50/p95 per trace stage."""
    per_stage: dict[str, list[float]] = {}
    totals: list[float] = []
    without_reader: list[float] = []
    for principal, tokens, _ in queries[:n]:
        question = " ".join(tokens[:6]) + "？"
        answer, wall, _ = timed(kb.ask, question, principal, VERSION, AS_OF)
        totals.append(wall)
        timings = answer.trace.stage_ms  # a stage runs once per trust pool and per retry: summed
        without_reader.append(wall - timings.get(READER_STAGE, 0.0))
        for stage, ms in timings.items():
            per_stage.setdefault(stage, []).append(ms)
        per_stage.setdefault("answer (decision + composition + retry, = total - stages)", []).append(
            wall - sum(timings.values())
        )
    print(f"ask end to end, {len(totals)} asks (warm, random query vectors): total {stats(totals)}")
    print(f"  the same without the learned reader stage ({READER_STAGE}, its own line and budget below):"
          f" {stats(without_reader)}")
    RESULTS["ask"] = {
        "asks": len(totals), **percentiles(totals), "without_reader": percentiles(without_reader),
        "stages": {stage: percentiles(samples) for stage, samples in per_stage.items()},
    }  # fmt: skip
    print("| stage | p50 ms | p95 ms |\n|---|---|---|")
    for stage, samples in per_stage.items():
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        print(f"| {stage} | {statistics.median(ordered):.2f} | {p95:.2f} |")


def bench_sql_dense(kb: Engine, queries, model_id: str, n: int) -> None:
    index = SQLiteSearchIndex(kb.catalog.store, dense_mode=DenseMode.SQL)
    roles = {p.tenant: kb.catalog.roles(p.tenant) for p, _, _ in queries}
    for threshold, label in ((0, "vec0 KNN"),):
        index.sql_exact_max = threshold
        samples = []
        for principal, _, vector in queries[:n]:
            eligible = index.eligible_document_ids(scope_of(principal, roles))
            _, wall, _ = timed(
                index.dense_search,
                principal.tenant,
                vector,
                k=K,
                eligible_document_ids=eligible,
                model_id=model_id,
            )
            samples.append(wall)
        print(f"  dense via {label} (tenant partition + doc_key IN): {stats(samples)}  [{n} queries]")
    principal, _, vector = queries[0]
    all_eligible = sorted(index.eligible_document_ids(scope_of(principal, roles)))
    for docs in (10, 50, 150, 400):
        subset = set(all_eligible[:docs])
        chunks = sum(len(index.chunks_by_document[d]) for d in subset)
        row = []
        for threshold in (10**9, 0):
            index.sql_exact_max = threshold
            walls = [
                timed(
                    index.dense_search,
                    principal.tenant,
                    vector,
                    k=K,
                    eligible_document_ids=subset,
                    model_id=model_id,
                )[1]
                for _ in range(3)
            ]
            row.append(f"{index.last_dense_plan} {statistics.median(walls):7.1f} ms")
        print(f"  crossover, {chunks:5d} eligible chunks: " + " | ".join(row))


def _batched_seconds(read: Callable[[list[str]], Any], texts: list[str], batch: int = 64) -> float:
    """Wall seconds ``read`` takes over ``texts`` in batches of ``batch``."""
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        read(texts[i : i + batch])
    return time.perf_counter() - start


def bench_embedding(texts: list[str]) -> None:
    from veracity.index.embedders import make_embedder

    embedder = make_embedder("use")
    _, load_ms, _ = timed(embedder.embed_batch, ["warm up"])
    seconds = _batched_seconds(embedder.embed_batch, texts)
    print(f"embedding ({embedder.model_id}, {len(texts)} chunk texts, batches of 64): "
          f"{len(texts) / seconds:,.0f} texts/s  (model load {load_ms / 1000:.1f} s, apart)")  # fmt: skip
    for runtime in dict.fromkeys(["numpy", load_guard().runtime]):  # and the one judging uses
        guard = load_guard(runtime=runtime)
        guard.scores(["warm up"])
        scored = _batched_seconds(guard.scores, texts)
        print(f"trained guard scoring ({guard.version}, {runtime}, the same {len(texts)} texts, batches of"
              f" 64): {len(texts) / scored:,.0f} texts/s = {seconds / scored:.2f} x the embedding rate")
    one = [timed(embedder.embed_batch, [t], kind="query")[1] for t in texts[:50]]
    print(f"query embedding, one text: {stats(one)}  (excluded from the query timings above)")


def build(args: argparse.Namespace, work: Path, embedder: RandomEmbedder) -> Engine:
    """Write the corpus, ingest it lexical-only then with vectors (both rates printed)."""
    folder = work / "corpus"
    start = time.perf_counter()
    files = write_corpus(folder, documents_for(args.chunks), args.tenants, args.seed)
    print(
        f"corpus: {len(files)} Markdown files, {args.tenants} tenants,"
        f" written in {time.perf_counter() - start:.1f} s"
    )
    if args.lexical_ingest:
        judging = "cue-word detector judging the non-official chunks in the parse workers"
        runs = [(f"ingest without embedding, {judging}", True, None)]
        if args.model_free_ingest:
            runs.append(("ingest without embedding or any model step (nothing judged at ingest: asks judge"
                         " a text when they read it, `veracity reindex` keeps the verdicts)", False, None))
        if args.guard_judging:
            judge_guard = load_guard(runtime=None if args.guard_runtime == "auto" else args.guard_runtime)
            runs.append((f"ingest without embedding, the trained guard ({judge_guard.runtime}) judging the"
                         " non-official chunks in the parse workers", True, judge_guard))
        for label, judge, guard in runs:
            use_guard(guard)
            lexical_kb, report, seconds, cpu = ingest(
                folder, files, work / "lexical.sqlite", None, args.jobs, judge=judge
            )
            use_guard(None)
            print_ingest(label, report, seconds, cpu, args.jobs)
            if not judge:
                RESULTS["ingest_without_model_steps"] = {
                    "chunks": report.chunks_added, "wall_s": round(seconds, 1),
                    "chunks_per_s": round(report.chunks_added / seconds),
                }  # fmt: skip
            lexical_kb.catalog.store.close()
            for path in work.glob("lexical.sqlite*"):  # its disk is the next ingest's
                shutil.rmtree(path) if path.is_dir() else path.unlink()
            for cached in (_segment_cjk, tokens_module._cjk_tokens, tokens_module._word_tokens):
                cached.cache_clear()  # no head start from the first ingest's tokenizer caches
    kb, report, seconds, cpu = ingest(folder, files, work / "hybrid.sqlite", embedder, args.jobs)
    print_ingest("ingest with vec0 insert (mixture vectors, no model)", report, seconds, cpu, args.jobs)
    print(f"  file size: {(work / 'hybrid.sqlite').stat().st_size / 1e6:,.0f} MB; load average {load()}")
    print_sizes(kb, report.chunks_added)
    return kb


def print_sizes(kb: Engine, chunks: int) -> None:
    """Bytes per table group (SQLite's dbstat: pages, so free space inside pages counts too)."""
    connection = kb.catalog.store.connection
    tables = IndexTables(kb.snapshot.version)
    try:
        rows = connection.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    except Exception as error:  # a SQLite built without dbstat: the file size above is all there is
        print(f"  (no per-table sizes: {error})")
        return
    groups: dict[str, int] = {}
    for name, size in rows:
        if name.startswith(tables.chunks) or name.startswith(f"sqlite_autoindex_{tables.chunks}"):
            group = "index chunks (ix_chunks)"
        elif name.startswith(tables.documents) or name.startswith(f"sqlite_autoindex_{tables.documents}"):
            group = "index documents (ix_documents)"
        elif name.startswith(("fts", "vec")):
            group = "FTS5 and vec0 tables"
        elif name.startswith(("ix", "sqlite_autoindex_ix")):
            group = "other index tables"
        elif name.startswith(("chunks", "sqlite_autoindex_chunks")):
            group = "catalog chunks"
        elif name.startswith(("documents", "sqlite_autoindex_documents")):
            group = "catalog documents"
        else:
            group = "other catalog tables"
        groups[group] = groups.get(group, 0) + int(size)
    total = sum(groups.values())
    print(f"  pages in use: {total / 1e6:,.1f} MB = {total / max(1, chunks):,.0f} bytes per chunk")
    for group, size in sorted(groups.items(), key=lambda item: -item[1]):
        print(f"    {group:32s} {size / 1e6:8.1f} MB  {size / max(1, chunks):7,.0f} B/chunk")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000, help="about this many chunks (default 100000)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--asks", type=int, default=100, help="kb.ask runs for the per-stage table")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--no-embedding", action="store_true", help="skip the real-model embedding rate")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="query the workdir's hybrid.sqlite if present")
    parser.add_argument("--peer", action=argparse.BooleanOptionalAction, default=None,
                        help="build the in-memory IndexSnapshot peer (default: up to 200k chunks)")
    parser.add_argument("--lexical-ingest", action=argparse.BooleanOptionalAction, default=True,
                        help="also time an ingest without vectors, into a knowledge base of its own")
    parser.add_argument("--model-free-ingest", action=argparse.BooleanOptionalAction, default=True,
                        help="time the ingest without vectors again with no injection verdicts judged at"
                             " ingest: the rate without model steps")
    parser.add_argument("--guard-judging", action=argparse.BooleanOptionalAction, default=False,
                        help="time the ingest without vectors again with the trained guard judging the"
                             " non-official chunks (instead of the cue-word detector)")
    parser.add_argument("--guard-runtime", choices=["auto", *RUNTIMES], default="auto",
                        help="what computes the judging guard's scores (auto: load_guard()'s pick)")
    parser.add_argument("--sql-dense", action=argparse.BooleanOptionalAction, default=None,
                        help="time vec0 KNN (DenseMode.SQL) too (default: up to 200k chunks)")
    parser.add_argument("--jobs", type=int, default=None, help="ingest worker processes (default: auto)")
    parser.add_argument("--out", type=Path, default=None, help="write the status table's figures as JSON")
    args = parser.parse_args()
    small = args.chunks <= 200_000
    work = args.workdir or Path(tempfile.mkdtemp(prefix="veracity-bench-"))
    print(f"machine: {os.cpu_count()} cpus, load average {load()}; workdir {work}")
    embedder = RandomEmbedder()
    if args.reuse and (work / "hybrid.sqlite").exists():
        store = SQLiteStore(work / "hybrid.sqlite")
        kb = Engine(Catalog(store), embedder, backend=SQLiteSearchIndex(store))  # type: ignore[arg-type]
        print(f"reusing {work / 'hybrid.sqlite'} (no corpus written, no ingest measured)")
    else:
        kb = build(args, work, embedder)
    start = time.perf_counter()
    reopened = SQLiteSearchIndex(SQLiteStore(work / "hybrid.sqlite"))
    print(
        f"reopen: {1000 * (time.perf_counter() - start):.0f} ms,"
        f" {reopened.stats().chunks} chunks, nothing embedded"
    )
    snapshot = None
    if args.peer if args.peer is not None else small:
        items = [(d, tuple(kb.catalog.chunks(d.document_id))) for d in kb.catalog.documents()]
        start = time.perf_counter()
        snapshot = IndexSnapshot.build(items, embedder)  # type: ignore[arg-type]
        print(f"in-memory IndexSnapshot build (peer): {time.perf_counter() - start:.1f} s")

    queries = make_queries(kb, args.tenants, args.queries, np.random.default_rng(args.seed))
    print(f"filtered hybrid query, {len(queries)} queries, k={K}, RRF, no rerank, query vectors precomputed:")
    bench_queries(kb, snapshot, queries, embedder.model_id)
    bench_ask_stages(kb, queries, min(len(queries), args.asks))
    if args.sql_dense if args.sql_dense is not None else small:
        print(f"dense in SQL (DenseMode.SQL), load average {load()}:")
        bench_sql_dense(kb, queries, embedder.model_id, 20)
    if not args.no_embedding:
        index = kb.snapshot
        groups = list(index.chunks_by_document.values())[:200]
        texts = [index_text(index.chunks[c]) for ids in groups for c in ids]
        bench_embedding(texts[:500])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"peak RSS of this process (ingest, peer and queries included): {peak:.2f} GiB")
    print(f"load average at the end: {load()}")
    if args.out:
        RESULTS.update(chunks=args.chunks, queries=args.queries, machine_cpus=os.cpu_count())
        args.out.write_text(json.dumps(RESULTS, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
