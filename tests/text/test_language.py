"""detect_language counts letters as ``str.isalpha`` does, whatever the script."""

from __future__ import annotations

import random

import pytest

from veracity.text.language import CJK_SHARE, _han_letters, detect_language
from veracity.text.scripts import is_han


def _by_each_character(text: str) -> str:
    """The rule of the module docstring, one character at a time."""
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return "und"
    if sum(map(is_han, letters)) / len(letters) >= CJK_SHARE:
        return "zh"
    return "en" if sum(char.isascii() for char in letters) / len(letters) >= 0.5 else "und"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("一二三四五 and ten words", "zh"),  # a fifth of the letters is enough
        ("一 and a much longer English sentence with many more words", "en"),
        ("Ⅷ ½ ² ٣ 12", "und"),  # numerals that are word characters but not letters
        ("\ufa6e\ufa6f\ufada abc", "en"),  # unassigned code points in the Han ranges are not letters
        ("한국어 문장 abc", "und"),
        ("", "und"),
    ],
)
def test_letters_are_what_isalpha_says(text: str, language: str) -> None:
    assert detect_language(text) == language == _by_each_character(text)


def test_the_same_as_reading_each_character_on_random_mixed_text() -> None:
    rng = random.Random(7)
    pool = [chr(code) for code in range(0x20, 0xFB00, 7)] + list("abcXYZ中文字ⅧⅨ½²٣ñé한\ufa6e\ufada_")
    for _ in range(2000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 80)))
        assert detect_language(text) == _by_each_character(text), text
        assert detect_language(text, sample_chars=9) == _by_each_character(text[:9]), text


def test_the_han_letter_runs_hold_every_han_letter_of_the_plane_and_nothing_else() -> None:
    plane = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    found = set("".join(_han_letters().findall(plane)))
    assert found == {char for char in plane if is_han(char) and char.isalpha()}
