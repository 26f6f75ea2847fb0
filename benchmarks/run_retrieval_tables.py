"""Reproduce the README's retrieval tables: SciFact test, CMRC 2018 dev, DuReader demo.

Each job runs ``veracity.bench.run.benchmark_folder`` (what ``veracity bench
retrieval`` calls) with all four channels and writes
``benchmarks/results/<job>-<embedder>.json``; then the Markdown tables are
printed from every JSON found there. Corpus embeddings are cached under
``benchmarks/results/cache`` (e5 over SciFact's 5,183 abstracts takes tens of
minutes on one shared core; reruns read the cache).

Tuning (BM25 k1/b and rerank weights) never sees the evaluated queries:

- SciFact: its own ``train`` split (809 queries, same corpus);
- CMRC 2018 dev: the CMRC ``trial`` split (a different 256-passage corpus);
- DuReader demo: no train split exists (both demo splits are pooled into the
  test qrels), so it is tuned on CMRC ``trial`` as well (Chinese, disjoint).

Examples::

    python benchmarks/run_retrieval_tables.py                      # every job, both embedders
    python benchmarks/run_retrieval_tables.py --jobs scifact --embedders e5
    python benchmarks/run_retrieval_tables.py --tables-only        # print from existing JSON
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from veracity.bench.beir import BeirDataset, load_beir, restrict, subset
from veracity.bench.report import canonical_json, markdown_table, summary_lines
from veracity.bench.retrieval import BenchSettings
from veracity.bench.run import resolve_tuning, run_benchmark
from veracity.bench.shared import MISSING, datasets_folder

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def datasets_dir() -> Path:
    """``$VERACITY_DATASETS``, else ``shared/datasets`` beside the repository."""
    found = datasets_folder()
    if found is None:
        raise SystemExit(MISSING)
    return found


SUBSET_DOCS = 1000
SUBSET_TRAIN_QUERIES = 300
Loader = Callable[[], tuple[BeirDataset, BeirDataset | None]]


def scifact_subset(data: Path) -> tuple[BeirDataset, BeirDataset]:
    """SciFact test on a 1,000-document corpus, and its tuning split on the same corpus.

    e5 embeds about one SciFact abstract per CPU-second here, so the full
    5,183-document corpus does not fit a session. The corpus keeps every
    document judged by the 300 test queries and by the first 300 train queries
    (by id), plus a seeded random sample of the others up to 1,000 documents.
    Every channel runs on this same corpus, so its rows compare with each other
    (not with the full-corpus rows).
    """
    test = load_beir(data / "scifact", "test")
    train = load_beir(data / "scifact", "train")
    train_ids = sorted(train.queries)[:SUBSET_TRAIN_QUERIES]
    train_docs = {d for q in train_ids for d in train.qrels[q]}
    judged = {d for q in test.queries for d in test.qrels[q]} | train_docs
    sliced = subset(test, list(test.queries), SUBSET_DOCS - len(judged), seed=0, keep_docs=train_docs)
    docs = set(sliced.corpus)
    name = f"scifact[{len(docs)}d]"
    return restrict(test, docs, list(test.queries), name=name), restrict(train, docs, train_ids, name=name)


def _folder(path: Path, split: str, tune_on: str | None) -> Loader:
    return lambda: (load_beir(path, split), resolve_tuning(path, split, tune_on))


def jobs(data: Path) -> dict[str, Loader]:
    """Job name -> a loader of (evaluated dataset, tuning dataset or None)."""
    cmrc_trial = f"{data / 'cmrc2018' / 'beir' / 'trial'}:trial"
    return {
        "scifact-test": _folder(data / "scifact", "test", None),  # None: the folder's train split
        "scifact-subset": lambda: scifact_subset(data),
        "cmrc2018-dev": _folder(data / "cmrc2018" / "beir" / "dev", "dev", cmrc_trial),
        "dureader-doc": _folder(data / "dureader_demo" / "beir" / "doc", "test", cmrc_trial),
        "dureader-passage": _folder(data / "dureader_demo" / "beir" / "passage", "test", cmrc_trial),
    }


def run_job(name: str, load: Loader, embedder: str, progress: bool) -> Path:
    """Run one job and write its JSON; returns the path."""
    settings = BenchSettings(embedder=embedder, cache_dir=RESULTS / "cache", progress=progress)
    start = time.perf_counter()
    dataset, tuning = load()
    report, _ = run_benchmark(dataset, settings, tuning=tuning)
    report["job"] = {"name": name, "embedder": embedder, "wall_s": round(time.perf_counter() - start, 1)}
    path = RESULTS / f"{name}-{embedder}.json"
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(canonical_json(report), encoding="utf-8")
    print("\n".join(summary_lines(report)), file=sys.stderr)
    print(markdown_table([report]), file=sys.stderr)
    return path


def print_tables(order: list[str]) -> None:
    """Markdown tables from every result JSON, in job order, then the tuning notes."""

    reports = []
    for name in order:
        for embedder in ("use", "e5"):
            path = RESULTS / f"{name}-{embedder}.json"
            if path.is_file():
                reports.append(json.loads(path.read_text(encoding="utf-8")))
    print("## Retrieval quality and speed (measured)\n")
    print(markdown_table(reports))
    print("## BM25 parameters (k1, b): tuning split and evaluated split\n")
    print("| dataset | tuned on | chosen | tuning nDCG@10 per candidate | test nDCG@10 per candidate |")
    print("|---|---|---|---|---|")
    seen = set()
    for report in reports:
        name = f"{report['dataset']['name']} {report['dataset']['split']}"
        if name in seen:
            continue
        seen.add(name)
        tuning = report.get("tuning") or {}
        cands = tuning.get("bm25", {}).get("candidates", [])
        tuned = ", ".join(f"({c['k1']}, {c['b']}): {c['ndcg@10']:.4f}" for c in cands) or "–"
        tested = ", ".join(f"({c['k1']}, {c['b']}): {c['ndcg@10']:.4f}" for c in report["bm25_alternatives"])
        chosen = report["settings"]["bm25"]
        print(
            f"| {name} | {tuning.get('source', '–')} | ({chosen['k1']}, {chosen['b']}) | {tuned} | {tested} |"
        )
    print("\n## Embedders: quality per second\n")
    print(
        "| dataset | embedder | corpus docs per CPU-s | corpus docs/s wall | query embed ms p50 "
        "| dense nDCG@10 | hybrid nDCG@10 | hybrid+rerank nDCG@10 "
        "| rerank weights (coverage, fusion, semantic, lexical) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for report in reports:
        emb = report.get("embedder") or {}
        ch = report["channels"]
        w = report["settings"]["rerank_weights"]
        per_cpu = emb.get("corpus_docs_per_cpu_s")
        print(
            f"| {report['dataset']['name']} | {emb.get('name')} | {per_cpu if per_cpu else '–'} "
            f"| {emb.get('corpus_docs_per_s')} | {ch['dense']['query_embed_ms']['p50']:.1f} "
            f"| {ch['dense']['metrics']['ndcg@10']:.4f} | {ch['hybrid']['metrics']['ndcg@10']:.4f} "
            f"| {ch['hybrid+rerank']['metrics']['ndcg@10']:.4f} "
            f"| ({w['coverage']}, {w['fusion']}, {w['semantic']}, {w['lexical']}) |"
        )


def main() -> None:
    """Parse flags, run the jobs, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--jobs", default="scifact-test,scifact-subset,cmrc2018-dev,dureader-doc,dureader-passage"
    )
    parser.add_argument("--embedders", default="use,e5")
    parser.add_argument("--tables-only", action="store_true")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()
    # printing stored results reads no data set (the loaders are lazy): no data set is needed
    if args.tables_only:
        table = jobs(datasets_folder() or Path("shared-datasets-not-found"))
    else:
        table = jobs(datasets_dir())
    order = [name.strip() for name in args.jobs.split(",") if name.strip()]
    unknown = [name for name in order if name not in table]
    if unknown:
        raise SystemExit(f"unknown job {unknown[0]!r}; valid: {', '.join(table)}")
    if not args.tables_only:
        for name in order:
            for embedder in args.embedders.split(","):
                path = run_job(name, table[name], embedder.strip(), not args.no_progress)
                print(f"wrote {path}", file=sys.stderr)
    print_tables(list(table))


if __name__ == "__main__":
    main()
