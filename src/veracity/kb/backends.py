"""Where a knowledge base lives, and opening its store and index there.

A *location* is a directory (``catalog.sqlite`` + ``manifest.json``) or a
``postgresql://`` URL (catalog, index and manifest in that database). Every
part of veracity that takes a directory takes a URL through these functions:

- :func:`location_of` keeps a URL as text and turns anything else into a ``Path``;
- :func:`describe` names a location in messages (never a password);
- :func:`open_store` opens its catalog store (``SQLiteStore`` or ``PostgresStore``);
- :func:`veracity.index.versioned.index_for` then opens the index beside it.

``VERACITY_READER_URL``, when set for a PostgreSQL knowledge base, is the role
tenant-scoped reads use (row-level security; see
:class:`~veracity.catalog.postgres.store.PostgresStore`).
"""

from __future__ import annotations

import os
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any, Final

from ..catalog.lock import OnWait, Wait
from ..catalog.postgres.location import display_url, is_database_url
from ..catalog.store import DatabaseStore

__all__ = [
    "CATALOG_FILE",
    "READER_URL_ENV",
    "UPLOADS",
    "UPLOADS_ENV",
    "Location",
    "describe",
    "is_database_url",
    "location_of",
    "open_store",
    "short_name",
    "uploads_folder",
]

CATALOG_FILE: Final = "catalog.sqlite"
READER_URL_ENV: Final = "VERACITY_READER_URL"
"""A PostgreSQL read replica's URL: asks read from it, writes go to the primary."""
UPLOADS_ENV: Final = "VERACITY_UPLOADS"
"""Where a database knowledge base keeps uploaded files (a directory one keeps them in `DIR/uploads`)."""
UPLOADS: Final = "uploads"

Location = str | os.PathLike[str]


def location_of(location: Location) -> str | Path:
    """A URL as given (``Path`` would fold its ``//``), else the directory as a ``Path``."""
    if is_database_url(location):
        return str(location).strip()
    return Path(location)


def describe(location: Location) -> str:
    """How messages name ``location``: the directory, or the URL without its password."""
    return display_url(str(location)) if is_database_url(location) else str(location)


def short_name(location: Location) -> str:
    """A short name for pages and titles: the directory's name, or the database's."""
    if is_database_url(location):
        return urllib.parse.urlsplit(str(location)).path.strip("/") or "postgres"
    return Path(location).resolve().name


def uploads_folder(location: Location) -> Path:
    """Where uploaded files are kept: ``DIR/uploads``, or ``$VERACITY_UPLOADS`` for a database.

    A database knowledge base has no folder of its own; without ``VERACITY_UPLOADS`` its
    uploads go to ``veracity-uploads/<database>`` in the temporary directory (the catalog
    holds their text either way; the file only serves re-ingesting).
    """
    if not is_database_url(location):
        return Path(location) / UPLOADS
    chosen = os.environ.get(UPLOADS_ENV)
    return Path(chosen) if chosen else Path(tempfile.gettempdir()) / "veracity-uploads" / short_name(location)


def open_store(
    location: Location, *, writer_wait: Wait = True, on_wait: OnWait | None = None, **options: Any
) -> DatabaseStore:
    """The catalog store of ``location``: PostgreSQL for a URL, else ``DIR/catalog.sqlite``."""
    if is_database_url(location):
        from ..catalog.postgres.store import PostgresStore

        reader = options.pop("reader_url", None) or os.environ.get(READER_URL_ENV) or None
        return PostgresStore(
            str(location).strip(), reader_url=reader, writer_wait=writer_wait, on_wait=on_wait, **options
        )
    from ..catalog.sqlite import SQLiteStore

    return SQLiteStore(Path(location) / CATALOG_FILE, writer_wait=writer_wait, on_wait=on_wait, **options)
