"""Cold start of ``veracity`` commands: wall time of a fresh process, median of ``--runs``.

Commands: ``--version``, ``--help``, ``status --kb``, ``docs list --kb``,
``ask QUESTION --kb`` and ``search QUERY --kb`` on the demo knowledge base (built once with
``veracity init-demo`` and ``--embedder``), or with ``--docs N`` on N seeded
synthetic documents (``synthetic_kb.py``, one tenant) ingested with
``veracity ingest``. ``--src DIR`` runs another source tree
(``PYTHONPATH=DIR``, with a knowledge base it built itself), to compare a
version before a change, the two trees' runs alternating, with the ratio of
their medians; the file cache is warm in both cases (the second of two runs is
what a user meets), and so is veracity's model cache (``$VERACITY_CACHE``,
written by the first run).

    python benchmarks/bench_cold_start.py                  # default embedder (use), 5 runs
    python benchmarks/bench_cold_start.py --docs 100 --src ../old/src   # and another tree, alternating
    python benchmarks/bench_cold_start.py --runs 1 --embedder fake
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic_kb import made_folder

COMMANDS = (
    ("--version", ["--version"]),
    ("--help", ["--help"]),
    ("status", ["status", "--kb", "{kb}"]),
    ("docs list", ["docs", "list", "--kb", "{kb}"]),
    ("ask", ["ask", "3.2 的 Team 能用 SAML 吗", "--kb", "{kb}"]),
    ("search", ["search", "3.2 的 Team 能用 SAML 吗", "--kb", "{kb}"]),
)


def _run(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    command = [sys.executable, "-m", "veracity.cli.main", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"veracity {' '.join(args)} failed: {result.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--embedder", default="use", help="embedder of the demo knowledge base")
    parser.add_argument("--src", type=Path, default=None, help="source tree to run instead (PYTHONPATH)")
    parser.add_argument("--commands", default="", help="comma-separated names (default: all)")
    parser.add_argument(
        "--workdir", type=made_folder, default=None, help="where its files go (created if missing)"
    )
    parser.add_argument("--docs", type=int, default=0, help="synthetic documents instead of the demo")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.commands.split(",") if name.strip()] or [n for n, _ in COMMANDS]
    trees = [("this tree", {})] + ([(str(args.src), {"PYTHONPATH": str(args.src)})] if args.src else [])
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        env = dict(os.environ)
        if args.docs:
            from synthetic_kb import write_corpus

            write_corpus(Path(tmp) / "docs", args.docs, tenants=1, seed=7)
            what = f"{args.docs} synthetic documents"
        else:
            what = "the demo"
        kbs = []
        for number, (_, extra) in enumerate(trees):  # each tree builds its own (formats may differ)
            kb = Path(tmp) / f"kb{number}"
            tree_env = dict(env, **extra)
            if args.docs:
                docs = str(Path(tmp) / "docs")
                _run(["ingest", docs, "--kb", str(kb), "--embedder", args.embedder], tree_env)
            else:
                _run(["init-demo", "--kb", str(kb), "--embedder", args.embedder], tree_env)
            kbs.append(kb)
        order = "the trees alternating run by run; " if len(trees) > 1 else ""
        print(f"cold start, {args.runs} runs each, {order}median (min) s; {what} on {args.embedder}")
        ratio = ["this ÷ other (medians)"] if len(trees) > 1 else []
        print("| command | " + " | ".join([*(name for name, _ in trees), *ratio]) + " |")
        print("|---|" + "---|" * (len(trees) + len(ratio)))
        for name, template in COMMANDS:
            if name not in chosen:
                continue
            runs = [
                ([part.format(kb=kb) for part in template], dict(env, **extra))
                for (_, extra), kb in zip(trees, kbs, strict=True)
            ]
            for command, tree_env in runs:
                _run(command, tree_env)  # file cache (and model cache) warm
            times: list[list[float]] = [[] for _ in runs]
            for _ in range(args.runs):  # alternating, so a busy spell falls on both trees
                for spent, (command, tree_env) in zip(times, runs, strict=True):
                    spent.append(_run(command, tree_env))
            medians = [statistics.median(spent) for spent in times]
            cells = [f"{median:.2f} ({min(spent):.2f})" for median, spent in zip(medians, times, strict=True)]
            cells += [f"{medians[0] / medians[1]:.2f}"] if ratio else []
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
