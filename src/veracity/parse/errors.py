"""Errors raised while turning source files into documents.

All of them are ``ValidationError``\\ s, so a batch loader that catches
``ValidationError`` rejects the one file and goes on with the rest.

    ValidationError                  (veracity.model.errors)
    └── IngestError                  a source file cannot be ingested (names the file)
        ├── UnsupportedFormatError   the file name's suffix is not a known format
        ├── LimitExceededError       the file is over one of the input limits (names it)
        │   └── FileTooLargeError    the file is over the size limit (checked before reading)
        ├── EncodingError            the bytes are not UTF-8 (nor clean GB18030 Chinese)
        ├── CorruptFileError         a PDF or DOCX container cannot be read
        ├── EmptySourceError         the file holds no text
        ├── NoTextError              a PDF or image gave no text, even after OCR (a failure, never skipped)
        ├── TemplateSourceError      the file is a page template (Jinja/Liquid), not a document
        └── MissingExtraError        the parser for this format needs an optional extra
"""

from __future__ import annotations

from typing import Any

from ..model.errors import ValidationError

__all__ = [
    "CorruptFileError",
    "EmptySourceError",
    "EncodingError",
    "FileTooLargeError",
    "IngestError",
    "LimitExceededError",
    "MissingExtraError",
    "NoTextError",
    "TemplateSourceError",
    "UnsupportedFormatError",
]


class IngestError(ValidationError):
    """A source file cannot be ingested. ``path`` names it; the message says what to do."""

    def __init__(self, message: str, *, path: str, field: str | None = None):
        super().__init__(message, document=path, field=field)
        self.path = path


class UnsupportedFormatError(IngestError):
    """The file's suffix is not one of the supported formats; the message lists them."""


class LimitExceededError(IngestError):
    """The file is over an input limit (:mod:`veracity.parse.limits`); the message names the limit."""

    def __init__(self, message: str, *, path: str, limit: str = "max_bytes") -> None:
        super().__init__(message, path=path)
        self.limit = limit


class FileTooLargeError(LimitExceededError):
    """The file is larger than the configured ``max_bytes``."""


class EncodingError(IngestError):
    """The bytes are neither UTF-8 nor GB18030 text that reads as Chinese."""


class CorruptFileError(IngestError):
    """A binary container (PDF, DOCX) is damaged, encrypted or otherwise unreadable."""


class EmptySourceError(IngestError):
    """The file is empty, whitespace only, or has no extractable text."""


class NoTextError(IngestError):
    """A PDF or image gave no text, even after OCR: the file is recorded as failed, never active.

    ``diagnostics`` (a :class:`~veracity.parse.diagnostics.ParseDiagnostics`)
    says what parsing found, for the ledger.
    """

    def __init__(self, message: str, *, path: str, diagnostics: Any = None) -> None:
        super().__init__(message, path=path)
        self.diagnostics = diagnostics


class TemplateSourceError(IngestError):
    """The file is a site generator's page template, not a document; ingest skips it."""


class MissingExtraError(IngestError):
    """The parser for this format is an optional extra that is not installed."""

    def __init__(self, *, path: str, fmt: str, extra: str, module: str):
        super().__init__(
            f"reading {fmt} files needs the optional package {module!r}; "
            f"install it with: pip install 'veracity[{extra}]'",
            path=path,
        )
        self.extra = extra
