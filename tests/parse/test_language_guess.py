"""A document's language: ``zh`` when CJK characters make up a tenth of its letters."""

from __future__ import annotations

import pytest

from veracity.parse.metadata import guess_language


@pytest.mark.parametrize(
    ("body", "language"),
    [
        ("端口默认为 4173。", "zh"),
        ("The default port is 4173.", "en"),
        ("", "en"),
        ("1234 5678 !!", "en"),  # no letters at all
        ("a" * 90 + "端" * 10, "zh"),  # exactly a tenth
        ("a" * 91 + "端" * 10, "en"),  # just under a tenth
        ("ポート " + "x" * 27, "zh"),  # kana count as CJK
        ("Ünïcödé wörds_and_digits 42 " * 3, "en"),  # underscores and digits are not letters
    ],
)
def test_language_is_guessed_from_the_share_of_cjk_letters(body: str, language: str) -> None:
    assert guess_language(body) == language
