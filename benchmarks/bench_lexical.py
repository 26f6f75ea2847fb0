"""Throughput of veracity's BM25Index against rank_bm25 and bm25s on a synthetic corpus.

Corpus: ``--docs`` short documents (~30 tokens each) drawn from a Zipfian
vocabulary, seeded. Queries: 2-5 tokens taken from a random document, so every
query matches something. Prints measured numbers only.

    python benchmarks/bench_lexical.py --docs 100000 --queries 1000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from veracity.index.lexical import ALL, BM25Index


def make_corpus(n_docs: int, vocab_size: int, seed: int) -> list[list[str]]:
    """Documents of ~30 tokens each whose terms follow a Zipf(1.1) law over the vocabulary."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab_size + 1) ** 1.1
    lengths = rng.integers(20, 41, size=n_docs)
    term_ids = rng.choice(vocab_size, size=int(lengths.sum()), p=weights / weights.sum())
    words = np.array([f"t{i}" for i in range(vocab_size)], dtype=object)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    flat = words[term_ids].tolist()
    return [flat[bounds[i] : bounds[i + 1]] for i in range(n_docs)]


def make_queries(corpus: Sequence[Sequence[str]], n: int, seed: int) -> list[list[str]]:
    """2-5 distinct tokens sampled from random documents."""
    rng = np.random.default_rng(seed + 1)
    queries = []
    for doc in rng.choice(len(corpus), size=n):
        terms = sorted(set(corpus[doc]))
        size = min(len(terms), int(rng.integers(2, 6)))
        queries.append([terms[i] for i in rng.choice(len(terms), size=size, replace=False)])
    return queries


class Row(NamedTuple):
    """One engine's measurements."""

    name: str
    build_s: float | None
    qps: float | None
    filtered_qps: float
    queries: int


def rate(run: Callable[[list[str]], object], queries: list[list[str]]) -> float:
    """Queries per second of ``run`` over ``queries`` (one warm-up call first)."""
    run(queries[0])
    start = time.perf_counter()
    for query in queries:
        run(query)
    return len(queries) / (time.perf_counter() - start)


def timed(build: Callable[[], object]) -> tuple[object, float]:
    """The built object and the seconds it took."""
    start = time.perf_counter()
    built = build()
    return built, time.perf_counter() - start


def main() -> None:
    """Parse flags, run every engine that is importable, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--rank-bm25-queries", type=int, default=30)
    parser.add_argument("--vocab", type=int, default=50_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    corpus = make_corpus(args.docs, args.vocab, args.seed)
    queries = make_queries(corpus, args.queries, args.seed)
    ids = [f"doc-{i:07d}" for i in range(args.docs)]
    rng = np.random.default_rng(args.seed + 2)
    subset = np.sort(rng.choice(args.docs, size=max(1, args.docs // 10), replace=False))
    subset_ids = {ids[i] for i in subset}
    few = queries[: args.rank_bm25_queries]
    k = args.k
    print(
        f"corpus: {args.docs} docs, {sum(map(len, corpus))} tokens, vocab {args.vocab}; "
        f"{len(queries)} queries, k={k}; filtered = random 10% subset"
    )

    rows: list[Row] = []

    ours, build_s = timed(lambda: BM25Index.build(zip(ids, corpus, strict=True), k1=1.5))
    assert isinstance(ours, BM25Index)
    mask = ours.mask(subset_ids)

    def ours_all(q: list[str]) -> object:
        return ours.search(q, k=k, allowed=ALL)

    def ours_mask(q: list[str]) -> object:
        return ours.search(q, k=k, allowed=mask)

    def ours_ids(q: list[str]) -> object:
        return ours.search(q, k=k, allowed=subset_ids)

    rows.append(
        Row(
            "veracity (allowed=mask)",
            build_s,
            rate(ours_all, queries),
            rate(ours_mask, queries),
            len(queries),
        )
    )
    rows.append(Row("veracity (allowed=id set)", None, None, rate(ours_ids, queries), len(queries)))

    try:
        import rank_bm25
    except ImportError:
        print("rank_bm25 not installed: pip install rank-bm25")
    else:
        ref, ref_build = timed(lambda: rank_bm25.BM25Okapi(corpus, k1=1.5))
        assert isinstance(ref, rank_bm25.BM25Okapi)
        sub = subset.tolist()

        def ref_all(q: list[str]) -> object:
            return np.argpartition(-ref.get_scores(q), k)[:k]

        def ref_subset(q: list[str]) -> object:
            return np.argpartition(-np.asarray(ref.get_batch_scores(q, sub)), k)[:k]

        rows.append(
            Row(
                "rank_bm25 BM25Okapi",
                ref_build,
                rate(ref_all, few),
                rate(ref_subset, few),
                len(few),
            )
        )

    try:
        import bm25s
    except ImportError:
        print("bm25s not installed: pip install bm25s")
    else:
        weight = np.zeros(args.docs, dtype=np.float32)
        weight[subset] = 1.0
        for backend in ("numpy", "numba"):
            engine = bm25s.BM25(method="lucene", k1=1.5, backend=backend)
            start = time.perf_counter()
            engine.index(corpus, show_progress=False)
            engine_build = time.perf_counter() - start

            def fast(q: list[str], mask: np.ndarray | None = None, e: bm25s.BM25 = engine) -> object:
                return e.retrieve([q], k=k, show_progress=False, n_threads=1, weight_mask=mask)

            def fast_filtered(q: list[str], f: Callable[..., object] = fast) -> object:
                return f(q, weight)

            rows.append(
                Row(
                    f"bm25s {bm25s.__version__} ({backend})",
                    engine_build,
                    rate(fast, queries),
                    rate(fast_filtered, queries),
                    len(queries),
                )
            )

    def show(value: float | None, width: int, places: int) -> str:
        return f"{'-':>{width}}" if value is None else f"{value:{width}.{places}f}"

    print(f"\n{'engine':28} {'build s':>8} {'q/s':>9} {'filtered q/s':>13} {'queries':>8}")
    for row in rows:
        print(
            f"{row.name:28} {show(row.build_s, 8, 2)} {show(row.qps, 9, 1)} "
            f"{show(row.filtered_qps, 13, 1)} {row.queries:8d}"
        )
    print()
    ours_qps, ours_filtered = rows[0].qps or 0.0, rows[0].filtered_qps
    for row in rows[2:]:
        print(
            f"ours / {row.name}: {ours_qps / (row.qps or 1.0):6.1f}x unfiltered, "
            f"{ours_filtered / row.filtered_qps:6.1f}x filtered"
        )


if __name__ == "__main__":
    main()
