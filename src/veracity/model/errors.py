"""The veracity exception tree.

Every error says what was wrong, with the offending value, and what to do.

    VeracityError
    ├── ValidationError          a record or input breaks a rule (names document and field)
    │   ├── EmptyContentError    content is empty or whitespace only
    │   └── VersionRangeError    a version or version range cannot be parsed or is reversed
    ├── IdentityError            missing or unknown identity (tenant, role): always denies
    ├── CatalogError             the catalog refused or could not do something
    │   ├── NotFoundError        no such document / chunk
    │   ├── StaleWriteError      compare-and-set on a catalog revision failed
    │   └── MigrationError       the database schema cannot be brought up to date
    ├── IndexError_              an index is missing, stale or built with another model
    │   └── EmbedderMismatchError dimension or model id does not match the index
    ├── CitationError            a claim's citations are missing, duplicated or unknown
    └── ConfigError              a bad option value (lists the valid choices)
"""

from __future__ import annotations

from typing import Any


class VeracityError(Exception):
    """Base class of every error veracity raises on purpose."""


class ValidationError(VeracityError, ValueError):
    """A record breaks a rule. ``document`` and ``field`` name where."""

    def __init__(self, message: str, *, document: str | None = None, field: str | None = None):
        where = ", ".join(
            part
            for part in (
                f"document {document!r}" if document else "",
                f"field {field!r}" if field else "",
            )
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.document = document
        self.field = field
        self.reason = message


class EmptyContentError(ValidationError):
    """Content is empty or only whitespace; such a document has no identity."""


class VersionRangeError(ValidationError):
    """A product version or version range is malformed or reversed."""


class IdentityError(VeracityError, PermissionError):
    """The caller's identity is missing or unknown. Veracity denies; it never searches everything."""


class CatalogError(VeracityError):
    """The catalog refused an operation or could not perform it."""


class NotFoundError(CatalogError, KeyError):
    """No document or chunk with that id."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "not found"


class StaleWriteError(CatalogError):
    """A write named a catalog revision that is no longer current; nothing was changed."""


class MigrationError(CatalogError):
    """The database schema cannot be brought to the version this code expects."""


class IndexError_(VeracityError):
    """An index is missing, stale, or was built from something other than what is asked."""


class IndexVerificationError(IndexError_):
    """An index version failed verification (``.verification`` holds every check); it was not published."""

    def __init__(self, verification: Any) -> None:
        self.verification = verification
        failures = "; ".join(verification.failures())
        super().__init__(f"index version {verification.version} failed verification: {failures}")


class EmbedderMismatchError(IndexError_, ValueError):
    """An embedder's dimension or model id does not match the vectors it is used with."""


class CitationError(VeracityError, ValueError):
    """A claim cites nothing, cites an id twice, or cites an id that is not in the evidence."""


class ConfigError(VeracityError, ValueError):
    """An option has a value outside its valid choices; the message lists them."""
