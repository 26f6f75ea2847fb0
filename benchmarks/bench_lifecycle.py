"""Withdraw latency of one source tree against another on the same knowledge base, in the same run.

Writes a seeded synthetic corpus (``synthetic_kb.py``), ingests it once into a SQLite knowledge
base (the fake embedder's vectors), then for each tree (this one and, with ``--src DIR``, another:
``PYTHONPATH=DIR``) withdraws the same documents one by one on its own copy of that file, in a
fresh process, through ``veracity.kb.lifecycle.change_status`` (the catalog's compare-and-set,
the index's governance snapshot in every kept version, the ledger and the manifest: what
``veracity withdraw`` does after opening the knowledge base). Prints the median and the slowest
withdraw per tree, and each figure of another tree as a ratio to this tree's.

    python benchmarks/bench_lifecycle.py --chunks 100000 --src ../before/src

Prints measured numbers only; the machine may be shared (load averages are printed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from synthetic_kb import add_tree_arguments, documents_for, run_in_tree, write_corpus

_OPEN = r"""
import json, sys, time
from pathlib import Path
from veracity.catalog.catalog import Catalog
from veracity.catalog.sqlite import SQLiteStore
from veracity.index.embedders import FakeEmbedder
from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.pipeline.engine import Engine
store = SQLiteStore(Path(sys.argv[1]))
kb = Engine(Catalog(store), FakeEmbedder(), backend=SQLiteSearchIndex(store))
"""

BUILD = _OPEN + r"""
from veracity.ingest.run import ingest_paths
report = ingest_paths(kb, [Path(sys.argv[2])], progress=None, judge=False)  # faster: no verdicts
ids = sorted(d.source_id for d in kb.catalog.documents())
print(json.dumps({"chunks": report.chunks_added, "source_ids": ids}))
"""

WITHDRAW = _OPEN + r"""
from veracity.kb.lifecycle import change_status
from veracity.model.contracts import Status
seconds = []
for source_id in sys.argv[3].split(","):
    start = time.perf_counter()
    change_status(kb, sys.argv[2], source_id, Status.WITHDRAWN)
    seconds.append(time.perf_counter() - start)
print(json.dumps(seconds))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_arguments(parser)
    parser.add_argument("--withdrawals", type=int, default=5, help="documents withdrawn per tree")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        write_corpus(work / "corpus", documents_for(args.chunks), 3, args.seed)
        built = run_in_tree(BUILD, [str(work / "kb.sqlite"), str(work / "corpus")], None)
        assert isinstance(built, dict)
        step = max(1, len(built["source_ids"]) // args.withdrawals)
        chosen = built["source_ids"][::step][: args.withdrawals]
        print(f"knowledge base: {built['chunks']} chunks, {len(built['source_ids'])} documents;"
              f" {len(chosen)} withdrawn per tree; {os.cpu_count()} cpus")
        print("| tree | median ms | slowest ms | ratio (median) |")
        print("|---|---|---|---|")
        reference = None
        trees = [("this tree", None)] + ([(args.src, args.src)] if args.src else [])
        for number, (name, pythonpath) in enumerate(trees):
            copy = work / f"copy-{number}"
            copy.mkdir()
            for path in work.glob("kb.sqlite*"):
                shutil.copy(path, copy / path.name)
            arguments = [str(copy / "kb.sqlite"), str(copy), ",".join(chosen)]
            seconds = run_in_tree(WITHDRAW, arguments, pythonpath)
            assert isinstance(seconds, list)
            median = statistics.median(seconds) * 1000
            reference = reference or median
            print(f"| {name} | {median:,.0f} | {max(seconds) * 1000:,.0f} | {median / reference:.2f} |")
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
