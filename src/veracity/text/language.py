"""Which language a text is written in, from its letters (no model needed for zh vs en).

``zh`` when CJK ideographs make up at least a fifth of the letters (a Chinese
text with English product names stays Chinese); ``en`` when ASCII letters make
up most of the rest; ``und`` (undetermined) otherwise, e.g. for a text without
letters or in another script.
"""

from __future__ import annotations

from typing import Final

from .scripts import is_han

CJK_SHARE: Final = 0.2
"""Share of CJK ideographs among letters from which a text counts as Chinese."""


def detect_language(text: str, *, sample_chars: int = 20_000) -> str:
    """``zh``, ``en`` or ``und`` for ``text`` (its first ``sample_chars`` characters)."""
    letters = cjk = ascii_letters = 0
    for char in text[:sample_chars]:
        if not char.isalpha():
            continue
        letters += 1
        if is_han(char):
            cjk += 1
        elif char.isascii():
            ascii_letters += 1
    if not letters:
        return "und"
    if cjk / letters >= CJK_SHARE:
        return "zh"
    if ascii_letters / letters >= 0.5:
        return "en"
    return "und"
