"""Faults of the storage under a knowledge base, as one clear error each.

SQLite reports a full disk, a read-only file system, a permission problem or
a damaged file through apsw exceptions whose messages name neither the file
nor what to do ("database or disk is full", "attempt to write a readonly
database"); the operating system reports the same faults for the files
beside the database (lock file, manifest) as ``OSError``. :func:`storage_error`
turns either into a :class:`~veracity.model.errors.StorageError` subclass that
names the file and what to do; :func:`storage_faults` does it for a block.

SQLite rolls the open transaction back on these faults, so "nothing of this
change was written" holds for every message here.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Final, TypeVar

import apsw

from ..model.errors import (
    CorruptStorageError,
    DiskFullError,
    ReadOnlyStorageError,
    StorageError,
    StoragePermissionError,
)

__all__ = ["on_read_only_media", "read_only_error", "storage_error", "storage_faults"]

_UNCHANGED = "nothing of this change was written"

# apsw errors that do not say which fault it was: the system's errno, or a look at the path, does
_UNSAID: Final = (apsw.ReadOnlyError, apsw.PermissionsError, apsw.AuthError, apsw.IOError, apsw.CantOpenError)

_E = TypeVar("_E", bound=StorageError)

# one advice per fault, whichever of SQLite or the operating system reported it
_MESSAGES: Final[Mapping[type[StorageError], str]] = {
    DiskFullError: "the disk holding {path!r} is full ({detail}); {unchanged}; free some space and run "
    "the command again",
    ReadOnlyStorageError: "{path!r} cannot be written: the file or its file system is read-only "
    "({detail}); {unchanged}; copy the knowledge base to a writable place, or remount it read-write",
    StoragePermissionError: "permission denied on {path!r} ({detail}); {unchanged}; run as a user who "
    "may write the knowledge base folder, or fix its ownership",
    CorruptStorageError: "{path!r} is damaged or is not a veracity database ({detail}); restore it from "
    "a backup, or ingest the documents into a new knowledge base",
}


def _fault(kind: type[_E], path: str, detail: str) -> _E:
    return kind(_MESSAGES[kind].format(path=path, detail=detail, unchanged=_UNCHANGED), path=path)


def read_only_error(path: str, detail: str) -> ReadOnlyStorageError:
    """The error for a write to ``path`` that read-only storage refuses."""
    return _fault(ReadOnlyStorageError, path, detail)


def _from_errno(code: int | None, path: str, detail: str) -> StorageError | None:
    if code in (errno.ENOSPC, errno.EDQUOT):
        return _fault(DiskFullError, path, detail)
    if code == errno.EROFS:
        return _fault(ReadOnlyStorageError, path, detail)
    if code in (errno.EACCES, errno.EPERM):
        return _fault(StoragePermissionError, path, detail)
    return None


def storage_error(exc: BaseException, path: str, *, system_errno: int = 0) -> StorageError | None:
    """The :class:`StorageError` for ``exc`` raised on ``path``; ``None`` when it is no storage fault.

    ``system_errno`` is the errno of the system call behind an apsw I/O error
    (``Connection.system_errno``), which tells a full disk from a read-only one.
    """
    if isinstance(exc, StorageError):
        return exc
    detail = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and not isinstance(exc, apsw.Error):
        where = exc.filename if isinstance(exc.filename, str) else path
        return _from_errno(exc.errno, where, exc.strerror or detail)
    if isinstance(exc, apsw.FullError):
        return _fault(DiskFullError, path, detail)
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError):
        return _fault(CorruptStorageError, path, detail)
    if not isinstance(exc, _UNSAID):
        return None
    found = _from_errno(system_errno or _access_problem(path), path, detail)
    if found is not None:
        return found
    if isinstance(exc, apsw.ReadOnlyError):
        return _fault(ReadOnlyStorageError, path, detail)
    if isinstance(exc, apsw.PermissionsError | apsw.AuthError):
        return _fault(StoragePermissionError, path, detail)
    if isinstance(exc, apsw.CantOpenError):
        return StorageError(
            f"cannot open {path!r} ({detail}); check that the folder exists and may be written",
            path=path,
        )
    return StorageError(f"the disk failed while writing {path!r} ({detail}); {_UNCHANGED}", path=path)


def _access_problem(path: str) -> int:
    """Why ``path`` cannot be written, as an errno: ``EROFS``, ``EACCES``, or 0 when it can be."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return errno.EROFS
    except OSError:
        return 0
    target = path if os.path.exists(path) else folder
    if not os.access(target, os.W_OK) or not os.access(folder, os.W_OK):
        return errno.EACCES
    return 0


@contextmanager
def storage_faults(path: str, connection: apsw.Connection | None = None) -> Iterator[None]:
    """Re-raise storage faults inside the block as :class:`StorageError` naming ``path``."""
    try:
        yield
    except (apsw.Error, OSError) as exc:
        system = _connection_errno(connection) if connection is not None else 0
        mapped = storage_error(exc, path, system_errno=system)
        if mapped is None:
            raise
        raise mapped from None


def _connection_errno(connection: apsw.Connection) -> int:
    try:
        return int(connection.system_errno)
    except (apsw.Error, AttributeError):
        return 0


def on_read_only_media(path: str) -> bool:
    """True for a database file, closed cleanly (no ``-wal`` left), on a read-only file system."""
    if not os.path.isfile(path) or os.path.exists(path + "-wal"):
        return False
    try:
        return bool(os.statvfs(os.path.dirname(os.path.abspath(path))).f_flag & os.ST_RDONLY)
    except OSError:
        return False
