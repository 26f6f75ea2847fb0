"""Postings in segments: written per batch and tenant, merged by size, read as numpy arrays.

A write batch adds one segment per tenant: one row per term with the chunk keys
that hold it and the term's frequency in each (:func:`write_segment`). When
:data:`MERGE_FACTOR` segments of a tenant fall in the same size tier (tier
``t`` holds segments of ``TIER_BASE × MERGE_FACTOR^t`` chunks and up), they are
merged into one in SQL (:func:`merge_segments`), dropping the postings of
chunks the index no longer holds. So a term has at most about
``(MERGE_FACTOR - 1) × tiers`` rows whatever the number of batches, each
posting is rewritten once per tier, and a removal never rewrites postings (its
keys are dropped at the next merge; readers keep only keys the index holds,
and keys are never reused: :func:`next_chunk_key`).
"""

from __future__ import annotations

import math
import struct
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from itertools import count
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from psycopg.adapt import Loader
from psycopg.pq import Format

from ..sqlite.fts import Postings
from ..sqlite.tables import IndexTables
from .tables import postings_table, segments_table
from .vectors import BINARY_COPY_HEADER, BINARY_COPY_TRAILER, binary_text_field

__all__ = [
    "MERGE_FACTOR",
    "TIER_BASE",
    "merge_segments",
    "next_chunk_key",
    "read_segment_postings",
    "tier",
    "write_segment",
]

MERGE_FACTOR: Final = 8
"""Segments of one tier merged at once (and the growth from one tier to the next)."""

TIER_BASE: Final = 256
"""Chunks of the smallest tier's largest segment (a batch of 2,048 chunks over a few tenants)."""

_INT8_ARRAY, _INT4_ARRAY = 1016, 1007  # pg_type oids of bigint[] and integer[]


def tier(n_chunks: int) -> int:
    """The size tier of a segment of ``n_chunks`` chunks: 0 below ``TIER_BASE × MERGE_FACTOR``."""
    if n_chunks < TIER_BASE * MERGE_FACTOR:
        return 0
    return int(math.log(n_chunks / TIER_BASE, MERGE_FACTOR))


def next_chunk_key(connection: Any, tables: IndexTables) -> int:
    """The first chunk key a new batch may use: above every key a chunk or a segment ever held."""
    row = connection.execute(
        f"SELECT greatest((SELECT max(chunk_key) FROM {tables.chunks}), "
        f"(SELECT max(last_key) FROM {segments_table(tables)}))"
    ).fetchall()[0]
    return int(row[0] or 0) + 1


def write_segment(
    connection: Any, tables: IndexTables, tenant: str, chunks: Sequence[tuple[int, Sequence[str]]]
) -> None:
    """One new segment of ``tenant``: the postings of ``chunks`` (``(chunk_key, tokens)``, keys ascending)."""
    if not chunks:
        return
    segment = _new_segment(connection, tables, tenant, len(chunks), chunks[0][0], chunks[-1][0])
    statement = (
        f"COPY {postings_table(tables)} (doc_tenant, term, segment, keys, tfs) FROM STDIN (FORMAT binary)"
    )
    data = segment_copy_rows(tenant, segment, chunks)
    with connection.raw() as raw, raw.cursor() as cursor, cursor.copy(statement) as copy:
        copy.write(data)


def segment_copy_rows(tenant: str, segment: int, chunks: Sequence[tuple[int, Sequence[str]]]) -> bytes:
    """The binary ``COPY`` data of one segment: a row per term, chunk keys ascending with their counts.

    Counted in numpy (a batch's terms mostly hold a few chunks each, so per-term Python work is what
    costs): each token gets its term's number, (term, chunk) pairs are counted once sorted, and each
    row's arrays are slices of two buffers encoded at once.
    """
    numbers: defaultdict[str, int] = defaultdict(count().__next__)  # term -> number, first seen first
    flat: list[int] = []
    for _, tokens in chunks:
        flat.extend(map(numbers.__getitem__, tokens))
    size = len(chunks)
    positions = np.repeat(np.arange(size, dtype=np.int64), [len(tokens) for _, tokens in chunks])
    pairs, frequencies = np.unique(np.asarray(flat, dtype=np.int64) * size + positions, return_counts=True)
    term_of, chunk_of = np.divmod(pairs, size)
    keys = np.empty(pairs.size, dtype=[("length", ">i4"), ("value", ">i8")])
    keys["length"], keys["value"] = 8, np.asarray([key for key, _ in chunks], dtype=np.int64)[chunk_of]
    tfs = np.empty(pairs.size, dtype=[("length", ">i4"), ("value", ">i4")])
    tfs["length"], tfs["value"] = 4, frequencies
    key_bytes, tf_bytes = keys.tobytes(), tfs.tobytes()
    first = np.flatnonzero(np.concatenate(([True], term_of[1:] != term_of[:-1])))
    starts, terms = first.tolist(), [*numbers]
    names = [terms[t] for t in term_of[first].tolist()]
    prefix = struct.pack(">h", 5) + binary_text_field(tenant)
    number = struct.pack(">iq", 8, segment)
    rows = [BINARY_COPY_HEADER]
    for name, start, end in zip(names, starts, [*starts[1:], pairs.size], strict=True):
        n = end - start
        rows.append(
            prefix + binary_text_field(name) + number
            + struct.pack(">6i", 20 + 12 * n, 1, 0, 20, n, 1) + key_bytes[12 * start : 12 * end]
            + struct.pack(">6i", 20 + 8 * n, 1, 0, 23, n, 1) + tf_bytes[8 * start : 8 * end]
        )  # fmt: skip
    rows.append(BINARY_COPY_TRAILER)
    return b"".join(rows)


