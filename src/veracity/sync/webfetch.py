"""HTTP for the website crawler: the :class:`Fetch` protocol, its :class:`Response`, and :func:`urllib_fetch`.

:func:`urllib_fetch` is the real transport on :mod:`urllib.request`. It follows redirects
while they stay on the requested URL's site (a redirect to another site comes back as the
3xx response, so another host is never contacted), returns every HTTP status as a
:class:`Response` (304, 404 and 5xx included), and raises ``OSError`` for connection
errors, timeouts and malformed responses.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message
from types import MappingProxyType
from typing import IO, Protocol

from .weburls import Origin, origin_of

__all__ = ["Fetch", "Response", "describe_error", "urllib_fetch"]

_READ_CHUNK = 65_536


@dataclass(frozen=True, slots=True)
class Response:
    """One HTTP answer: status, final URL after redirects, headers, and at most ``max_bytes`` of body.

    Header names are lower-cased on construction, so ``headers["content-type"]`` works whatever
    the server (or a fake fetch) wrote. ``truncated``: the body was longer than ``max_bytes``
    (or its Content-Length said so, and it was not read at all).
    """

    status: int
    url: str
    headers: Mapping[str, str]
    body: bytes = b""
    truncated: bool = False

    def __post_init__(self) -> None:
        lowered = {name.lower(): value for name, value in self.headers.items()}
        object.__setattr__(self, "headers", MappingProxyType(lowered))

    def header(self, name: str) -> str:
        """The value of header ``name`` (any case), ``""`` when absent."""
        return self.headers.get(name.lower(), "").strip()


class Fetch(Protocol):
    """Requests ``url`` with ``headers``; reads at most ``max_bytes + 1`` bytes of body.

    Returns every HTTP status as a :class:`Response`; raises ``OSError`` when no answer came.
    """

    def __call__(self, url: str, headers: Mapping[str, str], max_bytes: int, timeout_s: float) -> Response:
        """One GET request."""
        ...


class _SameSiteRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only while it stays on one site, and drops conditional headers when it does."""

    def __init__(self, origin: Origin) -> None:
        super().__init__()
        self._origin = origin

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if origin_of(newurl) != self._origin:
            # returning None makes urllib hand back the 3xx itself: the other host is never contacted
            return None
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            # the validators belong to the old URL; sent to the new one they could match by accident
            for name in ("If-none-match", "If-modified-since"):
                new.remove_header(name)
        return new


def _content_length(headers: Mapping[str, str]) -> int | None:
    raw = headers.get("content-length", "").strip()
    return int(raw) if raw.isdigit() else None


def _read(status: int, url: str, message: Message, stream: IO[bytes], max_bytes: int) -> Response:
    headers = {name.lower(): value for name, value in message.items()}
    length = _content_length(headers)
    if length is not None and length > max_bytes:
        return Response(status, url, headers, b"", truncated=True)
    chunks: list[bytes] = []
    size = 0
    # read in a loop: one read(n) may return less than n on a chunked or slow answer
    while size <= max_bytes:
        chunk = stream.read(min(_READ_CHUNK, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    body = b"".join(chunks)
    return Response(status, url, headers, body[:max_bytes], truncated=size > max_bytes)


def _exchange(
    opener: urllib.request.OpenerDirector, request: urllib.request.Request, max_bytes: int, timeout_s: float
) -> Response:
    try:
        with opener.open(request, timeout=timeout_s) as reply:
            return _read(reply.status, reply.geturl(), reply.headers, reply, max_bytes)
    except urllib.error.HTTPError as error:
        try:
            return _read(error.code, error.geturl() or request.full_url, error.headers, error, max_bytes)
        finally:
            error.close()


def urllib_fetch(url: str, headers: Mapping[str, str], max_bytes: int, timeout_s: float) -> Response:
    """GET ``url`` with :mod:`urllib.request`: the real :class:`Fetch`.

    Raises ``OSError`` (``TimeoutError`` for a timeout) when no HTTP answer came back, and
    ``ValueError`` for a URL that is not http(s).
    """
    origin = origin_of(url)
    if origin is None:
        # urllib would also open file:, ftp: and data: URLs; a crawler must never read local files
        raise ValueError(f"not an http(s) URL: {url!r}")
    opener = urllib.request.build_opener(_SameSiteRedirects(origin))
    opener.addheaders = []  # no default "Python-urllib" User-Agent: the caller sends its own
    try:
        return _exchange(opener, urllib.request.Request(url, headers=dict(headers)), max_bytes, timeout_s)
    except urllib.error.URLError as error:
        if isinstance(error.reason, OSError):
            raise error.reason from error
        raise OSError(str(error.reason)) from error
    except (http.client.HTTPException, ValueError) as error:
        raise OSError(f"bad HTTP answer: {error}") from error


def describe_error(error: OSError) -> str:
    """A short reason for a request that got no answer: ``timed out``, ``connection refused``, …"""
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    detail = error.strerror or str(error) or type(error).__name__
    return f"connection failed: {detail}"
