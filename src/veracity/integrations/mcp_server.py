"""A Model Context Protocol server over stdio: ``veracity mcp --kb DIR --key KEY``.

Tools:

- ``ask(question, version?)``: the governed answer (status, claims with citation
  numbers, citations with source paths and pages, missing facts, reasons);
- ``search(query, limit?)``: the permitted chunks, ranked, with their scores.

Resources: ``veracity://documents/{document_id}/chunks/{chunk_id}`` — a cited
chunk in its document (title, heading path, pages, neighbouring chunks).

The principal comes from the API key the server was started with (as in the
HTTP service; ``veracity keys create``), checked again on every call so a
revoked key stops working; no tool takes a tenant or a role, so an assistant
can never widen what it may see.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .common import require

require("mcp", "mcp")

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError  # noqa: E402

from ..model.errors import NotFoundError, VeracityError  # noqa: E402
from ..service.core.gateway import Gateway  # noqa: E402
from ..service.errors import error_body  # noqa: E402

__all__ = ["build_server", "serve_stdio"]

INSTRUCTIONS = (
    "Answers come only from documents this key may see; every claim is copied from a cited chunk. "
    "'abstain' means the knowledge base does not cover the question: say so, do not guess."
)


def build_server(gateway: Gateway, key: str) -> MCPServer:
    """The MCP server over ``gateway`` for the principal of ``key`` (checked now and on each call)."""
    gateway.admit(key)
    server = MCPServer(name="veracity", instructions=INSTRUCTIONS)

    @server.tool()
    def ask(question: str, version: str | None = None) -> dict[str, Any]:
        """Ask the knowledge base; the answer is governed: answer, partial (saying what is missing) or
        abstain."""
        try:
            served = gateway.ask(gateway.admit(key), question, version=version)
        except VeracityError as exc:
            raise ToolError(_told(exc)) from exc
        return served.as_dict()

    @server.tool()
    def search(query: str, limit: int = 5) -> dict[str, Any]:
        """The chunks this key may use for ``query``, best first, with their text, place and scores."""
        try:
            return gateway.search(gateway.admit(key), query, limit=limit)
        except VeracityError as exc:
            raise ToolError(_told(exc)) from exc

    @server.resource("veracity://documents/{document_id}/chunks/{chunk_id}", mime_type="application/json")
    def chunk(document_id: str, chunk_id: str) -> str:
        """A cited chunk in its document: title, heading path, pages, the chunks around it."""
        try:
            found = gateway.chunk_context(gateway.admit(key), document_id, chunk_id)
        except NotFoundError as exc:  # also what a chunk this key may not see looks like
            raise ResourceNotFoundError(_told(exc)) from exc
        except VeracityError as exc:
            raise ResourceError(_told(exc)) from exc
        return json.dumps(found, ensure_ascii=False, sort_keys=True)

    return server


def _told(error: VeracityError) -> str:
    """A library error as the HTTP API tells it (class, message, status): an assistant reading
    the tool's result can tell a typo from a revoked key. Anything else stays a crash, whose
    text the MCP server withholds and logs."""
    body = error_body(error)
    return f"{body['error']} ({body['status']}): {body['detail']}"


def serve_stdio(kb_dir: str | os.PathLike[str], key: str, *, embedder: str | None = None) -> None:
    """Open the knowledge base at ``kb_dir`` and serve MCP on stdin/stdout until the client leaves.

    ``kb_dir`` is a directory or a ``postgresql://`` URL.
    """
    gateway = Gateway.open(kb_dir, embedder=embedder)  # not Path(): it folds a URL's '//' into '/'
    try:
        build_server(gateway, key).run("stdio")
    finally:
        gateway.close()
