"""The README's status table is generated from the committed reports, and says so when one is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from tests.benchmarks.scripts import benchmark_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "status_table.py"
REPORTS = ROOT / "benchmarks" / "reports"


def _module() -> ModuleType:
    return benchmark_script("status_table")


def _run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


def _row(table: str, start: str) -> list[str]:
    line = next(line for line in table.splitlines() if line.startswith(f"| {start}"))
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def test_the_committed_readme_matches_the_reports() -> None:
    result = _run("--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_fails_when_the_readme_table_differs(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    begin, end = text.index("<!-- status:begin -->"), text.index("<!-- status:end -->")
    assert "| what works |" in text[begin:end]
    edited = text[:begin] + text[begin:end].replace("| what works |", "| what worked |") + text[end:]
    readme = tmp_path / "README.md"
    readme.write_text(edited, encoding="utf-8")
    assert _run("--check", "--readme", readme).returncode == 1
    assert _run("--write", "--readme", readme).returncode == 0
    assert readme.read_text(encoding="utf-8") == text


def test_a_missing_report_renders_not_measured_yet(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(REPORTS, reports)
    (reports / "injection-test.json").unlink(missing_ok=True)
    (reports / "injection-unread-related.json").unlink(missing_ok=True)
    table = _run("--reports", reports).stdout
    _, measured, result, short = _row(table, "Injection defence")
    assert "injection-test.json" in measured
    assert result == "not measured yet" and short == "not measured yet"
    # a row with one of its reports missing: the others' numbers, and the missing one named
    related = _row(table, "No attack text in answers")
    assert "unread: attack text in answers not measured yet" in related[2]
    assert "not measured yet: unread: attack text in answers" in related[3]
    # with no reports at all, no row shows a number
    empty = _run("--reports", tmp_path / "none").stdout
    rows = [line for line in empty.splitlines() if line.startswith("| ") and "what works" not in line]
    assert rows and all(line.endswith("| not measured yet | not measured yet |") for line in rows)


def test_shortfall_is_computed_from_the_numbers(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    report = {"detected": 90, "attack_documents": 100, "falsely_quarantined": 1, "benign_documents": 100}
    report["end_to_end"] = {"attack_text_in_answers": 0}
    (reports / "injection-blind.json").write_text(json.dumps(report), encoding="utf-8")
    row = _row(_run("--reports", reports).stdout, "… on attack pages other people wrote")
    assert "attacks caught 90/100 = 0.900 (target ≥ 0.95)" in row[2]
    assert row[3].startswith("attacks caught 0.050 below target")
    report["detected"] = 96
    (reports / "injection-blind.json").write_text(json.dumps(report), encoding="utf-8")
    assert _row(_run("--reports", reports).stdout, "… on attack pages other people wrote")[3] == (
        "meets its targets"
    )


def test_rows_read_known_reports_and_committed_reports_stay_small() -> None:
    module = _module()
    used = {metric.report for row in module.ROWS for metric in row.metrics}
    assert used <= set(module.REPORT_FILES)
    committed = {p.name for p in REPORTS.glob("*.json")}
    assert committed <= used, f"reports no row reads: {sorted(committed - used)}"
    for name in committed:
        path = REPORTS / name
        assert path.stat().st_size < 200_000, name
        assert json.loads(path.read_text(encoding="utf-8"))["_provenance"]["command"], name


def test_import_drops_per_item_lists_and_records_the_command(tmp_path: Path) -> None:
    source = tmp_path / "raw.json"
    raw = {"detected": 1, "attack_documents": 2, "missed": [{"id": "x"}], "end_to_end": {"rows": [1]}}
    source.write_text(json.dumps(raw), encoding="utf-8")
    result = _run("--import", "injection-test.json", source, "--reports", tmp_path / "out", "--wall-s", 3)
    assert result.returncode == 0, result.stderr
    written = json.loads((tmp_path / "out" / "injection-test.json").read_text(encoding="utf-8"))
    assert "missed" not in written and written["end_to_end"] == {}
    provenance = written["_provenance"]
    assert provenance["command"].startswith("veracity bench injection --split test")
    assert provenance["wall_s"] == 3