def _new_segment(
    connection: Any, tables: IndexTables, tenant: str, n_chunks: int, first: int, last: int
) -> int:
    segments = segments_table(tables)
    segment = int(
        connection.execute(f"SELECT coalesce(max(segment), 0) + 1 FROM {segments}").fetchall()[0][0]
    )
    connection.execute(
        f"INSERT INTO {segments} (segment, doc_tenant, n_chunks, first_key, last_key) VALUES (?, ?, ?, ?, ?)",
        (segment, tenant, n_chunks, first, last),
    )
    return segment


_MERGE = """
INSERT INTO {postings} (doc_tenant, term, segment, keys, tfs)
SELECT p.doc_tenant, p.term, ?, array_agg(u.k ORDER BY u.k), array_agg(u.tf ORDER BY u.k)
FROM {postings} AS p CROSS JOIN LATERAL unnest(p.keys, p.tfs) AS u (k, tf)
WHERE p.doc_tenant = ? AND p.segment = ANY(?)
  AND EXISTS (SELECT 1 FROM {chunks} AS c WHERE c.chunk_key = u.k)
GROUP BY p.doc_tenant, p.term
"""


def merge_segments(connection: Any, tables: IndexTables, tenant: str) -> int:
    """Merge ``tenant``'s segments tier by tier while a tier holds ``MERGE_FACTOR``; return merges done."""
    segments, postings = segments_table(tables), postings_table(tables)
    merges = 0
    while True:
        rows = connection.execute(
            f"SELECT segment, n_chunks, first_key, last_key FROM {segments} "
            "WHERE doc_tenant = ? ORDER BY segment",
            (tenant,),
        ).fetchall()
        by_tier: dict[int, list[tuple[int, int, int, int]]] = {}
        for row in rows:
            by_tier.setdefault(tier(int(row[1])), []).append(tuple(int(v) for v in row))  # type: ignore[arg-type]
        full = sorted(t for t, members in by_tier.items() if len(members) >= MERGE_FACTOR)
        if not full:
            return merges
        members = by_tier[full[0]]
        merging = [m[0] for m in members]
        merged = _new_segment(
            connection, tables, tenant, sum(m[1] for m in members),
            min(m[2] for m in members), max(m[3] for m in members),
        )  # fmt: skip
        connection.execute(_MERGE.format(postings=postings, chunks=tables.chunks), (merged, tenant, merging))
        connection.execute(f"DELETE FROM {postings} WHERE segment = ANY(?)", (merging,))
        connection.execute(f"DELETE FROM {segments} WHERE segment = ANY(?)", (merging,))
        merges += 1


class _Int8Array(Loader):
    """``bigint[]`` in binary as a numpy array (psycopg would build a list of Python ints)."""

    format = Format.BINARY
    _element = np.dtype([("length", ">i4"), ("value", ">i8")])

    def load(self, data: Any) -> npt.NDArray[np.int64]:
        return _array(bytes(data), self._element)


class _Int4Array(_Int8Array):
    _element = np.dtype([("length", ">i4"), ("value", ">i4")])


def _array(data: bytes, element: np.dtype[Any]) -> npt.NDArray[np.int64]:
    """A one-dimensional array without nulls from PostgreSQL's binary array format."""
    dimensions = int.from_bytes(data[0:4], "big")
    if dimensions == 0:
        return np.empty(0, dtype=np.int64)
    if dimensions != 1 or int.from_bytes(data[4:8], "big"):
        raise ValueError("postings arrays are one-dimensional without nulls")
    return np.frombuffer(data, dtype=element, offset=20)["value"].astype(np.int64)


def read_segment_postings(
    raw: Any, tables: IndexTables, tenant: str, terms: Sequence[str], keys: npt.NDArray[np.int64]
) -> Iterator[Postings]:
    """Each of ``terms`` (distinct, sorted) with its postings in ``tenant``'s segments.

    Only the keys among ``keys`` (the tenant's indexed chunks, ascending) are kept: a removed
    chunk's postings wait in their segment for its next merge.
    """
    parts: dict[str, list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]] = {t: [] for t in terms}
    if terms:
        with raw.cursor(binary=True) as cursor:
            cursor.adapters.register_loader(_INT8_ARRAY, _Int8Array)
            cursor.adapters.register_loader(_INT4_ARRAY, _Int4Array)
            cursor.execute(
                f"SELECT term, keys, tfs FROM {postings_table(tables)} "
                "WHERE doc_tenant = %s AND term = ANY(%s::text[]) ORDER BY term, segment",
                (tenant, list(terms)),
            )
            for term, found, tfs in cursor.fetchall():
                parts[str(term)].append((found, tfs))
    for term in terms:
        yield _joined(term, parts[term], keys)


def _joined(
    term: str,
    parts: Sequence[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]],
    keys: npt.NDArray[np.int64],
) -> Postings:
    if not parts:
        return Postings(term, np.empty(0, np.int64), np.empty(0, np.int64))
    found = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
    tfs = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
    if found.size > 1 and not bool((found[1:] > found[:-1]).all()):
        order = np.argsort(found, kind="stable")
        found, tfs = found[order], tfs[order]
    at = np.minimum(np.searchsorted(keys, found), max(keys.size - 1, 0))
    live = keys[at] == found if keys.size else np.zeros(found.size, dtype=bool)
    if not live.all():
        found, tfs = found[live], tfs[live]
    return Postings(term, found, tfs)


def segment_counts(connection: Any, tables: IndexTables) -> Mapping[str, int]:
    """Segments per tenant (for statistics and tests)."""
    return {
        str(tenant): int(n)
        for tenant, n in connection.execute(
            f"SELECT doc_tenant, count(*) FROM {segments_table(tables)} GROUP BY doc_tenant"
        ).fetchall()
    }
