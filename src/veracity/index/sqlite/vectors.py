"""sqlite-vec ``vec0`` tables holding a model's chunk vectors, partitioned by tenant.

One table per index version and embedding model (``vec<version>_<dim>_<sha256(model_id)[:12]>``)::

    chunk_key integer primary key, tenant text partition key,
    status text, doc_key integer,             -- metadata columns (filterable in the KNN)
    embedding float[dim] distance_metric=cosine

Rows are L2-normalized float32; a cosine score is ``1 - distance``.

KNN filters follow what sqlite-vec applies *inside* the search: equality on the
partition key and ``IN`` on the ``doc_key`` metadata column. ``OR`` and bit
masks are applied after the KNN and would silently return fewer than ``k`` rows;
this module never writes them.

:func:`load_partition` reads a tenant's whole partition into a numpy matrix
for exact search in memory. sqlite-vec 0.1.x offers no fast bulk read (a full
scan through the virtual table took ~9 s for 33k rows of 512 dims here), so it
reads the table's shadow tables (``_chunks``, ``_vector_chunks00``), after
checking that the layout is the one sqlite-vec 0.1 writes, and spot-checks rows
against the public interface. If anything does not match it returns ``None``
and callers use the KNN instead.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Final

import apsw
import numpy as np
import numpy.typing as npt

from ...catalog.sql import all_rows, one_row, scalar

__all__ = [
    "VEC_CHUNK_SIZE",
    "check_vector_name",
    "create_vector_table",
    "delete_vectors",
    "drop_vector_table",
    "fetch_vectors",
    "insert_vectors",
    "knn",
    "load_partition",
    "set_status",
    "vector_table_name",
]

VEC_CHUNK_SIZE: Final = 256
"""Rows per vec0 storage chunk. Measured at 512 dims: ~10k inserts/s vs ~1.2k/s at the default 1024."""

_LAYOUT_VERSION_PREFIX: Final = "v0.1."


def vector_table_name(model_id: str, dim: int, version: int) -> str:
    """The vec0 table of a model in index ``version``: ``vec<version>_<dim>_<sha256(model_id)[:12]>``."""
    return f"vec{int(version)}_{int(dim)}_{hashlib.sha256(model_id.encode('utf-8')).hexdigest()[:12]}"


_VECTOR_NAME: Final = re.compile(r"vec[0-9]*_[0-9]+_[0-9a-f]{12}")  # "vec_<dim>_<hash>": before versions


def check_vector_name(table: str) -> str:
    """Return ``table`` if it is a name :func:`vector_table_name` makes; ``ValueError`` otherwise."""
    if not _VECTOR_NAME.fullmatch(table):
        raise ValueError(f"not a vector table name made by vector_table_name: {table!r}")
    return table


def drop_vector_table(connection: apsw.Connection, table: str) -> None:
    """Drop a vec0 table (and with it its shadow tables)."""
    connection.execute(f"DROP TABLE IF EXISTS {check_vector_name(table)}")


def create_vector_table(connection: apsw.Connection, table: str, dim: int) -> None:
    """Create the vec0 table ``table`` for ``dim``-wide cosine vectors."""
    check_vector_name(table)
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
        "chunk_key integer primary key, tenant text partition key, "
        f"status text, doc_key integer, embedding float[{int(dim)}] distance_metric=cosine, "
        f"chunk_size={VEC_CHUNK_SIZE})"
    )


def insert_vectors(
    connection: apsw.Connection,
    table: str,
    rows: Iterable[tuple[int, str, str, int, npt.NDArray[np.float32]]],
) -> None:
    """Insert ``(chunk_key, tenant, status, doc_key, vector)`` rows."""
    check_vector_name(table)
    connection.executemany(
        f"INSERT INTO {table} (chunk_key, tenant, status, doc_key, embedding) VALUES (?, ?, ?, ?, ?)",
        (
            (key, tenant, status, doc_key, np.ascontiguousarray(vector, dtype=np.float32).tobytes())
            for key, tenant, status, doc_key, vector in rows
        ),
    )


def set_status(connection: apsw.Connection, table: str, chunk_keys: Sequence[int], status: str) -> None:
    """Update the ``status`` metadata of the given rows."""
    check_vector_name(table)
    connection.executemany(
        f"UPDATE {table} SET status = ? WHERE chunk_key = ?", ((status, key) for key in chunk_keys)
    )


def delete_vectors(connection: apsw.Connection, table: str, chunk_keys: Sequence[int]) -> None:
    """Delete the given rows."""
    check_vector_name(table)
    connection.executemany(f"DELETE FROM {table} WHERE chunk_key = ?", ((key,) for key in chunk_keys))


def fetch_vectors(
    connection: apsw.Connection, table: str, chunk_keys: Sequence[int], dim: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The stored vectors of ``chunk_keys`` by point lookups, as ``(keys, matrix)``; skips missing keys."""
    check_vector_name(table)
    keys: list[int] = []
    blobs: list[bytes] = []
    for key in chunk_keys:
        row = one_row(connection, f"SELECT embedding FROM {table} WHERE chunk_key = ?", (int(key),))
        if row is not None:
            keys.append(int(key))
            blobs.append(row[0])
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(keys), dim)
    return np.asarray(keys, dtype=np.int64), matrix


