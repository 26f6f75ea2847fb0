"""What index verification reads differently in PostgreSQL (the checks themselves are shared).

:mod:`veracity.index.sqlite.verify` runs the same named checks on either
backend; for PostgreSQL it asks this module for the lexical counts (postings
instead of FTS5 rows), the vectors' norms (computed by pgvector) and one stored
vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..sqlite.tables import IndexTables
from ..sqlite.writer import VectorModel
from .tables import postings_table
from .vectors import fetch_vectors

__all__ = ["ROLES_SQL", "lexical_counts", "max_norm_error", "stored_vector"]

ROLES_SQL = (
    "(SELECT coalesce(string_agg(role, ',' ORDER BY role), '') FROM {roles} AS r WHERE r.doc_key = d.doc_key)"
)
"""The sorted roles of an indexed document ``d``, comma-joined (SQLite's form uses ``group_concat``)."""


def lexical_counts(connection: Any, tables: IndexTables) -> tuple[int, int, list[str]]:
    """``(chunks, postings, problems)``: per tenant, the postings' term frequencies add up to the tokens.

    Postings of removed chunks, kept in their segment until it is merged, are not counted.
    """
    postings = postings_table(tables)
    problems: list[str] = []
    total_chunks = total_postings = 0
    rows = connection.execute(
        f"SELECT t.tenant, (SELECT count(*) FROM {tables.chunks} AS c WHERE c.doc_tenant = t.tenant), "
        f"(SELECT coalesce(sum(n_tokens), 0) FROM {tables.chunks} AS c WHERE c.doc_tenant = t.tenant), "
        "e.entries, e.frequencies, e.foreign_entries "
        f"FROM {tables.tenants} AS t CROSS JOIN LATERAL ("
        "  SELECT count(*) FILTER (WHERE c.doc_tenant = t.tenant) AS entries,"
        "         coalesce(sum(u.tf) FILTER (WHERE c.doc_tenant = t.tenant), 0) AS frequencies,"
        "         count(*) FILTER (WHERE c.doc_tenant <> t.tenant) AS foreign_entries"
        f"  FROM {postings} AS p CROSS JOIN LATERAL unnest(p.keys, p.tfs) AS u (k, tf)"
        f"  JOIN {tables.chunks} AS c ON c.chunk_key = u.k WHERE p.doc_tenant = t.tenant) AS e "
        "ORDER BY t.tenant"
    ).fetchall()
    for tenant, chunks, tokens, entries, frequencies, foreign in rows:
        total_chunks, total_postings = total_chunks + int(chunks), total_postings + int(entries)
        if int(frequencies) != int(tokens) or int(foreign):
            problems.append(
                f"{tenant}: postings count {frequencies} tokens for {tokens} in {chunks} chunks, "
                f"{foreign} postings of another tenant's chunks"
            )
    return total_chunks, total_postings, problems


def max_norm_error(connection: Any, model: VectorModel) -> float:
    """The largest ``|norm - 1|`` over the stored vectors (0 when there are none)."""
    row = connection.execute(f"SELECT max(abs(vector_norm(embedding) - 1)) FROM {model.table}").fetchone()
    return float(row[0]) if row and row[0] is not None else 0.0


def stored_vector(connection: Any, model: VectorModel, chunk_key: int) -> npt.NDArray[np.float32]:
    """The stored vector of one chunk (an empty matrix when it has none)."""
    with connection.raw() as raw:
        _, matrix = fetch_vectors(
            raw,
            f"SELECT chunk_key, embedding FROM {model.table} WHERE chunk_key = %s",
            (chunk_key,),
            model.dim,
        )
    return matrix
