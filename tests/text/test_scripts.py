"""The one place the Han, kana and Hangul ranges are written (veracity.text.scripts)."""

from __future__ import annotations

import re
from pathlib import Path

from veracity.text.scripts import CJK, HAN, UNSPACED_RANGES, has_han, is_han

SRC = Path(__file__).resolve().parents[2] / "src" / "veracity"


def test_is_han_agrees_with_the_class_over_the_whole_plane() -> None:
    disagree = [hex(code) for code in range(0x10000) if is_han(chr(code)) != bool(HAN.match(chr(code)))]
    assert disagree == []


def test_the_blocks() -> None:
    assert all(is_han(char) for char in "中文繁體㐀䶵﨑")  # unified, Extension A, compatibility
    assert not any(is_han(char) for char in "䷀ぁカ한a1，。")  # a hexagram, kana, Hangul, Latin, punctuation
    assert all(CJK.match(char) for char in "中ぁカ한")
    assert not CJK.match("，")
    assert re.fullmatch(f"[{UNSPACED_RANGES}]+", "中文，。ｶ")
    assert has_han("version 2.0 版本") and not has_han("version 2.0")


def test_no_module_writes_a_han_range_of_its_own() -> None:
    """A range written twice drifts (five different Han ranges stood in the tree before)."""
    written = re.compile(r"\\u(?:4e00|3400|9fff|4dbf)|0x(?:4E00|3400|9FFF)", re.IGNORECASE)
    places = [
        f"{path.relative_to(SRC)}:{number}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "scripts.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if written.search(line)
    ]
    assert places == []
