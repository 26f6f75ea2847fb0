"""What parsing one file found: pages, OCR, tables, removed lines, illegal characters, time and bytes.

Every parse returns a :class:`ParseDiagnostics` with its
:class:`~veracity.parse.nodes.ParsedSource`; the ingest ledger stores it on the
file's ``parsed`` (or ``failed``) step and ``veracity status`` shows it, so
"parsed, but no text" is visible per file instead of passing as a success.
:func:`strip_illegal` removes the characters no document means (controls, the
replacement character, unassigned and private-use code points, pdfminer's
``(cid:N)`` placeholders for glyphs without a Unicode mapping) and counts them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, fields
from typing import Any

from ..text.normalize import fold_lookalikes

__all__ = ["ParseDiagnostics", "clean_extracted", "strip_illegal"]

_CID = re.compile(r"\(cid:\d+\)")
_ILLEGAL_CATEGORIES = frozenset({"Cc", "Cs", "Co", "Cn"})
_ALLOWED_CONTROLS = frozenset("\t\n\r")


def clean_extracted(text: str) -> tuple[str, int]:
    """Text a parser extracted from a layout (PDF words and cells): illegal characters removed
    (and counted, as :func:`strip_illegal`), look-alike ideographs folded (:func:`fold_lookalikes`)."""
    kept, removed = strip_illegal(text)
    return fold_lookalikes(kept), removed


def strip_illegal(text: str) -> tuple[str, int]:
    """``text`` without illegal characters, and how many were removed (a ``(cid:N)`` counts one)."""
    text, cids = _CID.subn("", text)
    kept: list[str] = []
    removed = cids
    for char in text:
        if char == "\ufffd" or (
            unicodedata.category(char) in _ILLEGAL_CATEGORIES and char not in _ALLOWED_CONTROLS
        ):
            removed += 1
        else:
            kept.append(char)
    return ("".join(kept) if removed > cids else text), removed


@dataclass(frozen=True, slots=True)
class ParseDiagnostics:
    """What parsing one file found. Page fields are ``None`` for formats without pages.

    ``pages_parsed`` counts pages that gave text (from the file or by OCR),
    ``empty_pages`` those that gave none; ``ocr_pages``, ``ocr_characters`` and
    ``ocr_confidence`` (mean over OCR'd characters, 0–1) describe OCR, done by
    ``ocr_engine``; ``pages_needing_ocr`` counts image-only pages left unread
    because no OCR engine is installed. ``tables`` is the number of tables
    read as rows, ``header_footer_lines_removed`` the running header and footer
    lines dropped, ``illegal_characters`` what :func:`strip_illegal` removed.
    """

    bytes: int = 0
    seconds: float = 0.0
    characters: int = 0
    pages_total: int | None = None
    pages_parsed: int | None = None
    empty_pages: int = 0
    ocr_pages: int = 0
    ocr_characters: int = 0
    ocr_confidence: float | None = None
    ocr_engine: str | None = None
    pages_needing_ocr: int = 0
    tables: int = 0
    header_footer_lines_removed: int = 0
    illegal_characters: int = 0
    sha256: str | None = None
    """The file's bytes' digest, for a paged source (PDF, image): its page images are rendered
    from the file only while it is still these bytes."""

    def as_dict(self) -> dict[str, Any]:
        """Plain data, as the ledger stores it (seconds rounded to microseconds)."""
        data = {item.name: getattr(self, item.name) for item in fields(self)}  # scalars: no deep copy
        data["seconds"] = round(self.seconds, 6)
        if self.ocr_confidence is not None:
            data["ocr_confidence"] = round(self.ocr_confidence, 4)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParseDiagnostics:
        """Inverse of :meth:`as_dict`; keys this version does not know are ignored."""
        known = {item.name for item in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})

    def summary(self) -> str:
        """One line for people: ``3/3 pages · 2 OCR (1,204 chars, conf 0.97) · 1 table · …``."""
        parts: list[str] = []
        if self.pages_total is not None:
            parts.append(f"{self.pages_parsed or 0}/{self.pages_total} pages")
            if self.empty_pages:
                parts.append(f"{self.empty_pages} empty")
        parts.append(f"{self.characters:,} chars")
        if self.ocr_pages:
            confidence = f", conf {self.ocr_confidence:.2f}" if self.ocr_confidence is not None else ""
            parts.append(f"OCR {self.ocr_pages} pages ({self.ocr_characters:,} chars{confidence})")
        if self.pages_needing_ocr:
            parts.append(f"{self.pages_needing_ocr} pages need OCR")
        if self.tables:
            parts.append(f"{self.tables} table{'s' if self.tables != 1 else ''}")
        if self.header_footer_lines_removed:
            parts.append(f"{self.header_footer_lines_removed} header/footer lines removed")
        if self.illegal_characters:
            parts.append(f"{self.illegal_characters} illegal chars")
        parts.append(f"{self.seconds:.2f} s")
        parts.append(f"{self.bytes:,} bytes")
        return " · ".join(parts)
