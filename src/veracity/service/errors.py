"""Library errors as HTTP statuses, in one place.

Routes never catch: the handlers registered by :func:`install_error_handlers`
turn each :class:`~veracity.model.errors.VeracityError` into its status (the
first matching class in :data:`STATUSES`) with ``{"error", "detail"}``; a
SQLite error the library did not wrap means the catalog cannot be read (503).
"""

from __future__ import annotations

import math
from typing import Any

import apsw
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ..model.errors import (
    AuthenticationError,
    CatalogError,
    CitationError,
    ConfigError,
    ForbiddenError,
    IdentityError,
    IndexError_,
    NotFoundError,
    RateLimitError,
    RequestTooLargeError,
    StaleWriteError,
    ValidationError,
    VeracityError,
)

__all__ = ["STATUSES", "error_body", "install_error_handlers", "status_of"]

STATUSES: tuple[tuple[type[Exception], int], ...] = (
    (AuthenticationError, 401),
    (ForbiddenError, 403),
    (IdentityError, 403),
    (NotFoundError, 404),
    (StaleWriteError, 409),
    (RequestTooLargeError, 413),
    (RateLimitError, 429),
    (ValidationError, 422),
    (ConfigError, 422),
    (CatalogError, 503),
    (IndexError_, 503),
    (CitationError, 500),
    (VeracityError, 400),
    (apsw.Error, 503),
)
"""Most specific first: the first class an error is an instance of gives its status."""


def status_of(error: Exception) -> int:
    """The HTTP status of ``error`` (500 for anything the library did not raise on purpose)."""
    return next((status for kind, status in STATUSES if isinstance(error, kind)), 500)


def error_body(error: Exception) -> dict[str, Any]:
    """``{"error": class name, "detail": message, "status": code}``."""
    detail = str(error) if not isinstance(error, apsw.Error) else f"the catalog cannot be read: {error}"
    return {"error": type(error).__name__, "detail": detail, "status": status_of(error)}


def _headers(error: Exception) -> dict[str, str]:
    if isinstance(error, AuthenticationError):
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(error, RateLimitError):
        return {"Retry-After": str(max(1, math.ceil(error.retry_after)))}
    return {}


async def _handle(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse(error_body(error), status_code=status_of(error), headers=_headers(error))


def install_error_handlers(app: FastAPI) -> None:
    """Register the mapping on ``app``."""
    app.add_exception_handler(VeracityError, _handle)
    app.add_exception_handler(apsw.Error, _handle)
