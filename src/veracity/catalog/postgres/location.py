"""Where a knowledge base lives: a directory, or a PostgreSQL database named by URL.

Everything that takes ``--kb`` (or ``VERACITY_KB``) takes either. A URL is
``postgresql://user[:password]@host[:port]/database`` (``postgres://`` too);
anything else is a directory. Passwords never reach messages: :func:`display_url`
blanks them.
"""

from __future__ import annotations

import importlib.util
import os
import urllib.parse
from typing import Final

from ...model.errors import ConfigError

__all__ = ["INSTALL_HINT", "display_url", "is_database_url", "require_driver"]

SCHEMES: Final = ("postgresql://", "postgres://")

INSTALL_HINT: Final = "install the PostgreSQL backend with: pip install 'veracity[postgres]'"


def is_database_url(location: str | os.PathLike[str]) -> bool:
    """True when ``location`` names a PostgreSQL database rather than a directory."""
    return isinstance(location, str) and location.strip().lower().startswith(SCHEMES)


def display_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for messages, manifests and logs)."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def require_driver() -> None:
    """``ConfigError`` with the install line when psycopg 3 or its pool is missing."""
    for module in ("psycopg", "psycopg_pool"):
        if importlib.util.find_spec(module) is None:
            raise ConfigError(f"a postgresql:// knowledge base needs {module}; {INSTALL_HINT}")
