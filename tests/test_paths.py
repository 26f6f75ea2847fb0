"""Code and tests find the shared data beside the checkout, never at one machine's absolute path."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_source_test_or_benchmark_names_an_absolute_work_path() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("src", "tests", "benchmarks", "examples")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "test_paths.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "/work/" in line
    ]
    assert found == []
