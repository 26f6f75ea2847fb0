"""Text normalization: the normalized body and the identity form.

Normalized body: NFC, LF line ends, trailing spaces stripped per line, runs of
blank lines collapsed to one, outer whitespace stripped. Line structure is kept
because tables and code blocks live in it. The *identity* form collapses every
whitespace run to one space, so whitespace-only edits never change an identity.
"""

from __future__ import annotations

import re
import unicodedata

_TRAILING_SPACE = re.compile(r"[ \t\u3000]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{3,}")
_WHITESPACE_RUN = re.compile(r"\s+")


def normalize_body(text: str) -> str:
    """Return the normalized body: NFC, LF, no trailing spaces, single blank lines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _TRAILING_SPACE.sub("", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()


def identity_text(text: str) -> str:
    """Whitespace-collapsed form used for identities and content digests."""
    return _WHITESPACE_RUN.sub(" ", unicodedata.normalize("NFC", text)).strip()
