"""``veracity mcp``: serve a knowledge base to an assistant over the Model Context Protocol (stdio)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import KB_OPTION, READ_URL_OPTION, embedder_option, library_errors, use_read_url


@click.command("mcp")
@KB_OPTION
@READ_URL_OPTION
@click.option(
    "--key",
    envvar="VERACITY_KEY",
    help="API key whose tenant and roles every answer is for (or VERACITY_KEY); see 'veracity keys'.",
)
@embedder_option("Override the model.")
def mcp_command(kb_dir: Path | str, read_url: str | None, key: str | None, embedder: str | None) -> None:
    """Serve tools 'ask' and 'search' and cited chunks as resources over stdio.

    The principal comes from the key alone (checked on every call); no tool
    takes a tenant or a role. Needs: pip install 'veracity[mcp]'.
    """
    use_read_url(read_url, kb_dir)
    if not key or not key.strip():
        raise click.UsageError(
            "give the API key with --key or VERACITY_KEY ('veracity keys create' makes one)"
        )
    with library_errors():
        from ..integrations.mcp_server import serve_stdio

        serve_stdio(kb_dir, key.strip(), embedder=embedder)


__all__ = ["mcp_command"]