def knn(
    connection: apsw.Connection,
    table: str,
    tenant: str,
    query: npt.NDArray[np.float32],
    *,
    k: int,
    doc_keys: Sequence[int],
) -> list[tuple[int, float]]:
    """``(chunk_key, cosine)`` of the ``k`` nearest rows of ``tenant`` whose ``doc_key`` is listed.

    The tenant is the partition key (equality) and the document filter is an
    ``IN`` on metadata: both run inside the KNN, so exactly
    ``min(k, matching rows)`` rows come back.
    """
    check_vector_name(table)
    if not doc_keys:
        return []
    rows = all_rows(
        connection,
        f"SELECT chunk_key, distance FROM {table} WHERE embedding MATCH ? AND k = ? "
        "AND tenant = ? AND doc_key IN (SELECT value FROM json_each(?))",
        (
            np.ascontiguousarray(query, dtype=np.float32).tobytes(),
            int(k),
            tenant,
            json.dumps([int(key) for key in doc_keys]),
        ),
    )
    return [(int(key), 1.0 - float(distance)) for key, distance in rows]


def _layout_known(connection: apsw.Connection, table: str) -> bool:
    try:
        version = scalar(connection, "SELECT vec_version()")
        created = one_row(connection, f"SELECT value FROM {table}_info WHERE key = 'CREATE_VERSION'")
        columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table}_chunks)")]
        vector_columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table}_vector_chunks00)")]
    except apsw.Error:
        return False
    return (
        str(version).startswith(_LAYOUT_VERSION_PREFIX)
        and created is not None
        and str(created[0]).startswith(_LAYOUT_VERSION_PREFIX)
        and {"chunk_id", "size", "partition00", "validity", "rowids"} <= set(columns)
        and {"rowid", "vectors"} <= set(vector_columns)
    )


def load_partition(
    connection: apsw.Connection, table: str, tenant: str, dim: int, *, spot_checks: int = 3
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
    """Every vector of ``tenant`` as ``(keys ascending, matrix)``; ``None`` if the layout is unknown."""
    check_vector_name(table)
    if not _layout_known(connection, table):
        return None
    key_parts: list[npt.NDArray[np.int64]] = []
    matrix_parts: list[npt.NDArray[np.float32]] = []
    rows = connection.execute(
        f"SELECT c.size, c.validity, c.rowids, v.vectors FROM {table}_chunks AS c "
        f"JOIN {table}_vector_chunks00 AS v ON v.rowid = c.chunk_id "
        "WHERE c.partition00 = ? ORDER BY c.chunk_id",
        (tenant,),
    )
    for size, validity, rowids, vectors in rows:
        size = int(size)
        if len(rowids) != 8 * size or len(vectors) != 4 * dim * size or len(validity) * 8 < size:
            return None
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size]
        keep = valid.astype(bool)
        key_parts.append(np.frombuffer(rowids, dtype="<i8")[keep].astype(np.int64))
        matrix_parts.append(np.frombuffer(vectors, dtype="<f4").reshape(size, dim)[keep])
    if not key_parts:
        return np.empty(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32)
    keys = np.concatenate(key_parts)
    matrix = np.vstack(matrix_parts)
    order = np.argsort(keys, kind="stable")
    keys, matrix = keys[order], np.ascontiguousarray(matrix[order], dtype=np.float32)
    if keys.size and np.any(np.diff(keys) <= 0):
        return None
    picks = np.linspace(0, keys.size - 1, num=min(spot_checks, keys.size)).astype(int)
    checked_keys, checked = fetch_vectors(connection, table, [int(keys[i]) for i in picks], dim)
    if not np.array_equal(checked_keys, keys[picks]) or not np.array_equal(checked, matrix[picks]):
        return None
    return keys, matrix
