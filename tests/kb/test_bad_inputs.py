"""Each bad input is rejected or reported by name, in bounded time, and the good files still land.

Small sizes here; ``benchmarks/bench_bad_inputs.py`` runs the issue's sizes
and prints time, peak memory and message per case.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from veracity.index.embedders import make_embedder
from veracity.kb.local import open_local
from veracity.parse.limits import InputLimits
from veracity.testing.bad_inputs import CASES, GOOD_FILES, BadSizes, write_case
from veracity.text.display import printable

EXPECTED = {
    "yaml alias bomb in title": ("rejected", "anchors and aliases are not allowed"),
    "yaml alias bomb in facts": ("rejected", "anchors and aliases are not allowed"),
    "yaml alias bomb in allowed_roles": ("rejected", "anchors and aliases are not allowed"),
    "yaml alias bomb in id": ("rejected", "anchors and aliases are not allowed"),
    "single-line text file": ("rejected", "over the limit of 1,000,000 (max_text_chars)"),
    "docx zip bomb": ("rejected", "(max_unzipped_bytes)"),
    "deeply nested html": ("added", ""),
    "symlink to a file outside": ("link", "links outside the ingested folder"),
    "self-looping symlink": ("link", "symbolic link loop"),
    "empty folder": ("empty", ""),
    "names with newline, U+202E, ../..": ("added", ""),
}
LIMITS = InputLimits(max_text_chars=1_000_000, max_unzipped_bytes=20_000_000)


def test_every_case_has_an_expectation() -> None:
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_named_and_the_good_files_land(tmp_path: Path, case: str) -> None:
    paths, bad = write_case(tmp_path / "docs", case, BadSizes(single_line_bytes=2_000_000,
                                                             docx_expanded_bytes=40_000_000))  # fmt: skip
    start = time.perf_counter()
    with open_local(tmp_path / "kb", embedder=make_embedder("fake")) as kb:
        report = kb.ingest(paths, limits=LIMITS)
    assert time.perf_counter() - start < 30
    good = {f"good{i}" for i in range(GOOD_FILES)}
    assert good <= set(report.added)
    outcome, words = EXPECTED[case]
    if outcome == "rejected":
        ((source, reason),) = report.rejected
        assert source == bad and words in reason
    elif outcome == "link":
        ((link, reason),) = report.scan.links
        assert link == bad and words in reason and not report.rejected
    elif outcome == "empty":
        assert report.scan.empty == (str(paths[1]),)
    else:
        assert not report.rejected


def test_deep_html_is_read_as_flat_text_in_linear_time(tmp_path: Path) -> None:
    paths, _ = write_case(tmp_path / "docs", "deeply nested html", BadSizes(html_depth=60_000))
    start = time.perf_counter()
    with open_local(tmp_path / "kb", embedder=make_embedder("fake")) as kb:
        report = kb.ingest(paths)
        assert "deep" in report.added
        # the text under 60,000 elements is indexed: what is asked of it finds it first
        explained = kb.ask("Which text is at the bottom?", explain=True)
        assert explained.candidates and explained.candidates[0].source_id == "deep"
    assert time.perf_counter() - start < 20


def test_spoofing_names_are_printed_escaped(tmp_path: Path) -> None:
    from veracity.cli.summary import ingest_summary

    paths, _ = write_case(tmp_path / "docs", "names with newline, U+202E, ../..")
    with open_local(tmp_path / "kb", embedder=make_embedder("fake")) as kb:
        report = kb.ingest(paths)
        rows = kb.documents()
    assert {"two\nlines", "report\u202etxt", "../../etc/passwd"} <= set(report.added)  # stored as they are
    shown = [printable(row["id"]) for row in rows]
    assert "two\\nlines" in shown and "report\\u202etxt" in shown
    assert all("\n" not in line and "\u202e" not in line for line in ingest_summary(report, tmp_path))
