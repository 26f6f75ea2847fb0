"""Running the service: uvicorn, one process or N workers.

With one worker the gateway is opened here and handed to the application;
with more, uvicorn starts each worker from :func:`veracity.service.app.app_from_environment`,
which opens its own gateway on the same directory (SQLite in WAL mode takes
readers and a writer across processes; the catalog revision keeps each
worker's answer cache honest).
"""

from __future__ import annotations

import os

import uvicorn

from ..kb.gateway import Gateway
from .app import ENVIRONMENT, ServiceOptions, create_app

__all__ = ["serve"]


def serve(options: ServiceOptions, *, host: str = "127.0.0.1", port: int = 8000, workers: int = 1) -> None:
    """Serve the knowledge base of ``options`` until interrupted."""
    if workers > 1:
        os.environ[ENVIRONMENT] = options.to_json()
        uvicorn.run(
            "veracity.service.app:app_from_environment",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="warning",
        )
        return
    gateway = Gateway.open(options.kb, embedder=options.embedder, settings=options.gateway_settings())
    app = create_app(gateway, max_body=options.max_body, max_upload=options.max_upload)
    uvicorn.run(app, host=host, port=port, log_level="warning")
