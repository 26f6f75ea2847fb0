"""Login roles for the service's reads: members of ``veracity_reader``, never ``BYPASSRLS``.

A service worker connects twice: as the database's owner for writes (ingest,
lifecycle, keys, the writer lock) and, through ``VERACITY_READER_URL``, as a
reader role for what callers read. :func:`create_reader` makes such a role
and returns its URL; row-level security then confines every read of it to the
tenant set per transaction (``veracity.tenant``), whatever the query says.
"""

from __future__ import annotations

import re
import urllib.parse

from ...model.errors import ConfigError, ValidationError
from .location import display_url, require_driver
from .migrations import READER_ROLE

__all__ = ["create_reader", "reader_url"]

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def reader_url(url: str, name: str, password: str | None = None) -> str:
    """``url`` with its user (and password) replaced by the reader role ``name``."""
    parts = urllib.parse.urlsplit(url)
    secret = f":{urllib.parse.quote(password, safe='')}" if password else ""
    port = f":{parts.port}" if parts.port else ""
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{name}{secret}@{parts.hostname}{port}"))


def create_reader(url: str, name: str, *, password: str | None = None) -> str:
    """Create (or update) the login role ``name`` in ``veracity_reader`` on ``url``'s server; return its URL.

    ``url`` is the owner's (it must have opened the knowledge base once, so the
    reader role and its grants exist). The new role has neither ``BYPASSRLS``
    nor ``SUPERUSER``; ``ValidationError`` for a name PostgreSQL would need quoted.
    """
    if not _NAME.fullmatch(name):
        raise ValidationError(
            f"role name {name!r} must be lower-case letters, digits and '_' (at most 63)", field="name"
        )
    require_driver()
    import psycopg
    from psycopg import sql

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=30) as owner:
            if owner.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER_ROLE,)).fetchone() is None:
                raise ConfigError(
                    f"{display_url(url)!r} has no {READER_ROLE} role yet; open the knowledge base once "
                    "(e.g. 'veracity status --kb URL') so its migrations run"
                )
            exists = owner.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
            verb = "ALTER" if exists else "CREATE"
            statement = sql.SQL(verb + " ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS").format(sql.Identifier(name))
            if password:
                statement = sql.SQL("{} PASSWORD {}").format(statement, sql.Literal(password))
            owner.execute(statement)
            owner.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(READER_ROLE), sql.Identifier(name)))
    except psycopg.Error as exc:
        raise ConfigError(f"cannot create the reader role {name!r} on {display_url(url)}: {exc}") from exc
    return reader_url(url, name, password)
