"""The reader's training command runs end to end on a few examples and writes a reader that loads
(its card's digest checked). Needs PyTorch (``veracity[train]``); CI installs ``[test]`` only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veracity.bench.reading import train
from veracity.reader.model import load_reader

pytest.importorskip("torch", reason="training needs veracity[train] (PyTorch)")


def test_a_smoke_run_writes_a_reader_that_loads(tmp_path: Path) -> None:
    assert train.main(["--limit", "12", "--epochs", "0.1", "--out", str(tmp_path)]) == 0
    card = json.loads((tmp_path / "reader-e5-6l.json").read_text(encoding="utf-8"))
    assert card["command"].startswith("python -m veracity.bench.reading.train --limit 12")
    assert card["base"]["layers_kept"] == 6 and card["version"] == card["weights_sha256"][:12]
    reader = load_reader("reader-e5-6l", tmp_path)
    (reading,) = reader.read("How long are snapshots kept?", [("Backups", "Snapshots are kept for 30 days.")])
    assert reading.end >= reading.start >= -1
