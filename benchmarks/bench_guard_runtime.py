"""What judging chunks with the trained guard costs in each runtime, against embedding the same chunks.

Writes the seeded synthetic corpus of ``synthetic_kb.py`` (``--docs`` documents), ingests it
lexical-only, and takes its chunks' index texts (what ``bench_hybrid_100k.py`` embeds and what the
guard judges at ingest); ``--folder DIR`` takes a documentation folder's chunks instead. Then, in
one process, ``--rounds`` times with the order rotating each round, it times over the same texts:

- the ``use`` embedder (the default embedding step; batches of 64),
- the shipped guard's scoring in each runtime it can run here: ``numpy`` (what the guard ran before
  onnxruntime), ``onnx-fp32`` (the same scores) and ``onnx-int8`` (its own calibrated threshold),
  batches of 64 texts.

Warm: each model is loaded and run once before the timings. Prints texts/s per round and the median,
each guard runtime's median ratio to the embedder's rate in the same rounds (≥ 1: judging costs no
more than embedding), and how far the int8 scores are from numpy's (mean and largest difference, and
how many verdicts differ at their thresholds). Machine load is printed: the machine may be shared.

    python benchmarks/bench_guard_runtime.py [--docs 200] [--texts 500] [--rounds 3]
    python benchmarks/bench_guard_runtime.py --folder path/to/docs
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from synthetic_kb import write_corpus

from veracity.catalog.catalog import Catalog
from veracity.catalog.sqlite import SQLiteStore
from veracity.guard.model import load_guard
from veracity.index.snapshot import index_text
from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.ingest.run import ingest_paths
from veracity.pipeline.engine import Engine
from veracity.reader.ort_head import onnxruntime_available
from veracity.reader.runtimes import RUNTIMES

BATCH = 64


def chunk_texts(folder: Path, work: Path, limit: int) -> list[str]:
    """The index texts of the first ``limit`` chunks of ``folder`` ingested lexical-only."""
    store = SQLiteStore(work / "kb.sqlite")
    kb = Engine(Catalog(store), None, backend=SQLiteSearchIndex(store))
    ingest_paths(kb, [folder], progress=None, judge=False, jobs=1)
    index = kb.snapshot
    texts = [index_text(index.chunks[c]) for ids in index.chunks_by_document.values() for c in ids]
    return texts[:limit]


def rate(read: Callable[[Sequence[str]], Any], texts: list[str]) -> float:
    """Texts per second ``read`` takes over ``texts`` in batches of :data:`BATCH`."""
    start = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        read(texts[i : i + BATCH])
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=200, help="synthetic documents to cut texts from")
    parser.add_argument("--folder", type=Path, default=None, help="a documentation folder instead")
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = args.folder
        if folder is None:
            folder = work / "corpus"
            write_corpus(folder, args.docs, 3, 0)
        texts = chunk_texts(folder, work, args.texts)
    from veracity.index.embedders import make_embedder

    embedder = make_embedder("use")
    runtimes = [r for r in RUNTIMES if r == "numpy" or onnxruntime_available()]
    guards = {runtime: load_guard(runtime=runtime) for runtime in runtimes}
    readers: dict[str, Callable[[Sequence[str]], Any]] = {"use embedder": embedder.embed_batch}
    readers.update({f"guard {runtime}": guard.scores for runtime, guard in guards.items()})
    for read in readers.values():
        read(texts[:8])  # warm: loaded, sessions built, caches touched
    characters = sum(len(t) for t in texts) / max(1, len(texts))
    print(f"{len(texts)} chunk texts ({characters:.0f} characters on average); {os.cpu_count()} cpus")
    print(f"embedder {embedder.model_id}; guard {guards['numpy'].version}, thresholds "
          + ", ".join(f"{r} {g.threshold:g}" for r, g in guards.items()))  # fmt: skip
    names = list(readers)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(args.rounds):
        order = names[round_number % len(names) :] + names[: round_number % len(names)]
        for name in order:
            rates[name].append(rate(readers[name], texts))
        print(f"round {round_number + 1}: " + " | ".join(f"{n} {rates[n][-1]:,.0f} texts/s" for n in names))
    embedding = rates["use embedder"]
    print("| what | texts/s, median | ÷ the embedder's rate, median of the rounds |")
    print("|---|---|---|")
    for name in names:
        ratio = statistics.median(r / e for r, e in zip(rates[name], embedding, strict=True))
        print(f"| {name} | {statistics.median(rates[name]):,.0f} | {ratio:.2f} |")
    if "onnx-int8" in guards:
        exact, quick = guards["numpy"], guards["onnx-int8"]
        base, fast = exact.scores(texts), quick.scores(texts)
        gaps = [abs(a - b) for a, b in zip(base, fast, strict=True)]
        differ = sum(
            (a >= exact.threshold) != (b >= quick.threshold) for a, b in zip(base, fast, strict=True)
        )
        mean, largest = statistics.mean(gaps), max(gaps)
        print(f"int8 against numpy: score difference mean {mean:.4f}, largest {largest:.4f};")
        print(f"verdicts that differ at their thresholds: {differ} of {len(texts)}")
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
