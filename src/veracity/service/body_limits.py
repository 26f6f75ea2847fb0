"""The request size limit, as ASGI middleware: a body over the limit gets 413 and is never read whole.

Uploads (``POST /v1/documents``) have their own, larger limit. A declared
``Content-Length`` over the limit is refused before any byte is read; a body
without one is read as it arrives (never more than the limit) and refused
once it passes the limit.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from ..model.errors import RequestTooLargeError
from .errors import error_body

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_MAX_UPLOAD", "BodySizeLimit"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY: Final = 64 * 1024
"""Largest request body a service reads, in bytes (`serve --max-body-kb`); a larger one gets 413."""
DEFAULT_MAX_UPLOAD: Final = 32 * 1024 * 1024
"""Largest upload (`POST /v1/documents`) a service reads, in bytes (`serve --max-upload-mb`)."""
UPLOAD_PATH: Final = "/v1/documents"


class BodySizeLimit:
    """Refuse request bodies over ``max_body`` bytes (``max_upload`` for uploads) with 413."""

    def __init__(self, app: App, *, max_body: int = DEFAULT_MAX_BODY, max_upload: int = DEFAULT_MAX_UPLOAD):
        """Wrap ``app``."""
        self.app = app
        self.max_body = max_body
        self.max_upload = max_upload

    def limit_of(self, scope: Scope) -> int:
        """The limit for this request."""
        upload = scope.get("method") == "POST" and scope.get("path") == UPLOAD_PATH
        return self.max_upload if upload else self.max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, counting its body."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_of(scope)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(send, limit)
            return
        # Read the body here, up to the limit, before the application sees any of it: an error raised
        # from inside the application's own reading would reach it as a parse error, not as 413.
        chunks: list[bytes] = []
        received = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([], message, receive), send)
                return
            body = message.get("body", b"")
            received += len(body)
            if received > limit:
                await _refuse(send, limit)
                return
            chunks.append(body)
            more = bool(message.get("more_body"))
        await self.app(scope, _replay(chunks, None, receive), send)


def _replay(chunks: list[bytes], final: Message | None, rest: Receive) -> Receive:
    """A ``receive`` that gives the read body back as one message, then passes on to ``rest``
    (where a streaming response waits for the client to disconnect)."""
    pending: list[Message] = (
        [final]
        if final is not None
        else [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]
    )

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        return await rest()

    return receive


async def _refuse(send: Send, limit: int) -> None:
    error = RequestTooLargeError(f"the request body is over the limit of {limit} bytes", limit=limit)
    body = json.dumps(error_body(error)).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
