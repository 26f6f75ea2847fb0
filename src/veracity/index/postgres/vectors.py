"""``vector(dim)`` values between numpy and PostgreSQL.

Vectors come out, and go in by ``COPY``, in pgvector's binary form (``int16``
dimension, ``int16`` unused, then big-endian ``float32``): exact, and no text to
format or parse (writing 512 floats as text cost more than the row's insert).
A single vector in a query is pgvector's text form, every float32 written
exactly (``repr`` of the value as a double reads back as the same float32).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "BINARY_COPY_HEADER",
    "BINARY_COPY_TRAILER",
    "binary_text_field",
    "copy_vector_rows",
    "fetch_vectors",
    "vector_literal",
]

BINARY_COPY_HEADER: Final = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
BINARY_COPY_TRAILER: Final = struct.pack(">h", -1)


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


def binary_text_field(value: str) -> bytes:
    """One text field of a binary ``COPY`` row: its UTF-8 length, then its bytes."""
    data = value.encode("utf-8")
    return struct.pack(">i", len(data)) + data


def copy_vector_rows(
    raw: Any, table: str, rows: Iterable[tuple[int, str, int, str, npt.NDArray[np.float32]]]
) -> int:
    """``COPY table (chunk_key, doc_tenant, doc_key, status, bits, embedding) FROM STDIN (FORMAT binary)``.

    ``bits`` is each vector's sign bits as pgvector's ``binary_quantize`` makes them (bit ``j`` set
    when component ``j`` is positive, the first component in the high bit of the first byte).
    ``raw`` is a psycopg connection. Returns the number of rows written.
    """
    count = 0
    statement = (
        f"COPY {table} (chunk_key, doc_tenant, doc_key, status, bits, embedding) FROM STDIN (FORMAT binary)"
    )
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        copy.write(BINARY_COPY_HEADER)
        for chunk_key, tenant, doc_key, status, vector in rows:
            values = np.asarray(vector, dtype=">f4")
            bits = np.packbits(values > 0).tobytes()
            copy.write(
                struct.pack(">hiq", 6, 8, int(chunk_key)) + binary_text_field(tenant)
                + struct.pack(">iq", 8, int(doc_key)) + binary_text_field(status)
                + struct.pack(">ii", 4 + len(bits), values.size) + bits
                + struct.pack(">ihh", 4 + 4 * values.size, values.size, 0) + values.tobytes()
            )  # fmt: skip
            count += 1
        copy.write(BINARY_COPY_TRAILER)
    return count
