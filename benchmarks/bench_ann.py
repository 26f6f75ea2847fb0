"""Approximate dense search (faiss IVF-SQ8, filtered while searching) vs exact float and binary.

Three plans over the same unit rows, for the same queries, at eligible shares of
100 %, 50 % and 5 % (eligible rows drawn at random, seeded; the others must
never come back):

- **exact**: float ``matrix @ query`` over the eligible rows (as ``resident-exact``);
- **binary**: sign-bit Hamming top ``32 × k`` of the eligible rows, rescored with
  the float rows (as ``resident-binary``);
- **ann**: :func:`veracity.index.ann.ann_search` with a bitmap of the eligible
  keys, ``nprobe`` doubled while too few come back, ``oversample × k``
  candidates rescored with the float rows (as ``resident-ann``).

Recall@10 is against the exact float top 10 of the eligible rows. Latency is
one query at a time, p50/p95 in ms; the ann time includes its rescoring, and
the bitmap (built once per eligible set, as the index caches it) is timed apart.

Inputs:

1. **synthetic** (``--rows``, default 100,000 × 512): a seeded Gaussian mixture,
   ``rows / 200`` unit cluster centres with Zipf-like weights, each row its
   centre plus Gaussian noise of norm ~1 (so within-cluster cosines ~0.5), then
   normalized; queries are fresh draws from the same mixture (not corpus rows).
   Rows are generated and indexed in batches; RSS is the process peak
   (``resource.getrusage``).
2. **real** (``--kb`` + ``--queries``, as ``bench_quantized.py``): the `use` chunk
   vectors of a knowledge base and real questions; ``--tile`` repeats them
   with small seeded noise to a larger size (says so).

    python benchmarks/bench_ann.py --rows 100000
    python benchmarks/bench_ann.py --rows 1000000 --queries 200

The machine may be shared: absolute times are noisy; compare plans within a run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from veracity.index.ann import (
    ANN_OVERSAMPLE,
    DEFAULT_NPROBE,
    AnnIndex,
    ann_search,
    build_ann,
    default_nlist,
    faiss_module,
    selection_bitmap,
)
from veracity.index.quantized import DEFAULT_OVERSAMPLE, QuantizedRows, hamming_candidates, quantize

K = 10
SUBTOPIC = 1.0  # norm of a centre's offset from its topic, before normalizing
NOISE = 1.5  # norm of a row's offset from its centre, before normalizing
SHARES = (1.0, 0.5, 0.05)
FULL_SCAN_SHARE = 0.2  # as veracity.index.sqlite.search


def rss_mb() -> float:
    """Peak resident set size of this process so far, in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 1e6


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _centres(rows: int, dim: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two-level centres (topics with sub-topics) and Zipf-like weights."""
    count = max(64, rows // 200)
    topics = unit(rng.standard_normal((max(8, count // 20), dim), dtype=np.float32))
    parents = rng.integers(0, topics.shape[0], size=count)
    centres = unit(
        topics[parents]
        + rng.standard_normal((count, dim), dtype=np.float32) * np.float32(SUBTOPIC / np.sqrt(dim))
    )
    weights = 1.0 / np.arange(1, count + 1) ** 0.5
    return centres, weights / weights.sum()


def _draw(centres: np.ndarray, weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    dim = centres.shape[1]
    picks = rng.choice(centres.shape[0], size=n, p=weights)
    return unit(
        centres[picks] + rng.standard_normal((n, dim), dtype=np.float32) * np.float32(NOISE / np.sqrt(dim))
    )


def mixture(
    rows: int, dim: int, queries: int, seed: int, batch: int = 100_000
) -> tuple[np.ndarray, np.ndarray, int]:
    """``rows`` unit vectors from a seeded Gaussian mixture, ``queries`` fresh draws, the centre count."""
    rng = np.random.default_rng(seed)
    centres, weights = _centres(rows, dim, rng)
    matrix = np.empty((rows, dim), dtype=np.float32)
    for first in range(0, rows, batch):
        matrix[first : first + batch] = _draw(centres, weights, min(batch, rows - first), rng)
    return matrix, _draw(centres, weights, queries, rng), centres.shape[0]


def top(positions: np.ndarray, scores: np.ndarray, k: int = K) -> list[int]:
    if positions.size > k:
        keep = np.argpartition(-scores, k)[:k]
        positions, scores = positions[keep], scores[keep]
    return positions[np.lexsort((positions, -scores))][:k].tolist()


def exact(matrix: np.ndarray, query: np.ndarray, positions: np.ndarray) -> list[int]:
    """The exact top ``K`` of ``positions``, as ``resident-exact`` scans them."""
    if positions.size > matrix.shape[0] * FULL_SCAN_SHARE:
        return top(positions, (matrix @ query)[positions])
    return top(positions, matrix[positions] @ query)


def timed(
    search: Callable[[np.ndarray], list[int]], queries: np.ndarray
) -> tuple[list[list[int]], float, float]:
    """Each query's result, and the p50 and p95 of the wall time per query in ms."""
    results, walls = [], []
    for query in queries:
        begin = time.perf_counter()
        results.append(search(query))
        walls.append((time.perf_counter() - begin) * 1000)
    walls.sort()
    return results, statistics.median(walls), walls[int(0.95 * (len(walls) - 1))]


def recall(found: list[list[int]], truth: list[list[int]]) -> float:
    return statistics.mean(
        len(set(f) & set(t)) / max(1, min(K, len(t))) for f, t in zip(found, truth, strict=True)
    )


def binary(
    matrix: np.ndarray, quantized: QuantizedRows, positions: np.ndarray, query: np.ndarray
) -> list[int]:
    full = positions.size > matrix.shape[0] * FULL_SCAN_SHARE
    found = hamming_candidates(quantized, query, positions, DEFAULT_OVERSAMPLE * K, full_scan=full)
    return top(found, np.einsum("ij,j->i", matrix[found], query))


def approximate(
    matrix: np.ndarray, ann: AnnIndex, bitmap: np.ndarray | None, eligible: int,
    setting: tuple[int, int, bool], widened: list[int], query: np.ndarray,
) -> list[int]:  # fmt: skip
    nprobe, oversample, scale = setting
    result = ann_search(
        ann, query, oversample * K, selected=bitmap, eligible=eligible, nprobe=nprobe, scale=scale
    )
    widened.append(result.widened)
    found = result.keys  # keys are row positions in this benchmark
    return top(found, np.einsum("ij,j->i", matrix[found], query))


def table(label: str, matrix: np.ndarray, queries: np.ndarray, args: argparse.Namespace) -> None:
    rows = matrix.shape[0]
    keys = np.arange(rows, dtype=np.int64)  # chunk keys: positions here
    before = rss_mb()
    begin = time.perf_counter()
    ann = build_ann(keys, matrix, nlist=args.nlist or None, seed=args.seed)
    build = time.perf_counter() - begin
    after_build = rss_mb()
    begin = time.perf_counter()
    quantized = quantize(matrix)
    quantize_s = time.perf_counter() - begin
    codes_mb = ann.index.invlists.compute_ntotal() * (ann.index.code_size + 8) / 1e6
    print(
        f"\n{label}: {rows:,} × {matrix.shape[1]}, {len(queries)} queries; ann build {build:.1f} s "
        f"(nlist {ann.params.nlist}, trained on {ann.params.train_rows:,} rows; peak RSS {before:,.0f} → "
        f"{after_build:,.0f} MB), ~{codes_mb:,.0f} MB codes+ids; quantize {quantize_s:.1f} s "
        f"({quantized.nbytes / 1e6:,.0f} MB); float {matrix.nbytes / 1e6:,.0f} MB"
    )
    print("| eligible | plan | setting | recall@10 | p50 ms | p95 ms | widened |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(args.seed + 2)
    for share in SHARES:
        if share >= 1:
            positions = np.arange(rows)
        else:
            positions = np.sort(rng.choice(rows, int(rows * share), replace=False))
        truth, p50, p95 = timed(partial(exact, matrix, positions=positions), queries)
        print(f"| {share:.0%} | exact | | 1.000 | {p50:.2f} | {p95:.2f} | |")
        found, p50, p95 = timed(partial(binary, matrix, quantized, positions), queries)
        print(
            f"| {share:.0%} | binary | oversample {DEFAULT_OVERSAMPLE} | {recall(found, truth):.3f}"
            f" | {p50:.2f} | {p95:.2f} | |"
        )
        begin = time.perf_counter()
        bitmap = None if share >= 1 else selection_bitmap(keys[positions])
        bitmap_ms = (time.perf_counter() - begin) * 1000
        for nprobe in args.nprobe:
            for oversample in args.oversample:
                widened: list[int] = []
                search = partial(
                    approximate,
                    matrix,
                    ann,
                    bitmap,
                    positions.size,
                    (nprobe, oversample, args.scale),
                    widened,
                )
                found, p50, p95 = timed(search, queries)
                assert all(len(f) == min(K, positions.size) for f in found)
                setting = f"nprobe {nprobe}, oversample {oversample}"
                print(
                    f"| {share:.0%} | ann | {setting} | {recall(found, truth):.3f}"
                    f" | {p50:.2f} | {p95:.2f} | {sum(w > 0 for w in widened)}/{len(widened)} |"
                )
        if bitmap is not None:
            print(f"| {share:.0%} | (bitmap of {positions.size:,} keys) | | | {bitmap_ms:.2f} | | |")
    print(f"peak RSS {rss_mb():,.0f} MB")


def tiled(matrix: np.ndarray, rows: int, seed: int, batch: int = 100_000) -> np.ndarray:
    """``matrix`` repeated to ``rows`` rows with seeded noise 0.02 per component, built in batches."""
    rng = np.random.default_rng(seed)
    out = np.empty((rows, matrix.shape[1]), dtype=np.float32)
    for first in range(0, rows, batch):
        picks = np.arange(first, min(rows, first + batch)) % matrix.shape[0]
        noise = rng.standard_normal((picks.size, matrix.shape[1]), dtype=np.float32) * np.float32(0.02)
        out[first : first + picks.size] = unit(matrix[picks] + noise)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000, help="synthetic rows (0: none)")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--nlist",
        type=int,
        default=0,
        help=f"cells (default ~4·sqrt(rows): {default_nlist(100_000)} at 100k)",
    )
    parser.add_argument(
        "--nprobe", type=int, nargs="*", default=[DEFAULT_NPROBE // 2, DEFAULT_NPROBE, DEFAULT_NPROBE * 2]
    )
    parser.add_argument("--oversample", type=int, nargs="*", default=[ANN_OVERSAMPLE])
    parser.add_argument("--kb", type=Path, nargs="*", default=[], help="knowledge bases with `use` vectors")
    parser.add_argument("--questions", type=Path, help="BEIR queries.jsonl to embed with `use` (with --kb)")
    parser.add_argument("--tile", type=int, default=0, help="repeat the real vectors to this many rows")
    parser.add_argument(
        "--no-scale", dest="scale", action="store_false", help="start at nprobe whatever the eligible share"
    )
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    faiss = faiss_module()
    if faiss is None:
        raise SystemExit("faiss is not installed: pip install 'veracity[ann]'")
    print(
        f"machine: {os.cpu_count()} cpus, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads"
    )
    if args.kb and args.questions:
        from bench_quantized import embed_questions, read_kb_vectors

        matrix = np.vstack([read_kb_vectors(path) for path in args.kb])
        questions = embed_questions(args.questions, args.queries)
        names = " + ".join(path.parent.name for path in args.kb)
        table(
            f"real: {names} chunk vectors (`use`), questions of {args.questions.parent.name}",
            matrix,
            questions,
            args,
        )
        if args.tile > matrix.shape[0]:
            bigger = tiled(matrix, args.tile, args.seed)
            table(f"real, tiled with noise 0.02 to {args.tile:,} rows", bigger, questions, args)
            del bigger
        del matrix
    if args.rows:
        begin = time.perf_counter()
        matrix, queries, centres = mixture(args.rows, args.dim, args.queries, args.seed)
        label = (
            f"synthetic two-level Gaussian mixture ({centres:,} centres, offsets {SUBTOPIC}/{NOISE}), "
            f"generated in {time.perf_counter() - begin:.1f} s"
        )
        table(label, matrix, queries, args)


if __name__ == "__main__":
    main()
