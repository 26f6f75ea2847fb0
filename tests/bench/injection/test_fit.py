"""The shipped detector is what the fit script makes from the tune half, and it is measured."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from veracity.bench.injection.fit import fit
from veracity.cli.main import main
from veracity.pipeline.injection import default_model


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
