"""Many processes on one knowledge base: concurrent ingests, and asks while a writer holds the lock.

Part 1, writers: ``--writers 2,4`` ``veracity ingest`` processes start together
on overlapping folders (process i ingests folders i and i+1, so every folder
is ingested by two of them), ``--repeats`` times each on a fresh knowledge
base. Every file must land exactly once, the catalog and every index version
must agree, and no process may print a traceback.

Part 2, readers: a knowledge base of ``--ask-files`` pages; ``--asks`` asks on
the idle knowledge base, then the same asks while another process holds the
writer lock and SQLite's write lock for ``--hold`` seconds with an
uncommitted withdraw of one page. Every ask during the hold must answer from
the state before the withdraw (the withdrawn page cited when asked about,
no return-gate rejection: catalog and index read from one snapshot), and
asks after the commit must not cite it. Prints p50/p95 for both and the ratio.

    python benchmarks/bench_concurrency.py                      # 20 repeats, 30 s hold, 200 asks
    python benchmarks/bench_concurrency.py --repeats 1 --files 5 --hold 2 --asks 10 --embedder fake
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from synthetic_kb import made_folder

from veracity.index.embedders import make_embedder
from veracity.kb.local import open_local
from veracity.testing.concurrency import consistency, hold_writer_script, run_ingests, write_corpus


def writers(root: Path, counts: list[int], files: int, repeats: int) -> None:
    print("| writers | runs | every file once | catalog = index | tracebacks | exit ≠ 0 | wall p50 / max s |")
    print("|---|---|---|---|---|---|---|")
    for count in counts:
        folders = write_corpus(root / f"docs{count}", count, files)
        plan = [[folders[i], folders[(i + 1) % count]] for i in range(count)]
        once = agree = tracebacks = failed = 0
        walls: list[float] = []
        for repeat in range(repeats):
            kb = root / f"kb{count}-{repeat}"
            runs = run_ingests(kb, plan)
            state = consistency(kb)
            added = sum(int(run.stdout.split("added ")[1].split()[0]) for run in runs if run.returncode == 0)
            expected = count * files
            once += state.documents == state.sources == expected and added == expected
            agree += state.consistent and all(n == expected for _, n in state.index_documents)
            tracebacks += sum(run.traceback for run in runs)
            failed += sum(run.returncode != 0 for run in runs)
            walls.append(max(run.seconds for run in runs))
            for run in runs:
                if run.returncode or run.traceback:
                    print(f"  run {repeat}: exit {run.returncode}: {run.stderr.strip()[-400:]}")
        print(
            f"| {count} | {repeats} | {once}/{repeats} | {agree}/{repeats} | {tracebacks} | {failed} | "
            f"{statistics.median(walls):.2f} / {max(walls):.2f} |"
        )


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def readers(root: Path, files: int, asks: int, hold: float, embedder: str) -> None:
    folders = write_corpus(root / "ask-docs", 2, files)
    kb_dir = root / "ask-kb"
    with open_local(kb_dir, embedder=make_embedder(embedder)) as kb:
        kb.ingest(folders)
    page = min(3, files - 1)
    target_source = f"f1-page{page:04d}"
    about = f"What is the retention code of folder 1 page {page}?"
    questions = [f"What is the retention code of folder {i % 2} page {i % files}?" for i in range(asks)]
    questions[:: max(1, asks // 20)] = [about] * len(questions[:: max(1, asks // 20)])
    with open_local(kb_dir, create=False) as kb:
        target = kb.engine.catalog.document(target_source).document_id
        for question in questions:  # warm: model loaded, every question's caches filled, as in the held pass
            kb.ask(question)
        idle = []
        for question in questions:
            start = time.perf_counter()
            kb.ask(question)
            idle.append(time.perf_counter() - start)
        script = hold_writer_script(kb_dir, target_source, hold, embedder=embedder)
        holder = subprocess.Popen(script, stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        held_from = time.time()
        held: list[float] = []
        records: list[tuple[float, float, bool, bool]] = []  # start, end, about the page, cites it
        mixed = 0
        for question in questions:
            start, clock = time.time(), time.perf_counter()
            answer = kb.ask(question)
            held.append(time.perf_counter() - clock)
            mixed += bool(answer.trace.gate_rejections or answer.trace.gate_hidden)
            cites = target in {c.document_id for c in answer.citations}
            records.append((start, time.time(), question == about, cites))
        before_commit, committed = map(float, holder.stdout.read().split()[-2:])
        holder.wait()
        before = [r for r in records if r[1] < before_commit]
        after_commit = [r for r in records if r[0] > committed]
        missing_before = sum(about and not cites for _, _, about, cites in before)
        cited_after = sum(about and cites for _, _, about, cites in after_commit)
        later = [kb.ask(about) for _ in range(5)]
        cited_later = sum(target in {c.document_id for c in a.citations} for a in later)
    print(f"\nasks on {2 * files} pages ({embedder} embedder), {asks} asks each way")
    print("| knowledge base | asks | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    for name, values in (("idle", idle), (f"writer holds the lock ({hold:.0f} s)", held)):
        print(
            f"| {name} | {len(values)} | {statistics.median(values) * 1000:.1f} | "
            f"{_percentile(values, 0.95) * 1000:.1f} | {max(values) * 1000:.1f} |"
        )
    ratio50 = statistics.median(held) / statistics.median(idle)
    ratio95 = _percentile(held, 0.95) / _percentile(idle, 0.95)
    print(f"ratio held / idle: p50 {ratio50:.2f}, p95 {ratio95:.2f}")
    print(
        f"asks finished while the lock was held: {len(before)}/{len(held)} (commit at "
        f"+{committed - held_from:.1f} s); asks mixing states (return-gate rejections): {mixed}; "
        f"asks about the withdrawn page that did not cite it before the commit: {missing_before}; "
        f"asks begun after the commit citing it: {cited_after + cited_later} "
        f"(of {sum(r[2] for r in after_commit) + len(later)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", default="2,4", help="concurrent ingests to try (default 2,4; '' skips)")
    parser.add_argument("--files", type=int, default=150, help="files per folder (default 150)")
    parser.add_argument("--repeats", type=int, default=20, help="runs per writer count (default 20)")
    parser.add_argument("--ask-files", type=int, default=150, help="pages per folder for the asks")
    parser.add_argument("--asks", type=int, default=200, help="asks idle and under the lock (default 200)")
    parser.add_argument("--hold", type=float, default=30.0, help="seconds the writer holds (default 30)")
    parser.add_argument("--embedder", default="use", help="embedder of the asked knowledge base")
    parser.add_argument(
        "--workdir", type=made_folder, default=None, help="where its files go (created if missing)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        root = Path(tmp)
        if args.writers:
            writers(root, [int(n) for n in args.writers.split(",")], args.files, args.repeats)
        readers(root, args.ask_files, args.asks, args.hold, args.embedder)


if __name__ == "__main__":
    main()
