"""Running the service: uvicorn, one process or N workers sharing one listening socket.

With one worker the gateway is opened here and handed to the application.
With more, this process binds the socket and starts each worker (a fresh
interpreter) on it: every worker builds its application with
:func:`veracity.service.app.app_from_environment`, opening its own gateway on
the same directory (SQLite in WAL mode takes readers and a writer across
processes; the catalog revision keeps each worker's answer cache honest).
The kernel hands each new connection to one of the workers.

The socket is made here rather than by uvicorn's own ``workers=`` mode
because asyncio only turns Nagle's algorithm off (``TCP_NODELAY``) on
connections accepted from a socket created with ``IPPROTO_TCP``, which
uvicorn's does not name: every small response then waited ~40 ms for a
delayed acknowledgement (measured: 44 ms for ``/healthz`` with two uvicorn
workers, 1.4 ms with one).

Before anything listens, :func:`open_gateway` opens the knowledge base and
runs SQLite's integrity check, so a damaged catalog stops ``serve`` with one
clear error instead of after it said it was serving (or in every worker).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from ..catalog.faults import storage_faults
from ..catalog.postgres.location import is_database_url
from ..kb.backends import CATALOG_FILE, describe
from ..kb.status import check_file
from .app import ENVIRONMENT, ServiceOptions, app_from_environment, create_app
from .blas import limit_blas_threads
from .core.gateway import Gateway

__all__ = ["listening_socket", "open_gateway", "serve"]

LOG_LEVEL = "warning"


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket the workers accept on (see the module docstring for ``IPPROTO_TCP``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def _worker(sock: socket.socket, options: str) -> None:
    """One worker process: its own gateway and application on the shared socket."""
    os.environ[ENVIRONMENT] = options
    app = app_from_environment()
    app.state.gateway.sessions.fill()  # before it listens: the first questions do not pay for opening
    server = uvicorn.Server(uvicorn.Config(app, **logging_options(ServiceOptions.from_json(options))))
    server.run(sockets=[sock])


def logging_options(options: ServiceOptions) -> dict[str, Any]:
    """uvicorn's logging: warnings and errors only, and with ``options.access_log`` a line per
    request (uvicorn files those at INFO, below the service's level), all on standard error."""
    if not options.access_log:
        return {"log_level": LOG_LEVEL}
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for name, logger in config["loggers"].items():
        logger["level"] = "INFO" if name == "uvicorn.access" else LOG_LEVEL.upper()
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return {"log_config": config, "access_log": True}


def open_gateway(options: ServiceOptions) -> Gateway:
    """The gateway of ``options.kb``, opened and checked (``CorruptStorageError`` naming the catalog).

    Opening reads the catalog (and may verify the published index), so a
    damaged file can fail there as a bare SQLite error: it is named as the
    damaged catalog too. Then SQLite's integrity check reads every page.
    """
    where = describe(options.kb) if is_database_url(options.kb) else str(Path(options.kb) / CATALOG_FILE)
    with storage_faults(where):
        gateway = Gateway.open(options.kb, embedder=options.embedder, settings=options.gateway_settings())
    try:
        check_file(gateway.store)
    except BaseException:
        gateway.close()
        raise
    return gateway


def serve(
    options: ServiceOptions,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    ready: Callable[[], None] | None = None,
) -> None:
    """Serve the knowledge base of ``options`` until interrupted (SIGINT or SIGTERM).

    The knowledge base is opened and checked first (:func:`open_gateway`);
    ``ready`` is called after that, just before the service starts listening.
    """
    limit_blas_threads()
    gateway = open_gateway(options)
    if workers <= 1:
        gateway.sessions.fill()
        app = create_app(gateway, max_body=options.max_body, max_upload=options.max_upload)
        if ready is not None:
            ready()
        uvicorn.run(app, host=host, port=port, **logging_options(options))
        return
    gateway.close()  # checked; each worker opens its own
    sock = listening_socket(host, port)
    if ready is not None:
        ready()
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_worker, args=(sock, options.to_json())) for _ in range(workers)]

    def stop(signum: int, frame: FrameType | None) -> None:
        for process in processes:
            if process.is_alive():
                process.terminate()  # each worker's uvicorn shuts down gracefully on SIGTERM

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for process in processes:
            process.start()
        for process in processes:
            process.join()
    finally:
        stop(signal.SIGTERM, None)
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
