"""Measure a veracity embedder: speed, load time, memory, and dense-only retrieval quality.

Examples::

    # speed + memory on one core (200 Chinese sentences of about 60 characters)
    python benchmarks/bench_embedders.py --model use
    # add retrieval quality on a BEIR-style folder (corpus.jsonl[.gz], queries.jsonl, qrels/)
    python benchmarks/bench_embedders.py --model e5 --no-speed \\
        --dataset ../shared/datasets/scifact --max-queries 300 --max-docs 1500

``--threads N`` (default 1) pins the process to N cores and sets the BLAS/OpenMP
thread variables *before* numpy or the model library load, so speed is per core.
With ``--max-docs`` below the corpus size, the corpus is every document judged
relevant for the selected queries plus a seeded random sample of the others;
the table says so. Metrics use binary gains: nDCG@10 (log2 discount), Recall@k
(share of a query's relevant documents in its top k), MRR@10. Numpy only; no
network. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

# found without importing veracity, whose import loads numpy before the thread settings apply
DEFAULT_SPEED_CORPUS = (
    Path(os.environ.get("VERACITY_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets")
    / "cmrc2018" / "beir" / "dev" / "corpus.jsonl"
)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pin_threads(threads: int) -> None:
    """Limit this process to ``threads`` cores; must run before numpy is imported."""
    if "numpy" in sys.modules:
        raise RuntimeError("pin_threads must run before numpy is imported")
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))[:threads]
        os.sched_setaffinity(0, cores)


def rss_mib() -> tuple[float, float]:
    """Current and peak resident set size of this process, in MiB (Linux)."""
    values = {}
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", float("nan")), values.get("VmHWM", float("nan"))


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of a ``.jsonl`` or ``.jsonl.gz`` file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def speed_sentences(corpus: Path, count: int) -> list[str]:
    """``count`` Chinese sentences of 50-75 characters cut from a BEIR corpus, in file order."""
    sentences: list[str] = []
    for row in read_jsonl(corpus):
        for piece in re.split(r"(?<=[。！？])", row["text"]):
            piece = piece.strip()
            if 50 <= len(piece) <= 75:
                sentences.append(piece)
                if len(sentences) == count:
                    return sentences
    raise SystemExit(f"only {len(sentences)} sentences of 50-75 characters in {corpus}")


def measure_speed(model_name: str, texts: Sequence[str], repeats: int) -> dict[str, Any]:
    """Load time, memory added by the model, batch throughput and single-query latency."""
    import numpy as np

    from veracity.index.embedders import make_embedder

    rss_before, _ = rss_mib()
    start = time.perf_counter()
    embedder = make_embedder(model_name)
    embedder.embed_batch(["预热"], kind="passage")  # forces the model to load
    load_s = time.perf_counter() - start
    rss_loaded, _ = rss_mib()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        vectors = embedder.embed_batch(list(texts), kind="passage")
        best = min(best, time.perf_counter() - start)
    latencies = []
    for text in texts[:20]:
        start = time.perf_counter()
        embedder.embed_batch([text], kind="query")
        latencies.append(time.perf_counter() - start)
    rss_after, peak = rss_mib()
    return {
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "texts": len(texts),
        "mean_chars": sum(map(len, texts)) / len(texts),
        "load_s": load_s,
        "texts_per_s": len(texts) / best,
        "single_ms": 1000 * float(np.median(latencies)),
        "rss_added_mib": rss_loaded - rss_before,
        "rss_used_mib": rss_after - rss_before,
        "peak_rss_mib": peak,
        "out_shape": vectors.shape,
    }


def load_beir(
    folder: Path, split: str | None, max_queries: int, max_docs: int, seed: int
) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]], str]:
    """Corpus texts, query texts and qrels of a BEIR folder, cut as the flags say."""
    qrels_dir = folder / "qrels"
    if split is None:
        tsvs = sorted(qrels_dir.glob("*.tsv"))
        names = [path.stem for path in tsvs]
        split = "test" if "test" in names else names[0]
    qrels: dict[str, set[str]] = {}
    with open(qrels_dir / f"{split}.tsv", encoding="utf-8") as handle:
        next(handle)  # header
        for line in handle:
            query_id, doc_id, score = line.rstrip("\n").split("\t")
            if int(score) > 0 and (query_id in qrels or len(qrels) < max_queries):
                qrels.setdefault(query_id, set()).add(doc_id)
    queries = {row["_id"]: row["text"] for row in read_jsonl(folder / "queries.jsonl") if row["_id"] in qrels}
    corpus_path = folder / "corpus.jsonl"
    if not corpus_path.exists():
        corpus_path = folder / "corpus.jsonl.gz"
    corpus = {row["_id"]: f"{row.get('title', '')} {row['text']}".strip() for row in read_jsonl(corpus_path)}
    total = len(corpus)
    if 0 < max_docs < total:
        relevant = set().union(*qrels.values()) & corpus.keys()
        others = sorted(corpus.keys() - relevant)
        random.Random(seed).shuffle(others)
        keep = relevant | set(others[: max(0, max_docs - len(relevant))])
        corpus = {doc_id: text for doc_id, text in corpus.items() if doc_id in keep}
        note = f"{len(corpus):,} of {total:,} docs (all {len(relevant)} relevant + random)"
    else:
        note = f"full corpus, {total:,} docs"
    return corpus, queries, qrels, f"{split}: {len(queries)} queries, {note}"


def retrieval_metrics(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    """Binary-gain metrics of one ranked list."""
    import numpy as np

    gains = np.array([1.0 if doc_id in relevant else 0.0 for doc_id in ranked[:10]])
    discounts = 1.0 / np.log2(np.arange(2, 12))
    dcg = float(gains @ discounts[: gains.size])
    ideal = float(discounts[: min(len(relevant), 10)].sum())
    first = next((rank for rank, doc_id in enumerate(ranked[:10], 1) if doc_id in relevant), 0)
    metrics = {"nDCG@10": dcg / ideal if ideal else 0.0, "MRR@10": 1.0 / first if first else 0.0}
    for k in (5, 10, 100):
        metrics[f"R@{k}"] = len(relevant & set(ranked[:k])) / len(relevant)
    return metrics


def measure_quality(model_name: str, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Dense-only retrieval over a BEIR folder through ``DenseIndex``."""
    import numpy as np

    from veracity.index.dense import ALL, DenseIndex
    from veracity.index.embedders import make_embedder

    corpus, queries, qrels, note = load_beir(folder, args.split, args.max_queries, args.max_docs, args.seed)
    embedder = make_embedder(model_name)
    doc_ids = list(corpus)
    start = time.perf_counter()
    blocks = []
    for offset in range(0, len(doc_ids), 64):
        batch = [corpus[doc_id] for doc_id in doc_ids[offset : offset + 64]]
        blocks.append(embedder.embed_batch(batch, kind="passage"))
        if args.progress:
            print(f"  {offset + len(batch)}/{len(doc_ids)} docs", file=sys.stderr, flush=True)
    encode_s = time.perf_counter() - start
    index = DenseIndex.build(doc_ids, np.vstack(blocks), embedder.model_id)
    query_ids = list(queries)
    start = time.perf_counter()
    query_vectors = embedder.embed_batch([queries[q] for q in query_ids], kind="query")
    query_s = time.perf_counter() - start
    totals: dict[str, float] = {}
    for query_id, vector in zip(query_ids, query_vectors, strict=True):
        hits = index.search(vector, k=100, allowed=ALL, model_id=embedder.model_id)
        for name, value in retrieval_metrics([hit.id for hit in hits], qrels[query_id]).items():
            totals[name] = totals.get(name, 0.0) + value
    mean_chars = sum(map(len, corpus.values())) / len(corpus)
    return {
        "dataset": "/".join(folder.parts[-3:]) if folder.name in ("dev", "trial") else folder.name,
        "slice": note,
        "doc_chars": mean_chars,
        "docs_per_s": len(doc_ids) / encode_s,
        "encode_s": encode_s,
        "queries_per_s": len(query_ids) / query_s,
        **{name: value / len(query_ids) for name, value in totals.items()},
    }


