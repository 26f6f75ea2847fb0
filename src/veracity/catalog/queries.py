"""Store methods whose SQL and logic are the same on SQLite and PostgreSQL.

Both stores speak ``?`` placeholders through their ``connection`` (the
PostgreSQL connection wrapper translates them), so reads by key, puts,
supersedes, status changes, roles and deletion are written once here. Where
the engines differ, the dialect is read from the connection
(:func:`~veracity.catalog.sql.dialect_of`): a list bound as one parameter
(:func:`~veracity.catalog.sql.in_values`) and the row lock of a
compare-and-set. Locking, transactions and snapshots stay in each store.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Protocol

from ..model.contracts import Chunk, Document, Status
from ..model.errors import NotFoundError, StaleWriteError
from .rows import CHUNK_COLUMNS, chunk_of, insert_document, select_documents
from .sql import dialect_of, in_values
from .store import check_new, check_successor, iter_unique

__all__ = ["CatalogQueries", "now_text"]


def now_text() -> str:
    """Now as the catalog stores moments: ISO-8601 UTC with microseconds (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class _SqlStore(Protocol):
    @property
    def connection(self) -> Any: ...

    def read(self) -> AbstractContextManager[Any]: ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def get_chunks(self, document_id: str) -> list[Chunk]: ...

    def _select_documents(self, where: str, params: tuple[Any, ...]) -> list[Document]: ...

    def _cas(self, document_id: str, expected_catalog_revision: int) -> tuple[Status, int]: ...

    def _apply_status(self, document_id: str, status: Status, revision: int, new_status: Status) -> int: ...

    def _require(self, document_id: str, *, lock: bool = False) -> tuple[Status, int]: ...

    def _check_new(self, document: Document, chunks: Sequence[Chunk]) -> bool: ...


class CatalogQueries:
    """Mixin for a SQL store: documents, chunks, statuses and roles (see the module docstring)."""

    # -- reads ---------------------------------------------------------------------------

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

    def catalog_revision(self: _SqlStore, document_id: str) -> int:
        """See :meth:`veracity.catalog.store.Store.catalog_revision`."""
        with self.read():
            return self._require(document_id)[1]

    # -- writes --------------------------------------------------------------------------

    def put_document(self: _SqlStore, document: Document, chunks: Sequence[Chunk]) -> None:
        """See :meth:`veracity.catalog.store.Store.put_document`."""
        with self.transaction():
            if self._check_new(document, chunks):
                insert_document(self.connection, document, chunks, now_text())

    def supersede(
        self: _SqlStore,
        old_document_id: str,
        new_document: Document,
        new_chunks: Sequence[Chunk],
        expected_catalog_revision: int,
    ) -> int:
        """See :meth:`veracity.catalog.store.Store.supersede`."""
        with self.transaction():
            status, revision = self._cas(old_document_id, expected_catalog_revision)
            old = self._select_documents("document_id = ?", (old_document_id,))[0]
            check_successor(old, new_document)
            target = Status.RETIRED if status is Status.ACTIVE else status
            revision = self._apply_status(old_document_id, status, revision, target)
            if self._check_new(new_document, new_chunks):
                insert_document(self.connection, new_document, new_chunks, now_text())
            return revision

    def set_status(
        self: _SqlStore, document_id: str, new_status: Status, expected_catalog_revision: int
    ) -> int:
        """See :meth:`veracity.catalog.store.Store.set_status`."""
        new_status = Status(new_status)
        with self.transaction():
            status, revision = self._cas(document_id, expected_catalog_revision)
            return self._apply_status(document_id, status, revision, new_status)

    def delete_document(self: _SqlStore, document_id: str) -> None:
        """See :meth:`veracity.catalog.store.Store.delete_document`."""
        with self.transaction():
            self._require(document_id)
            self.connection.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))

    # -- roles ---------------------------------------------------------------------------

    def put_roles(self: _SqlStore, tenant: str, roles: frozenset[str] | set[str] | Sequence[str]) -> None:
        """See :meth:`veracity.catalog.store.Store.put_roles`."""
        names = list(iter_unique(roles, tenant=tenant))
        with self.transaction():
            self.connection.execute("DELETE FROM tenant_roles WHERE tenant = ?", (tenant,))
            self.connection.executemany(
                "INSERT INTO tenant_roles (tenant, role) VALUES (?, ?)", [(tenant, role) for role in names]
            )

    def roles(self: _SqlStore, tenant: str) -> frozenset[str]:
        """See :meth:`veracity.catalog.store.Store.roles`."""
        with self.read():
            rows = self.connection.execute("SELECT role FROM tenant_roles WHERE tenant = ?", (tenant,))
            names = frozenset(str(row[0]) for row in rows)
        return names

    # -- internals -----------------------------------------------------------------------

    def _select_documents(self: _SqlStore, where: str, params: tuple[Any, ...]) -> list[Document]:
        """Documents matching a fixed ``where`` clause (callers pass only literal SQL)."""
        return select_documents(self.connection, where, params)

    def _require(self: _SqlStore, document_id: str, *, lock: bool = False) -> tuple[Status, int]:
        """The document's status and catalog revision; ``NotFoundError`` if absent.

        ``lock``: on PostgreSQL, lock the row until the transaction ends, so a compare-and-set
        holds against concurrent writers (SQLite's write transaction already excludes them all).
        """
        sql = "SELECT status, catalog_revision FROM documents WHERE document_id = ?"
        if lock and dialect_of(self.connection) == "postgresql":
            sql += " FOR UPDATE"
        row = self.connection.execute(sql, (document_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no document {document_id!r} in the catalog")
        return Status(row[0]), int(row[1])

    def _cas(self: _SqlStore, document_id: str, expected: int) -> tuple[Status, int]:
        status, revision = self._require(document_id, lock=True)
        if revision != expected:
            raise StaleWriteError(
                f"document {document_id!r} is at catalog revision {revision}, "
                f"not {expected}; read it again and retry"
            )
        return status, revision

    def _apply_status(self: _SqlStore, document_id: str, old: Status, revision: int, new: Status) -> int:
        if old is new:
            return revision
        self.connection.execute(
            "UPDATE documents SET status = ?, catalog_revision = catalog_revision + 1, "
            "updated_at = ? WHERE document_id = ? AND catalog_revision = ?",
            (new.value, now_text(), document_id, revision),
        )
        if self.connection.changes() != 1:  # cannot happen under the write lock; refuse if it does
            raise StaleWriteError(f"document {document_id!r} changed during the update; retry")
        return revision + 1

    def _check_new(self: _SqlStore, document: Document, chunks: Sequence[Chunk]) -> bool:
        """See :func:`~veracity.catalog.store.check_new` (the first chunk already owned, by chunk id)."""

        def stored() -> tuple[Document, list[Chunk]] | None:
            found = self._select_documents("document_id = ?", (document.document_id,))
            return (found[0], self.get_chunks(document.document_id)) if found else None

        def owner(chunk_ids: Sequence[str]) -> tuple[str, str] | None:
            where, ids = in_values(self.connection, "chunk_id", chunk_ids)
            sql = f"SELECT chunk_id, document_id FROM chunks WHERE {where} ORDER BY chunk_id LIMIT 1"
            row = self.connection.execute(sql, (ids,)).fetchone()
            return None if row is None else (str(row[0]), str(row[1]))

        return check_new(document, chunks, stored, owner)
