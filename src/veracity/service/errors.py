"""Library errors as HTTP statuses, in one place.

Routes never catch: the handlers registered by :func:`install_error_handlers`
turn each :class:`~veracity.model.errors.VeracityError` into its status (the
first matching class in :data:`STATUSES`) with ``{"error", "detail", "status"}``;
a SQLite error the library did not wrap means the catalog cannot be read (503).
The framework's own errors get the same envelope, so a client reads one shape:
a request that fails validation is 422 with ``detail`` in words and the
field-level list in ``errors``; an unknown route, a wrong method or a body not
sent as JSON (415) carries its status's name as ``error`` (``NotFoundError``).
"""

from __future__ import annotations

import math
from http import HTTPStatus
from typing import Any

import apsw
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from ..model.errors import (
    AuthenticationError,
    CatalogError,
    CitationError,
    ConfigError,
    ForbiddenError,
    IdentityError,
    NotFoundError,
    RateLimitError,
    RequestTooLargeError,
    SearchIndexError,
    StaleWriteError,
    ValidationError,
    VeracityError,
)

__all__ = [
    "STATUSES",
    "error_body",
    "http_error_body",
    "install_error_handlers",
    "status_of",
    "validation_body",
]

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
    (SearchIndexError, 503),
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


def _where(location: Any) -> str:
    return ".".join(str(part) for part in location) if isinstance(location, list | tuple) else str(location)


def _encodable(value: Any) -> Any:
    """``value`` with every text made encodable: a lone surrogate is written as its escape (``\\ud800``)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    if isinstance(value, dict):
        return {_encodable(key): _encodable(item) for key, item in value.items()}
    return value


def validation_body(error: RequestValidationError) -> dict[str, Any]:
    """The envelope of a request that failed validation: the problems in words in ``detail``,
    the field-level list in ``errors``."""
    # each error echoes its input, which may be the very text refused for not being Unicode
    errors = _encodable(jsonable_encoder(error.errors()))
    problems = "; ".join(f"{_where(e.get('loc', ()))}: {e.get('msg', '')}" for e in errors)
    detail = f"the request is not valid: {problems}" if problems else "the request is not valid"
    return {"error": "RequestValidationError", "detail": detail, "status": 422, "errors": errors}


def http_error_body(error: HTTPException) -> dict[str, Any]:
    """The envelope of the framework's HTTP errors (an unknown route, a wrong method, 415)."""
    try:
        name = HTTPStatus(error.status_code).phrase.title().replace(" ", "").replace("-", "") + "Error"
    except ValueError:
        name = "HTTPError"
    detail = error.detail if isinstance(error.detail, str) else str(error.detail)
    return {"error": name, "detail": detail, "status": error.status_code}


async def _handle_validation(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return JSONResponse(validation_body(error), status_code=422)


async def _handle_http(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    if error.status_code in (204, 304):  # these may carry no body at all
        return Response(status_code=error.status_code, headers=error.headers)
    return JSONResponse(http_error_body(error), status_code=error.status_code, headers=error.headers)


def install_error_handlers(app: FastAPI) -> None:
    """Register the mapping on ``app``, and the same envelope for the framework's own errors."""
    app.add_exception_handler(VeracityError, _handle)
    app.add_exception_handler(apsw.Error, _handle)
    app.add_exception_handler(RequestValidationError, _handle_validation)
    app.add_exception_handler(HTTPException, _handle_http)