def print_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> None:
    """Print ``rows`` as a Markdown table; ``columns`` are (key, header, format)."""
    print("| " + " | ".join(header for _, header, _ in columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in rows:
        cells = [format(row[key], fmt) if key in row else "" for key, _, fmt in columns]
        print("| " + " | ".join(cells) + " |")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=("use", "e5", "fake"), default="use")
    parser.add_argument(
        "--dataset", type=Path, action="append", default=[], help="BEIR folder; repeat for several"
    )
    parser.add_argument("--split", default=None, help="qrels split (default: test, else the only one)")
    parser.add_argument("--max-queries", type=int, default=300)
    parser.add_argument("--max-docs", type=int, default=0, help="0 = whole corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="cores to pin to (0 = leave)")
    parser.add_argument("--speed-texts", type=int, default=200)
    parser.add_argument("--speed-corpus", type=Path, default=DEFAULT_SPEED_CORPUS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-speed", action="store_true", help="skip the speed section")
    parser.add_argument("--progress", action="store_true", help="report corpus encoding progress")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the requested measurements and print the tables."""
    args = parse_args(argv)
    if args.threads > 0:
        pin_threads(args.threads)
    print(f"model={args.model} threads={args.threads or 'all'} cores={len(os.sched_getaffinity(0))}\n")
    if not args.no_speed:
        texts = speed_sentences(args.speed_corpus, args.speed_texts)
        row = measure_speed(args.model, texts, args.repeats)
        print_table(
            [row],
            [
                ("model_id", "model", "s"),
                ("dim", "dim", "d"),
                ("texts", "texts", "d"),
                ("mean_chars", "chars/text", ".0f"),
                ("load_s", "load s", ".2f"),
                ("texts_per_s", "texts/s", ".1f"),
                ("single_ms", "1 query ms", ".1f"),
                ("rss_added_mib", "RSS +load MiB", ".0f"),
                ("rss_used_mib", "RSS +after run MiB", ".0f"),
                ("peak_rss_mib", "peak RSS MiB", ".0f"),
            ],
        )
        print()
    rows = [measure_quality(args.model, folder, args) for folder in args.dataset]
    if rows:
        print_table(
            rows,
            [
                ("dataset", "dataset", "s"),
                ("slice", "slice", "s"),
                ("doc_chars", "chars/doc", ".0f"),
                ("docs_per_s", "docs/s", ".1f"),
                ("nDCG@10", "nDCG@10", ".4f"),
                ("R@5", "R@5", ".4f"),
                ("R@10", "R@10", ".4f"),
                ("R@100", "R@100", ".4f"),
                ("MRR@10", "MRR@10", ".4f"),
            ],
        )


if __name__ == "__main__":
    main()
