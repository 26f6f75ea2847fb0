"""Ingest rate of one source tree against another on the same corpus, in the same run.

Writes a seeded synthetic corpus (``synthetic_kb.py``), then for each tree (this one and,
with ``--src DIR``, another: ``PYTHONPATH=DIR``) ingests it into a new lexical-only SQLite
knowledge base in a fresh process, twice: as shipped (the cue-word detector judges the
non-official chunks in the parse workers) and with nothing judged at ingest
(``ingest_paths(judge=False)``: the rate without model steps); then ingests the same folder again (every file
unchanged). Prints wall time, chunks/s, CPU of the writer and of the parse workers, and each
figure of another tree as a ratio to this tree's.

    python benchmarks/bench_ingest.py --chunks 100000 --src ../before/src [--runs 4]

With ``--runs N`` each tree runs N times per mode, which tree goes first alternating (on a
shared machine the first of two runs can differ from the second), and the medians are printed.

Prints measured numbers only; the machine may be shared (load averages are printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from synthetic_kb import add_tree_arguments, documents_for, run_in_tree, write_corpus

PROGRAM = r"""
import json, resource, sys, time
from pathlib import Path
from veracity.catalog.catalog import Catalog
from veracity.catalog.sqlite import SQLiteStore
from veracity.guard.model import named_guard
from veracity.index.sqlite.search import SQLiteSearchIndex
try:
    from veracity.ingest.run import ingest_paths
except ImportError:  # a tree from before the ingest package (--src): the function lived in kb/
    from veracity.kb.ingest import ingest_paths
from veracity.pipeline.engine import Engine
from veracity.pipeline.injection import use_guard

import inspect
folder, path, judge = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "judge"
options = {}
if "judge" in inspect.signature(ingest_paths).parameters:
    options["judge"] = judge
elif not judge:  # a tree from before ingest_paths(judge=...): a guard in use judged nothing at ingest
    use_guard(named_guard("shipped"))
store = SQLiteStore(path)
kb = Engine(Catalog(store), None, backend=SQLiteSearchIndex(store))
runs = []
for _ in range(2):  # the first ingest, then the same folder again
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, cpu = time.perf_counter(), time.process_time()
    report = ingest_paths(kb, [folder], progress=None, **options)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    runs.append({
        "wall_s": time.perf_counter() - start, "writer_cpu_s": time.process_time() - cpu,
        "workers_cpu_s": after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime,
        "chunks": report.chunks_added, "unchanged": len(report.unchanged),
        "worker_seconds": getattr(report, "worker_seconds", {}),
        "writer_seconds": report.seconds,
    })
print(json.dumps(runs))
"""


def run_tree(pythonpath: str | None, folder: Path, work: Path, judge: str) -> list[dict]:
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        return run_in_tree(PROGRAM, [str(folder), str(Path(tmp) / "kb.sqlite"), judge], pythonpath)


def writer_steps(seconds: dict[str, float]) -> str:
    """The writer's wall seconds by step; with parse workers, ``parse`` is its wait for their files
    (and their unpickling), ``write`` the index's."""
    shown = ("parse", "chunk", "catalog", "tokenize", "write", "verdicts")
    return " · ".join(f"{k} {seconds[k]:.1f} s" for k in shown if k in seconds)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_arguments(parser)
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="runs of each tree per mode, the trees' order alternating; with more than one, the "
        "medians and the median of the paired ratios are printed too",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        files = write_corpus(work / "corpus", documents_for(args.chunks), args.tenants, args.seed)
        print(f"corpus: {len(files)} Markdown files, {args.tenants} tenants; {os.cpu_count()} cpus")
        trees = [("this tree", None)] + ([(args.src, args.src)] if args.src else [])
        modes = [("as shipped: cue-word verdicts at ingest", "judge"), ("without model steps", "no-judge")]
        for label, judge in modes:
            print(f"\n{label}:")
            print(
                "| run | tree | chunks | wall s | chunks/s | ratio | writer CPU s | workers CPU s |"
                " again, unchanged: wall s |"
            )
            print("|---|---|---|---|---|---|---|---|---|")
            rates: dict[str, list[float]] = {name: [] for name, _ in trees}
            for run in range(1, max(1, args.runs) + 1):
                order = trees if run % 2 else trees[::-1]  # the tree run first alternates
                results = {
                    name: run_tree(pythonpath, work / "corpus", work, judge) for name, pythonpath in order
                }
                for name, _ in trees:
                    first, again = results[name]
                    rates[name].append(first["chunks"] / first["wall_s"])
                    ratio = rates[name][-1] / rates[trees[0][0]][-1]
                    cpu = f"{first['writer_cpu_s']:.1f} | {first['workers_cpu_s']:.1f}"
                    print(
                        f"| {run} | {name} | {first['chunks']} | {first['wall_s']:.1f} |"
                        f" {rates[name][-1]:,.0f} | {ratio:.2f} | {cpu} | {again['wall_s']:.1f} |"
                    )
                    if steps := first["worker_seconds"]:
                        shares = " · ".join(f"{k} {v:.1f} s" for k, v in steps.items())
                        print(f"|   | workers' CPU by step: {shares} |")
                        print(f"|   | writer's wall by step: {writer_steps(first['writer_seconds'])} |")
            if args.runs > 1:
                for name, _ in trees:
                    median = statistics.median(rates[name])
                    print(f"median of {args.runs} runs, {name}: {median:,.0f} chunks/s")
                for name, _ in trees[1:]:
                    paired = [r / t for r, t in zip(rates[name], rates[trees[0][0]], strict=True)]
                    print(f"median paired ratio, {name} / this tree: {statistics.median(paired):.2f}")
            print(f"load average {load()}")


if __name__ == "__main__":
    main()
