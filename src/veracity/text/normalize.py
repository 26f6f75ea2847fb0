"""Text normalization: the normalized body and the identity form.

Normalized body: NFC, LF line ends, trailing spaces stripped per line, runs of
blank lines collapsed to one, outer whitespace stripped. Line structure is kept
because tables and code blocks live in it. The *identity* form collapses every
whitespace run to one space, so whitespace-only edits never change an identity.
"""

from __future__ import annotations

import re
import unicodedata

_LOOKALIKES = re.compile("[\u2e80-\u2eff\u2f00-\u2fdf\uf900-\ufaff]")
"""CJK Radicals Supplement, Kangxi Radicals and CJK Compatibility Ideographs: PDF generators
write ideographs as these look-alikes (⽀持 for 支持), which no question typed on a keyboard holds."""
_TRAILING_SPACE = re.compile(r"[ \t\u3000]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{3,}")


def normalize_body(text: str) -> str:
    """Return the normalized body: NFC, LF, no trailing spaces, single blank lines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _TRAILING_SPACE.sub("", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()


def fold_lookalikes(text: str) -> str:
    """``text`` with radical and compatibility look-alikes of ideographs replaced by the unified
    ideographs they stand for (NFKC of those characters alone: NFKC of the whole text would also
    turn full-width punctuation such as ，and ： into ASCII)."""
    return _LOOKALIKES.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)


def identity_text(text: str) -> str:
    """Whitespace-collapsed form used for identities and content digests: every run of
    whitespace (``str.isspace``, as ``\\s`` in a pattern) becomes one space, none at the ends."""
    return " ".join(unicodedata.normalize("NFC", text).split())
