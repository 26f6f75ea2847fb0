"""``vector(dim)`` values between numpy and PostgreSQL.

Vectors go in as pgvector's text form with every float32 written exactly
(``repr`` of the value as a double reads back as the same float32), and come
out in pgvector's binary form (``int16`` dimension, ``int16`` unused, then
big-endian ``float32``), loaded straight into numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["fetch_vectors", "vector_literal"]


def vector_literal(row: npt.NDArray[np.float32]) -> str:
    """``[x1,x2,…]``: pgvector's text form of one vector, exact for float32."""
    return "[" + ",".join(map(repr, np.asarray(row, dtype=np.float32).astype(np.float64).tolist())) + "]"


def _decode(data: bytes | memoryview) -> npt.NDArray[np.float32]:
    buffer = bytes(data)
    dim = int.from_bytes(buffer[:2], "big")
    return np.frombuffer(buffer, dtype=">f4", count=dim, offset=4).astype(np.float32)


def fetch_vectors(
    raw: Any, sql: str, params: Sequence[Any], dim: int
) -> tuple[list[tuple[Any, ...]], npt.NDArray[np.float32]]:
    """Run ``sql`` (``%s`` parameters; its last column a vector) on the psycopg connection ``raw``.

    Returns the other columns of each row and the vectors as one ``(rows, dim)`` matrix.
    """
    with raw.cursor(binary=True) as cursor:
        cursor.execute(sql, tuple(params))
        rows = cursor.fetchall()
    if not rows:
        return [], np.zeros((0, dim), dtype=np.float32)
    matrix = np.vstack([_decode(row[-1]) for row in rows])
    return [tuple(row[:-1]) for row in rows], matrix
