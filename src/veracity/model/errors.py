"""The veracity exception tree.

Every error says what was wrong, with the offending value, and what to do.

    VeracityError
    ├── ValidationError          a record or input breaks a rule (names document and field)
    │   ├── EmptyContentError    content is empty or whitespace only
    │   └── VersionRangeError    a version or version range cannot be parsed or is reversed
    ├── IdentityError            missing or unknown identity (tenant, role): always denies
    │   ├── AuthenticationError  no API key, or an unknown or revoked one (HTTP 401)
    │   └── ForbiddenError       the key may not do this: operator-only actions (HTTP 403)
    ├── LimitError               a per-key service limit was reached
    │   ├── RateLimitError       too many requests for one key (HTTP 429; ``retry_after`` seconds)
    │   └── RequestTooLargeError a request body over the size limit (HTTP 413)
    ├── CatalogError             the catalog refused or could not do something
    │   ├── NotFoundError        no such document / chunk
    │   ├── StaleWriteError      compare-and-set on a catalog revision failed
    │   ├── MigrationError       the database schema cannot be brought up to date
    │   └── CatalogUnavailableError the catalog could not be read: answers are denied
    ├── IndexError_              an index is missing, stale or built with another model
    │   ├── EmbedderMismatchError dimension or model id does not match the index
    │   └── DenseUnavailableError the embedder failed: answers fall back to the lexical channel
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


class CatalogUnavailableError(CatalogError):
    """The catalog could not be read (file gone, disk error, a failing return gate); nothing is said."""


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


class DenseUnavailableError(IndexError_):
    """The embedder failed or is switched off; a service answers from the lexical channel alone."""


class AuthenticationError(IdentityError):
    """No API key, or a key that is unknown or revoked. Nothing else is said about it."""


class ForbiddenError(IdentityError):
    """The caller's key may not do this (operator-only actions need an operator key)."""


class LimitError(VeracityError):
    """A per-key service limit was reached; nothing was done."""


class RateLimitError(LimitError):
    """Too many requests for one key; ``retry_after`` says how many seconds until the next is allowed."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RequestTooLargeError(LimitError):
    """A request body is larger than the limit; ``limit`` is that limit in bytes."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class CitationError(VeracityError, ValueError):
    """A claim cites nothing, cites an id twice, or cites an id that is not in the evidence."""


class ConfigError(VeracityError, ValueError):
    """An option has a value outside its valid choices; the message lists them."""
