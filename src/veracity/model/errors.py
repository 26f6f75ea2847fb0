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
    │   │   └── NewerFormatError written by a newer veracity (upgrade to open it)
    │   ├── WriterBusyError      another writer holds the knowledge base (names pid, command, since)
    │   ├── StorageError         the file system or the file refused (names the file, says what to do)
    │   │   ├── DiskFullError            no space left: nothing of the change was written
    │   │   ├── ReadOnlyStorageError     read-only file system or file
    │   │   ├── StoragePermissionError   permission denied
    │   │   └── CorruptStorageError      the file is damaged (integrity check failed, not a database)
    │   └── CatalogUnavailableError the catalog could not be read: answers are denied
    │       ├── ReplicaLagError  a read replica had not replayed the primary's writes in time
    │       └── ReplicaUnavailableError the read replica (--read-url) cannot be reached
    ├── SearchIndexError              an index is missing, stale or built with another model
    │   ├── EmbedderMismatchError dimension or model id does not match the index
    │   └── DenseUnavailableError the embedder failed: answers fall back to the lexical channel
    ├── CitationError            a claim's citations are missing, duplicated or unknown
    ├── LLMUnavailableError      the language model endpoint failed (down, timeout, rate limit,
    │                            malformed or cut-off output): the extractive answer stands
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


class NewerFormatError(MigrationError):
    """The knowledge base was written by a newer veracity (unknown migrations or format); upgrade."""


class WriterBusyError(CatalogError):
    """Another writer holds the knowledge base and the caller chose not to wait (or waited long enough).

    ``holder`` describes it (``pid N, COMMAND, since MOMENT``) when it could be read.
    """

    def __init__(self, message: str, *, holder: str | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class StorageError(CatalogError):
    """The storage under a knowledge base refused: ``path`` names the file; nothing half-written."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class DiskFullError(StorageError):
    """No space left on the device (or the database reached its size cap); the change was rolled back."""


class ReadOnlyStorageError(StorageError):
    """The file or its file system is read-only."""


class StoragePermissionError(StorageError):
    """The process may not read or write the file (permission denied)."""


class CorruptStorageError(StorageError):
    """The database file is damaged or is not a veracity database."""


class CatalogUnavailableError(CatalogError):
    """The catalog could not be read (file gone, disk error, a failing return gate); nothing is said."""


class ReplicaLagError(CatalogUnavailableError):
    """A read replica had not replayed what the primary had written when a read began, within the
    wait allowed (names both positions): the read is refused rather than served from the past."""


class ReplicaUnavailableError(CatalogUnavailableError):
    """The read replica (``--read-url``, ``VERACITY_READER_URL``) cannot be reached (names it, and the
    driver's reason): reads for callers are refused (the service answers 503; an ask is denied)
    rather than served from anywhere else."""


class SearchIndexError(VeracityError):
    """An index is missing, stale, or was built from something other than what is asked."""


class IndexVerificationError(SearchIndexError):
    """An index version failed verification (``.verification`` holds every check); it was not published."""

    def __init__(self, verification: Any) -> None:
        self.verification = verification
        failures = "; ".join(verification.failures())
        super().__init__(f"index version {verification.version} failed verification: {failures}")


class EmbedderMismatchError(SearchIndexError, ValueError):
    """An embedder's dimension or model id does not match the vectors it is used with."""


class DenseUnavailableError(SearchIndexError):
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


class LLMUnavailableError(VeracityError):
    """The language model could not be used for this answer; ``reason`` says why.

    ``reason`` is one of ``unreachable``, ``timeout``, ``rate_limited``,
    ``http_error``, ``malformed`` and ``stream_cut``. The answer step then keeps
    the extractive answer and says ``llm_unavailable``.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class ConfigError(VeracityError, ValueError):
    """An option has a value outside its valid choices; the message lists them."""
