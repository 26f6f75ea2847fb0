"""The FastAPI application: API routes, the page, error statuses and the body size limit.

:func:`create_app` serves one :class:`~veracity.service.core.gateway.Gateway`;
:func:`app_from_environment` builds it in each uvicorn worker from the
settings :func:`veracity.service.server.serve` puts in the environment.
OpenAPI is at ``/openapi.json``, the interactive docs at ``/docs``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from .._version import __version__
from . import admin, api, conversations, page
from .body_limits import DEFAULT_MAX_BODY, DEFAULT_MAX_UPLOAD, BodySizeLimit
from .core.conversations import Conversations
from .core.gateway import Gateway, GatewaySettings
from .core.rate_limits import RateLimit
from .errors import install_error_handlers

__all__ = ["ENVIRONMENT", "ServiceOptions", "app_from_environment", "create_app"]

ENVIRONMENT: Final = "VERACITY_SERVE"
"""The environment variable holding a worker's :class:`ServiceOptions` as JSON."""


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    """What ``veracity serve`` passes to each worker."""

    kb: str
    embedder: str | None = None
    rate_per_minute: float = 600.0
    burst: int = 60
    max_body: int = DEFAULT_MAX_BODY
    max_upload: int = DEFAULT_MAX_UPLOAD
    cache_entries: int = 2048
    answer_sessions: int = 2
    page_images: bool = True
    access_log: bool = False
    """Log every request (method, path, status) on standard error, as uvicorn writes it."""

    def gateway_settings(self) -> GatewaySettings:
        """The gateway's part of the options."""
        return GatewaySettings(
            cache_entries=self.cache_entries,
            rate_limit=RateLimit(self.rate_per_minute, self.burst),
            answer_sessions=self.answer_sessions,
            page_images=self.page_images,
        )

    def to_json(self) -> str:
        """For the environment."""
        return json.dumps({name: getattr(self, name) for name in self.__dataclass_fields__})

    @classmethod
    def from_json(cls, text: str) -> ServiceOptions:
        """Back from the environment."""
        return cls(**json.loads(text))


def create_app(
    gateway: Gateway, *, max_body: int = DEFAULT_MAX_BODY, max_upload: int = DEFAULT_MAX_UPLOAD
) -> FastAPI:
    """The application serving ``gateway`` (closed when the application shuts down)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        talks.close()
        gateway.close()

    app = FastAPI(
        title="veracity",
        version=__version__,
        summary="Warranted answers from governed documents: every sentence copied from a cited, "
        "current, permitted chunk; partial or abstain when the evidence is missing.",
        lifespan=lifespan,
    )
    talks = Conversations(gateway)
    app.state.gateway = gateway
    app.state.conversations = talks
    install_error_handlers(app)
    app.include_router(api.router)
    app.include_router(conversations.router)
    app.include_router(admin.router)
    app.include_router(page.router)
    app.mount("/static", StaticFiles(directory=page.STATIC), name="static")
    app.add_middleware(BodySizeLimit, max_body=max_body, max_upload=max_upload)
    return app


def app_from_environment() -> FastAPI:
    """A worker's application, from :data:`ENVIRONMENT` (set by ``veracity serve``)."""
    raw = os.environ.get(ENVIRONMENT)
    if not raw:
        raise RuntimeError(f"{ENVIRONMENT} is not set; start the service with 'veracity serve --kb DIR'")
    options = ServiceOptions.from_json(raw)
    gateway = Gateway.open(options.kb, embedder=options.embedder, settings=options.gateway_settings())
    return create_app(gateway, max_body=options.max_body, max_upload=options.max_upload)
