"""The ``kb_settings`` table: a knowledge base's own settings, one JSON value per key.

What the keys mean lives with their users (:mod:`veracity.catalog.defaults` for the
default tenant, ask defaults and non-official policies; :mod:`veracity.kb.composing`
for the language model). The SQL is portable: it runs as written on a SQLite
connection and through :class:`~veracity.catalog.postgres.connection.PgConnection`.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["delete_setting", "get_setting", "put_setting", "settings_under"]

_ESCAPE = "!"
"""LIKE's escape character here: neither backend reads a backslash in a literal the same way."""


def get_setting(connection: Any, key: str) -> Any:
    """The value stored under ``key`` (decoded JSON), or ``None``."""
    row = connection.execute("SELECT value FROM kb_settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else json.loads(str(row[0]))


def put_setting(connection: Any, key: str, value: Any) -> None:
    """Store ``value`` (JSON) under ``key``, replacing what was there (call inside a transaction)."""
    connection.execute(
        "INSERT INTO kb_settings (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, json.dumps(value, ensure_ascii=False, sort_keys=True)),
    )


def delete_setting(connection: Any, key: str) -> None:
    """Forget the value under ``key`` (nothing happens when there is none)."""
    connection.execute("DELETE FROM kb_settings WHERE key = ?", (key,))


def settings_under(connection: Any, prefix: str) -> dict[str, Any]:
    """Every ``key → value`` whose key starts with ``prefix``, by key."""
    pattern = "".join(_ESCAPE + c if c in f"%_{_ESCAPE}" else c for c in prefix) + "%"
    rows = connection.execute(
        f"SELECT key, value FROM kb_settings WHERE key LIKE ? ESCAPE '{_ESCAPE}' ORDER BY key", (pattern,)
    )
    # SQLite's LIKE ignores ASCII case, PostgreSQL's does not: the prefix is compared here too
    return {str(key): json.loads(str(value)) for key, value in rows if str(key).startswith(prefix)}
