"""Which script a character belongs to: the one place the Han, kana and Hangul ranges are written.

Every module that asks "is this Chinese?" of a character, or builds a regular expression
around Chinese text, takes its ranges from here, so the answer is the same everywhere:

- **Han** (:data:`HAN_RANGES`): CJK Unified Ideographs with Extension A and the compatibility
  ideographs (U+3400–4DBF, U+4E00–9FFF, U+F900–FAFF). The Yijing hexagram symbols between
  Extension A and the unified block (U+4DC0–4DFF) are symbols, not ideographs.
- **CJK** (:data:`CJK_RANGES`): Han plus Japanese kana (U+3040–30FF) and Hangul syllables
  (U+AC00–D7AF), for the places that only need "a script written without spaces between words".
- **Unspaced** (:data:`UNSPACED_RANGES`): every character a PDF sets without spaces around it,
  CJK punctuation and fullwidth forms included (the layout reader joins them without a space).

The ranges are regex class bodies (no brackets), to be put inside ``[...]`` with other
characters; :data:`HAN` and :data:`CJK` are the compiled one-character classes.

- **Invisible** (:data:`ZERO_WIDTH_RANGES`, :data:`BIDI_RANGES`): format characters that print
  nothing (zero-width space and joiners, word joiner, soft hyphen, byte order mark) and the
  bidirectional marks and overrides. Text pasted from a web page carries them inside words;
  :func:`drop_invisible` removes them where words are read (retrieval tokens, questions).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "BIDI_RANGES",
    "CJK",
    "CJK_RANGES",
    "HAN",
    "HANGUL_RANGES",
    "HAN_RANGES",
    "KANA_RANGES",
    "UNSPACED_RANGES",
    "ZERO_WIDTH_RANGES",
    "drop_invisible",
    "has_han",
    "is_han",
]

HAN_RANGES: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
KANA_RANGES: Final = "\u3040-\u30ff"
HANGUL_RANGES: Final = "\uac00-\ud7af"
CJK_RANGES: Final = KANA_RANGES + HAN_RANGES + HANGUL_RANGES
UNSPACED_RANGES: Final = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
"""What a PDF line sets without spaces between characters: the CJK blocks from the radicals to
the unified ideographs (kana, CJK symbols and punctuation among them), the compatibility
ideographs and the fullwidth forms."""

ZERO_WIDTH_RANGES: Final = "\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff"
BIDI_RANGES: Final = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"

HAN: Final = re.compile(f"[{HAN_RANGES}]")
CJK: Final = re.compile(f"[{CJK_RANGES}]")
_INVISIBLE: Final = re.compile(f"[{ZERO_WIDTH_RANGES}{BIDI_RANGES}]")


def drop_invisible(text: str) -> str:
    """``text`` without zero-width, soft-hyphen and bidirectional control characters."""
    return _INVISIBLE.sub("", text) if _INVISIBLE.search(text) else text


def is_han(char: str) -> bool:
    """``char`` (one character) is a Han ideograph."""
    return "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf" or "\uf900" <= char <= "\ufaff"


def has_han(text: str) -> bool:
    """``text`` holds at least one Han ideograph."""
    return HAN.search(text) is not None
