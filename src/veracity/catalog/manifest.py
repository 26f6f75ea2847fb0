"""The ``kb_manifest`` table: where a knowledge base in a database keeps its manifest.

A directory keeps ``manifest.json`` beside its catalog file; a database is the
whole knowledge base, so its manifest (the JSON text, one row) lives in it.
What the manifest says and how it is checked is :mod:`veracity.kb.manifest`.
"""

from __future__ import annotations

from typing import Any

from ..model.errors import CatalogUnavailableError
from .postgres.location import display_url, require_driver

__all__ = ["holds_manifest", "manifest_at_url", "store_manifest", "stored_manifest"]

_READ = "SELECT manifest FROM kb_manifest WHERE id = 1"


def stored_manifest(connection: Any) -> str | None:
    """The stored manifest's JSON text, or ``None`` before the first is written."""
    row = connection.execute(_READ).fetchone()
    return None if row is None else str(row[0])


def store_manifest(connection: Any, text: str) -> None:
    """Store ``text`` as the manifest, replacing the one there."""
    connection.execute(
        "INSERT INTO kb_manifest (id, manifest) VALUES (1, ?) "
        "ON CONFLICT (id) DO UPDATE SET manifest = EXCLUDED.manifest",
        (text,),
    )


def holds_manifest(connection: Any) -> bool:
    """True once a manifest was written (the database holds a knowledge base)."""
    row = connection.execute("SELECT count(*) FROM kb_manifest").fetchone()
    return int(row[0]) != 0


def manifest_at_url(url: str) -> str | None:
    """The manifest text of the PostgreSQL database at ``url``, read on a connection of its own.

    ``None`` when the database holds no manifest (or not even the table: it
    holds no knowledge base). Opening no store means no migrations run, so a
    mere look never changes the database.
    """
    require_driver()
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=30) as connection:
            missing = connection.execute("SELECT to_regclass('kb_manifest') IS NULL").fetchall()[0][0]
            row = None if missing else connection.execute(_READ).fetchone()
    except psycopg.OperationalError as exc:
        raise CatalogUnavailableError(f"cannot connect to {display_url(url)}: {exc}") from exc
    return None if row is None else str(row[0])
