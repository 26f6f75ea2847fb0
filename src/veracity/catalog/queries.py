"""Store methods whose SQL and logic are the same on SQLite and PostgreSQL.

Both stores speak ``?`` placeholders through their ``connection`` (the
PostgreSQL connection wrapper translates them), so the reads by key and the
status changes below are written once; what differs per engine (locking,
compare-and-set, how a status change is applied) stays in each store.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..model.contracts import Chunk, Document, Status
from ..model.errors import NotFoundError
from .rows import CHUNK_COLUMNS, chunk_of

__all__ = ["CatalogQueries"]


class _SqlStore(Protocol):
    @property
    def connection(self) -> Any: ...

    def read(self) -> AbstractContextManager[Any]: ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def _select_documents(self, where: str, params: tuple[Any, ...]) -> list[Document]: ...

    def _cas(self, document_id: str, expected_catalog_revision: int) -> tuple[Status, int]: ...

    def _apply_status(self, document_id: str, status: Status, revision: int, new_status: Status) -> int: ...

    def _require(self, document_id: str) -> tuple[Status, int]: ...


class CatalogQueries:
    """Mixin for a SQL store: reads by key, status changes, deletion (see the module docstring)."""

    def get_document(self: _SqlStore, document_id: str) -> Document:
        """See :meth:`veracity.catalog.store.Store.get_document`."""
        with self.read():
            found = self._select_documents("document_id = ?", (document_id,))
        if not found:
            raise NotFoundError(f"no document {document_id!r} in the catalog")
        return found[0]

    def find_documents(
        self: _SqlStore, tenant: str | None = None, source_id: str | None = None
    ) -> list[Document]:
        """See :meth:`veracity.catalog.store.Store.find_documents`."""
        conditions: list[str] = []
        params: list[str] = []
        if tenant is not None:
            conditions.append("tenant = ?")
            params.append(tenant)
        if source_id is not None:
            conditions.append("source_id = ?")
            params.append(source_id)
        with self.read():
            return self._select_documents(" AND ".join(conditions) or "TRUE", tuple(params))

    def get_chunks(self: _SqlStore, document_id: str) -> list[Chunk]:
        """See :meth:`veracity.catalog.store.Store.get_chunks`."""
        with self.read():
            self._require(document_id)
            rows = self.connection.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE document_id = ? ORDER BY ordinal", (document_id,)
            ).fetchall()
        return [chunk_of(row) for row in rows]

    def get_chunk(self: _SqlStore, chunk_id: str) -> Chunk:
        """See :meth:`veracity.catalog.store.Store.get_chunk`."""
        with self.read():
            row = self.connection.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id = ?", (chunk_id,)
            ).fetchone()
        if row is None:
            raise NotFoundError(f"no chunk {chunk_id!r} in the catalog")
        return chunk_of(row)

    def set_status(
        self: _SqlStore, document_id: str, new_status: Status, expected_catalog_revision: int
    ) -> int:
        """See :meth:`veracity.catalog.store.Store.set_status`."""
        new_status = Status(new_status)
        with self.transaction():
            status, revision = self._cas(document_id, expected_catalog_revision)
            return self._apply_status(document_id, status, revision, new_status)

    def catalog_revision(self: _SqlStore, document_id: str) -> int:
        """See :meth:`veracity.catalog.store.Store.catalog_revision`."""
        with self.read():
            return self._require(document_id)[1]

    def delete_document(self: _SqlStore, document_id: str) -> None:
        """See :meth:`veracity.catalog.store.Store.delete_document`."""
        with self.transaction():
            self._require(document_id)
            self.connection.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))

    def _require(self: _SqlStore, document_id: str) -> tuple[Status, int]:
        row = self.connection.execute(
            "SELECT status, catalog_revision FROM documents WHERE document_id = ?", (document_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no document {document_id!r} in the catalog")
        return Status(row[0]), int(row[1])
