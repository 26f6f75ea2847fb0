"""Typed helpers over apsw cursors (apsw types every value as a union of SQLite types)."""

from __future__ import annotations

from typing import Any, cast

import apsw

__all__ = ["all_rows", "dialect_of", "one_row", "scalar"]


def all_rows(connection: apsw.Connection, sql: str, params: Any = ()) -> list[Any]:
    """Every row of ``sql`` (rows are tuples of Python values)."""
    return cast(list[Any], connection.execute(sql, params).fetchall())


def one_row(connection: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first row of ``sql``, or ``None``."""
    return cast(Any, connection.execute(sql, params).fetchone())


def scalar(connection: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first column of the first row of ``sql`` (``None`` when there is no row)."""
    row = one_row(connection, sql, params)
    return None if row is None else row[0]


def dialect_of(connection: Any) -> str:
    """The SQL ``connection`` speaks: ``"postgresql"`` (it says so), else ``"sqlite"`` (apsw says nothing)."""
    return str(getattr(connection, "dialect", "sqlite"))
