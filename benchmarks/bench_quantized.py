"""Quantized dense search (sign bits → Hamming top ``oversample × k`` → rescore) vs exact float.

Two inputs, one table each:

1. **real vectors**: the chunk vectors of a knowledge base built with the default
   model (``use``), read from its vec0 table (``--kb``, e.g. the CMRC 2018 dev
   knowledge base), and real questions embedded with the same model
   (``--queries`` = a BEIR ``queries.jsonl``); with ``--tile`` the passage
   vectors are repeated with small seeded noise to reach a larger size (says so);
2. **random vectors**: seeded unit vectors (``--random-rows``), queries = a
   corpus vector plus noise (a near neighbour exists, as with real questions),
   and pure random queries (the worst case: nothing is near).

For each oversample factor: recall@10 of the quantized result against the exact
float top-10 (rescoring with float rows, and with int8 codes), and the time per
query as a ratio to the exact float scan over the same rows, in the same run.

    python benchmarks/bench_quantized.py --kb cache/cmrc2018-dev/catalog.sqlite \\
        --queries ../shared/datasets/cmrc2018/beir/dev/queries.jsonl --random-rows 100000 200000

The machine may be shared: absolute times are noisy; the ratios are from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from veracity.index.quantized import hamming_candidates, quantize, rescore_int8

K = 10
OVERSAMPLES = (1, 2, 4, 8, 16, 32, 64, 128)


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def exact_top(matrix: np.ndarray, query: np.ndarray, k: int = K) -> np.ndarray:
    scores = matrix @ query
    top = np.argpartition(-scores, k)[:k]
    return top[np.argsort(-scores[top], kind="stable")]


def table(label: str, matrix: np.ndarray, queries: np.ndarray) -> None:
    """Recall@10 and time ratio per oversample factor over ``matrix`` for ``queries``."""
    start = time.perf_counter()
    quantized = quantize(matrix)
    build = time.perf_counter() - start
    positions = np.arange(matrix.shape[0])
    exact_ms, truth = [], []
    for query in queries:
        begin = time.perf_counter()
        truth.append(set(exact_top(matrix, query).tolist()))
        exact_ms.append((time.perf_counter() - begin) * 1000)
    exact = statistics.median(exact_ms)
    print(
        f"\n{label}: {matrix.shape[0]:,} × {matrix.shape[1]}, {len(queries)} queries; quantize {build:.2f} s;"
        f" float {matrix.nbytes / 1e6:,.0f} MB, bits+int8 {quantized.nbytes / 1e6:,.0f} MB"
        f" (bits {quantized.bits.nbytes / 1e6:,.1f} MB); exact float scan p50 {exact:.2f} ms"
    )
    print(
        "| oversample | candidates | recall@10 (float rescore) | recall@10 (int8 rescore)"
        " | p50 ms | ratio to exact |"
    )
    print("|---|---|---|---|---|---|")
    for factor in OVERSAMPLES:
        recall_float, recall_int8, walls = [], [], []
        for query, expected in zip(queries, truth, strict=True):
            begin = time.perf_counter()
            candidates = hamming_candidates(quantized, query, positions, factor * K, full_scan=True)
            scores = np.einsum("ij,j->i", matrix[candidates], query)  # as the index rescoring
            best = candidates[np.argsort(-scores, kind="stable")[:K]]
            walls.append((time.perf_counter() - begin) * 1000)
            recall_float.append(len(expected & set(best.tolist())) / K)
            approx = rescore_int8(quantized, query, candidates)
            recall_int8.append(len(expected & set(candidates[np.argsort(-approx)[:K]].tolist())) / K)
        p50 = statistics.median(walls)
        print(
            f"| {factor} | {factor * K} | {statistics.mean(recall_float):.3f}"
            f" | {statistics.mean(recall_int8):.3f}"
            f" | {p50:.2f} | {p50 / exact:.2f} |"
        )


def read_kb_vectors(path: Path) -> np.ndarray:
    """Every chunk vector of the published index of the knowledge base file at ``path``."""
    from veracity.catalog.connection import connect
    from veracity.index.sqlite.tables import IndexTables
    from veracity.index.sqlite.vectors import load_partition
    from veracity.index.sqlite.versions import read_pointer
    from veracity.index.sqlite.writer import read_vector_model

    connection = connect(path, immutable=True)
    tables = IndexTables(read_pointer(connection)[0])
    model = read_vector_model(connection, tables)
    assert model is not None, f"{path}: no vectors"
    rows = []
    for (tenant,) in connection.execute(f"SELECT tenant FROM {tables.tenants}").fetchall():
        loaded = load_partition(connection, model.table, tenant, model.dim)
        if loaded is not None:
            rows.append(loaded[1])
    return np.vstack(rows)


def embed_questions(path: Path, n: int) -> np.ndarray:
    from veracity.index.embedders import make_embedder

    texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()[:n]]
    embedder = make_embedder("use")
    return np.vstack(
        [embedder.embed_batch(texts[i : i + 64], kind="query") for i in range(0, len(texts), 64)]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--kb",
        type=Path,
        nargs="*",
        default=[],
        help="knowledge base files (catalog.sqlite) with `use` vectors",
    )
    parser.add_argument("--queries", type=Path, help="BEIR queries.jsonl to embed with `use`")
    parser.add_argument("--max-queries", type=int, default=300)
    parser.add_argument("--tile", type=int, default=0, help="also repeat the real vectors to this many rows")
    parser.add_argument("--random-rows", type=int, nargs="*", default=[100_000])
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--random-queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cpus, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rng = np.random.default_rng(args.seed)
    if args.kb and args.queries:
        matrix = np.vstack([read_kb_vectors(path) for path in args.kb])
        questions = embed_questions(args.queries, args.max_queries)
        names = " + ".join(path.parent.name for path in args.kb)
        table(
            f"real: {names} chunk vectors (`use`), questions of {args.queries.parent.name}", matrix, questions
        )
        if args.tile > matrix.shape[0]:
            reps = -(-args.tile // matrix.shape[0])
            tiled = np.vstack([matrix] * reps)[: args.tile]
            tiled = unit(tiled + rng.standard_normal(tiled.shape, dtype=np.float32) * 0.02)
            table(f"real, tiled with noise 0.02 to {args.tile:,} rows", tiled, questions)
    for rows in args.random_rows:
        matrix = unit(rng.standard_normal((rows, args.dim), dtype=np.float32))
        picks = rng.integers(0, rows, size=args.random_queries)
        near = unit(matrix[picks] + rng.standard_normal((len(picks), args.dim), dtype=np.float32) * 0.03)
        table("random unit vectors, queries near a corpus vector (noise 0.03/dim)", matrix, near)
        far = unit(rng.standard_normal((args.random_queries, args.dim), dtype=np.float32))
        table("random unit vectors, random queries (worst case)", matrix, far)


if __name__ == "__main__":
    main()
