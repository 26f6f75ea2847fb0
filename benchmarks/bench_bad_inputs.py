"""Bad input files: time, peak memory and message of ``veracity ingest`` on each, beside good files.

Each case of :mod:`veracity.testing.bad_inputs` is written into its own folder
with two good files and ingested by a fresh ``veracity ingest --json``
process (fake embedder). Printed per case: wall time, the process's peak
resident memory, its exit status, what the report says about the bad thing,
and whether the good files landed. ``--src DIR`` runs another source tree's
veracity (``PYTHONPATH=DIR``), under ``--timeout`` and an address-space cap of
``--memory-cap`` MB, to measure a version without these protections.

    python benchmarks/bench_bad_inputs.py                    # full sizes
    python benchmarks/bench_bad_inputs.py --scale smoke
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from synthetic_kb import made_folder

from veracity.testing.bad_inputs import CASES, GOOD_FILES, BadSizes, write_case
from veracity.text.display import printable

SCALES = {
    "full": BadSizes(
        alias_levels=9, single_line_bytes=49_000_000, docx_expanded_bytes=885_000_000, html_depth=100_000
    ),
    "smoke": BadSizes(
        alias_levels=6, single_line_bytes=5_000_000, docx_expanded_bytes=5_000_000, html_depth=2_000
    ),
}


def _limit(memory_mb: int) -> Any:
    def apply() -> None:
        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return apply


def run_case(
    root: Path, name: str, sizes: BadSizes, src: Path | None, timeout: float, memory_mb: int
) -> dict[str, Any]:
    paths, bad = write_case(root / "docs", name, sizes)
    kb = root / f"kb-{len(list(root.iterdir()))}"
    command = [sys.executable, "-m", "veracity.cli.main", "ingest", *map(str, paths), "--kb", str(kb),
               "--embedder", "fake", "--json", "--no-progress"]  # fmt: skip
    env = dict(os.environ, **({"PYTHONPATH": str(src)} if src else {}))
    out_file, err_file = root / "stdout", root / "stderr"
    start = time.perf_counter()
    with out_file.open("wb") as out, err_file.open("wb") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, preexec_fn=_limit(memory_mb))
        code, usage, timed_out = _wait(process.pid, timeout)
    seconds = time.perf_counter() - start
    texts = out_file.read_text(errors="replace"), err_file.read_text(errors="replace")
    return _describe(name, bad, *texts, code, timed_out, seconds, usage.ru_maxrss / 1024)


def _wait(pid: int, timeout: float) -> tuple[int, Any, bool]:
    """Wait for ``pid`` (killed after ``timeout``): its exit status, its own resource usage, killed or not."""
    deadline = time.monotonic() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage, False
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            _, status, usage = os.wait4(pid, 0)
            return os.waitstatus_to_exitcode(status), usage, True
        time.sleep(0.05)


def _describe(
    name: str, bad: str, out: str, err: str, code: int, timed_out: bool, seconds: float, peak: float
) -> dict[str, Any]:
    report: dict[str, Any] = {}
    try:
        report = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        report = {}
    good = sum(f"good{i}" in report.get("added", []) for i in range(GOOD_FILES))
    said = next((r["reason"] for r in report.get("rejected", []) if r["source"] == bad), None)
    said = said or next((r["reason"] for r in report.get("links_not_followed", []) if r["path"] == bad), None)
    if said is None and report.get("empty_folders"):
        said = "empty folder reported: " + ", ".join(report["empty_folders"])
    if said is None and report:
        said = "ingested" if bad.rsplit(".", 1)[0] in report.get("added", []) else "not named"
    if timed_out:
        said = "killed at the time limit"
    elif not report:
        said = (err.strip().splitlines() or ["(nothing)"])[-1][:200]
    return {"case": name, "seconds": seconds, "peak_mb": peak, "exit": code, "message": said,
            "good": good, "timed_out": timed_out}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="full")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--src", type=Path, default=None, help="source tree to run instead (PYTHONPATH)")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--memory-cap", type=int, default=4096, help="address-space cap in MB")
    parser.add_argument(
        "--workdir", type=made_folder, default=None, help="where its files go (created if missing)"
    )
    args = parser.parse_args()
    names = [n.strip() for n in args.cases.split(",") if n.strip()] or list(CASES)
    print("| case | time s | peak MB | exit | good files | what the ingest said |")
    print("|---|---|---|---|---|---|")
    for name in names:
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            row = run_case(Path(tmp), name, SCALES[args.scale], args.src, args.timeout, args.memory_cap)
        said = str(row["message"] or "").split("': ", 1)[-1]  # the file is the row's case
        message = printable(said)[:150].replace("|", "\\|")
        print(
            f"| {name} | {row['seconds']:.2f} | {row['peak_mb']:.0f} | {row['exit']} | "
            f"{row['good']}/{GOOD_FILES} | {message} |"
        )


if __name__ == "__main__":
    main()
