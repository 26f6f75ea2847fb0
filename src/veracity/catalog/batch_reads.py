"""Store reads of many documents or chunks by id, one statement each (SQLite and PostgreSQL).

The return gate re-checks every candidate of an ask against the live catalog. Read one
by one that was five statements per document and one per chunk, each a round trip to a
PostgreSQL server; these read all of an ask's candidates in a constant number. A list of
ids is bound as one parameter (:func:`~veracity.catalog.sql.in_values`), and a document's
roles and facts come in its own row, aggregated as JSON arrays in their stored order
(PostgreSQL's ``json_agg``, SQLite's ``json_group_array``), so a document is one row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from ..model.contracts import Chunk, Document, FactAnnotation
from .rows import CHUNK_COLUMNS, DOCUMENT_COLUMNS, chunk_of, document_of
from .sql import dialect_of, rows_among

__all__ = ["BatchReads"]

_AGGREGATE: Final = {"postgresql": "json_agg", "sqlite": "json_group_array"}
_ARRAY: Final = {"postgresql": "json_build_array", "sqlite": "json_array"}


class _SqlStore(Protocol):
    @property
    def connection(self) -> Any: ...

    def read(self) -> AbstractContextManager[Any]: ...


class BatchReads:
    """Mixin for a SQL store: ``get_documents``, ``catalog_revisions`` and ``get_chunks_by_id``."""

    def get_documents(self: _SqlStore, document_ids: Sequence[str]) -> dict[str, Document]:
        """See :meth:`veracity.catalog.store.Store.get_documents`."""
        dialect = dialect_of(self.connection)
        aggregate, array = _AGGREGATE[dialect], _ARRAY[dialect]
        select = (
            f"SELECT {DOCUMENT_COLUMNS}, "
            f"(SELECT {aggregate}(r.role ORDER BY r.ordinal) FROM document_roles AS r "
            "WHERE r.document_id = d.document_id), "
            f"(SELECT {aggregate}({array}(f.fact_id, f.quote, f.stance) ORDER BY f.ordinal) "
            "FROM document_facts AS f WHERE f.document_id = d.document_id) "
            "FROM documents AS d"
        )
        with self.read():
            rows = rows_among(self.connection, select, "document_id", sorted(set(document_ids)))
        found: dict[str, Document] = {}
        for row in rows:
            *columns, roles, facts = row
            document = document_of(
                columns,
                [str(role) for role in _array(roles)],
                [FactAnnotation(fact_id=f, quote=q, stance=s) for f, q, s in _array(facts)],
            )
            found[document.document_id] = document
        return found

    def catalog_revisions(self: _SqlStore, document_ids: Sequence[str]) -> dict[str, int]:
        """See :meth:`veracity.catalog.store.Store.catalog_revisions`."""
        select = "SELECT document_id, catalog_revision FROM documents"
        with self.read():
            rows = rows_among(self.connection, select, "document_id", sorted(set(document_ids)))
        return {str(row[0]): int(row[1]) for row in rows}

    def get_chunks_by_id(self: _SqlStore, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """See :meth:`veracity.catalog.store.Store.get_chunks_by_id`."""
        with self.read():
            rows = rows_among(
                self.connection, f"SELECT {CHUNK_COLUMNS} FROM chunks", "chunk_id", sorted(set(chunk_ids))
            )
        chunks = (chunk_of(row) for row in rows)
        return {chunk.chunk_id: chunk for chunk in chunks}


def _array(value: Any) -> list[Any]:
    """A JSON array column as a list: PostgreSQL's driver decodes ``json`` (``NULL`` when
    nothing was aggregated), SQLite returns its text."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else list(json.loads(value))
