"""Opening a catalog file the way every part of veracity expects it.

WAL journal for files (readers read snapshots while one writer writes),
foreign keys on, a long busy timeout, and the sqlite-vec extension loaded.
"""

from __future__ import annotations

import importlib.util
import os
import urllib.parse

import apsw

from ..model.errors import CatalogError

__all__ = ["BUSY_TIMEOUT_MS", "connect", "vec_extension_path"]

BUSY_TIMEOUT_MS = 60_000
"""How long a statement waits for SQLite's own lock. Writers queue on the writer lock file first
(:mod:`veracity.catalog.lock`) and readers read WAL snapshots, so this is only reached when
something outside veracity holds the database."""


_MEMORY = (":memory:", "")


def vec_extension_path() -> str:
    """Where the sqlite-vec loadable extension is, found without importing ``sqlite_vec``.

    Importing the package imports numpy (for helpers veracity does not use); commands that
    only read the catalog should not pay for that. The extension sits beside its
    ``__init__.py`` as ``vec0``, which is all ``sqlite_vec.loadable_path()`` computes.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise CatalogError("sqlite-vec is not installed; install it with 'pip install sqlite-vec'")
    return os.path.normpath(os.path.join(os.path.dirname(spec.origin), "vec0"))


def connect(path: str | os.PathLike[str], *, immutable: bool = False) -> apsw.Connection:
    """Open ``path`` with apsw: WAL for files, foreign keys on, sqlite-vec loaded.

    ``":memory:"`` opens a private in-memory database. ``immutable`` opens a
    file on read-only media for reading only (SQLite takes no locks and
    writes no ``-shm`` file; nothing can change the file there).
    """
    name = os.fspath(path)
    if immutable:
        uri = f"file:{urllib.parse.quote(os.path.abspath(name))}?immutable=1"
        flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        connection = apsw.Connection(uri, flags=flags)
    else:
        connection = apsw.Connection(name)
    connection.set_busy_timeout(BUSY_TIMEOUT_MS)
    try:
        connection.enable_load_extension(True)
        connection.load_extension(vec_extension_path())
    except apsw.Error as exc:
        raise CatalogError(
            f"cannot load sqlite-vec from {vec_extension_path()!r}: {exc}; "
            "reinstall it with 'pip install sqlite-vec'"
        ) from exc
    finally:
        connection.enable_load_extension(False)
    connection.execute("PRAGMA foreign_keys = ON")
    if name not in _MEMORY and "mode=memory" not in name and not immutable:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
    return connection
