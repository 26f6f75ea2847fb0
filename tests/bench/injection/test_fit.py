"""The shipped detector is what the fit script makes from the tune half, and it is measured."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.bench.injection import docs_text, real_text
from veracity.bench.injection.fit import fit
from veracity.bench.shared import datasets_folder
from veracity.cli.main import main
from veracity.pipeline.injection import default_model
from veracity.pipeline.injection.signals import FEATURES


def test_refitting_on_tune_reproduces_the_shipped_model() -> None:
    shipped = default_model()
    refitted = fit(shipped.training["seed"])
    assert refitted.training == shipped.training
    assert refitted.threshold == pytest.approx(shipped.threshold, abs=1e-5)
    for name, weight in shipped.weights.items():
        assert refitted.weights[name] == pytest.approx(weight, abs=1e-5), name
    assert refitted.bias == pytest.approx(shipped.bias, abs=1e-5)


def test_bench_injection_names_its_half_and_measures_end_to_end(tmp_path) -> None:
    out = tmp_path / "injection.json"
    result = CliRunner().invoke(
        main, ["bench", "injection", "--embedder", "fake", "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "test half: templates never used to fit the detector" in result.output
    for words in ("recall", "falsely quarantined", "answers changed", "attack text in answers"):
        assert words in result.output
    assert out.is_file()
    tune = CliRunner().invoke(main, ["bench", "injection", "--split", "tune", "--detection-only"])
    assert "tune half" in tune.output and "end to end" not in tune.output


_ROOT = Path(__file__).resolve().parents[3]
_DATASETS = datasets_folder()


@pytest.mark.skipif(_DATASETS is None, reason="shared/datasets not found")
def test_the_stored_real_text_windows_match_the_current_cue_words() -> None:
    """The fit reads real-text windows from a stored file; a change to the cue words must rewrite it."""
    assert _DATASETS is not None
    stored = json.loads(real_text.WINDOWS_FILE.read_text(encoding="utf-8"))
    assert real_text.build(_DATASETS) == stored, (
        "rewrite with python -m veracity.bench.injection.real_text --datasets ../shared/datasets"
    )


def test_real_text_windows_are_names_only() -> None:
    stored = json.loads(real_text.WINDOWS_FILE.read_text(encoding="utf-8"))
    names = {name for found in stored["paragraphs"] for window in found for name in window}
    assert names and names <= set(FEATURES)
    assert stored["paragraphs_total"] >= len(stored["paragraphs"]) > 0


def test_docs_windows_are_names_only_and_name_their_sources() -> None:
    stored = json.loads(docs_text.DOCS_WINDOWS_FILE.read_text(encoding="utf-8"))
    names = {name for page in stored["pages"] for chunk in page for window in chunk for name in window}
    assert names and names <= set(FEATURES)
    assert stored["chunks_total"] >= sum(len(page) for page in stored["pages"]) > 0
    question_files = (_ROOT / docs_text.DEFAULT_SETS).glob("*.yaml")
    assert {s["name"] for s in stored["sources"]} == {p.stem for p in question_files}
    assert all(len(s["commit"]) == 40 and s["pages"] > 0 for s in stored["sources"])


_DOCS_ROOT = os.environ.get("VERACITY_DOCS_ROOT")


@pytest.mark.skipif(not _DOCS_ROOT, reason="VERACITY_DOCS_ROOT (the docs tuning sets' folders) not set")
def test_the_stored_docs_windows_match_the_current_cue_words(monkeypatch) -> None:
    """The fit reads documentation windows from a stored file; a change to the cue words must rewrite it."""
    assert _DOCS_ROOT is not None
    monkeypatch.chdir(_ROOT)
    stored = json.loads(docs_text.DOCS_WINDOWS_FILE.read_text(encoding="utf-8"))
    assert docs_text.build(Path(_DOCS_ROOT)) == stored, (
        "rewrite with python -m veracity.bench.injection.docs_text --docs-root DIR"
    )


def test_the_fit_records_how_much_documentation_it_quarantines() -> None:
    measured = default_model().training["cross_validated"]
    assert 0.0 <= measured["docs_chunks_false_quarantine"] <= 0.02  # held to the budget
    assert measured["docs_pages_false_quarantine"] >= measured["docs_chunks_false_quarantine"]
    assert default_model().training["docs_text"]["chunks"] > 4000
