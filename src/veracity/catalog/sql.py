"""Typed helpers over apsw cursors (apsw types every value as a union of SQLite types)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

import apsw

__all__ = ["all_rows", "dialect_of", "in_values", "one_row", "rows_among", "scalar", "values_present"]


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


def in_values(connection: Any, column: str, values: Sequence[Any]) -> tuple[str, Any]:
    """``(condition, parameter)``: ``column`` is one of ``values``, the list bound as ONE parameter.

    PostgreSQL binds an array (``column = ANY(?)``); SQLite has no arrays, so the list goes in
    as JSON text that ``json_each`` unpacks (``column IN (SELECT value FROM json_each(?))``).
    One parameter either way, so no statement grows with the list or meets a parameter limit.
    """
    if dialect_of(connection) == "postgresql":
        return f"{column} = ANY(?)", list(values)
    return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))


def rows_among(connection: Any, select: str, column: str, values: Sequence[Any]) -> list[Any]:
    """The rows of ``select`` (a statement up to its ``WHERE``) whose ``column`` is among ``values``,
    in one statement (:func:`in_values`); none for no values."""
    if not values:
        return []
    where, bound = in_values(connection, column, values)
    return cast(list[Any], connection.execute(f"{select} WHERE {where}", (bound,)).fetchall())


def values_present(connection: Any, table: str, column: str, values: Sequence[Any]) -> set[str]:
    """Which of ``values`` stand in ``table.column`` (one statement, :func:`in_values`)."""
    return {str(row[0]) for row in rows_among(connection, f"SELECT {column} FROM {table}", column, values)}
