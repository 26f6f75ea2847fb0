"""Names as they may be printed: control and bidirectional characters made visible.

A file name or id can hold a newline (a forged second line in a log or a
table), a carriage return, an escape sequence (terminal colours, cursor
moves) or a bidirectional override such as U+202E (``report\\u202eexe.md``
shows as ``reportdm.exe``). :func:`printable` writes each of them as a
``\\uXXXX`` escape (``\\n``, ``\\r``, ``\\t`` for the usual three) and leaves
every other character, CJK and right-to-left letters included, as it is.
Stored values are never changed: this is for display only.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["printable"]

_BIDI_AND_INVISIBLE: Final = (
    "\u061c\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2066\u2067\u2068\u2069\ufeff"
)
_UNSAFE: Final = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI_AND_INVISIBLE}]")
_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def printable(name: object) -> str:
    """``str(name)`` with control, bidirectional and invisible characters escaped (see the module)."""
    text = str(name)
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text
