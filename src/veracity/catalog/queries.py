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
from typing import Any, Protocol

from ..model.contracts import Chunk, Document, Status
from ..model.errors import NotFoundError, StaleWriteError, ValidationError
from .rows import CHUNK_COLUMNS, chunk_of, insert_document, insert_documents, now_text, select_documents
from .sql import dialect_of, in_values
from .store import (
    NewDocument,
    PutError,
    check_new,
    check_replacement,
    check_successor,
    independent_runs,
    iter_unique,
)

__all__ = ["CatalogQueries"]


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

    def put_documents(self, puts: Sequence[NewDocument]) -> list[PutError | None]: ...

    def _stored_states(self, puts: Sequence[NewDocument]) -> dict[str, tuple[str, Status]]: ...

    def _chunk_owners(self, chunk_ids: Sequence[str]) -> dict[str, str]: ...

    def _check_new_in_run(
        self, put: NewDocument, stored: dict[str, tuple[str, Status]], owners: dict[str, str]
    ) -> bool: ...

    def _retire(self, document_ids: Sequence[str], now: str) -> None: ...


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
        [error] = self.put_documents([NewDocument(document, chunks)])
        if error is not None:
            raise error

    def put_documents(self: _SqlStore, puts: Sequence[NewDocument]) -> list[PutError | None]:
        """See :meth:`veracity.catalog.store.Store.put_documents`.

        Per run of :func:`~veracity.catalog.store.independent_runs`: one statement reads which
        of the named documents are stored (id, source, status), one which of the chunk ids are
        taken; each put is checked in order against those and the run's earlier puts; then one
        statement retires the replaced active documents and one per table inserts the rest.
        """
        errors: list[PutError | None] = [None] * len(puts)
        with self.transaction():
            for run in independent_runs(puts):
                now = now_text()
                stored = self._stored_states([put for _, put in run])
                owners = self._chunk_owners([chunk.chunk_id for _, put in run for chunk in put.chunks])
                inserts: list[tuple[Document, Sequence[Chunk]]] = []
                retire: list[str] = []
                for place, put in run:
                    try:
                        if put.replaces is not None:
                            if put.replaces not in stored:
                                raise NotFoundError(f"no document {put.replaces!r} in the catalog")
                            check_replacement(put.replaces, stored[put.replaces][0], put.document)
                        if self._check_new_in_run(put, stored, owners):
                            inserts.append((put.document, put.chunks))
                            owners.update((chunk.chunk_id, put.document.document_id) for chunk in put.chunks)
                    except (ValidationError, NotFoundError) as exc:
                        errors[place] = exc
                        continue
                    if put.replaces is not None and stored[put.replaces][1] is Status.ACTIVE:
                        retire.append(put.replaces)
                self._retire(retire, now)
                insert_documents(self.connection, inserts, now)
        return errors

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

    def _stored_states(self: _SqlStore, puts: Sequence[NewDocument]) -> dict[str, tuple[str, Status]]:
        """``document_id`` → ``(source_id, status)`` of the stored documents ``puts`` name."""
        ids = sorted(
            {put.document.document_id for put in puts} | {put.replaces for put in puts if put.replaces}
        )
        where, bound = in_values(self.connection, "document_id", ids)
        rows = self.connection.execute(
            f"SELECT document_id, source_id, status FROM documents WHERE {where}", (bound,)
        )
        return {str(row[0]): (str(row[1]), Status(row[2])) for row in rows}

    def _chunk_owners(self: _SqlStore, chunk_ids: Sequence[str]) -> dict[str, str]:
        """``chunk_id`` → ``document_id`` of the stored chunks among ``chunk_ids``."""
        if not chunk_ids:
            return {}
        where, bound = in_values(self.connection, "chunk_id", sorted(set(chunk_ids)))
        rows = self.connection.execute(f"SELECT chunk_id, document_id FROM chunks WHERE {where}", (bound,))
        return {str(row[0]): str(row[1]) for row in rows}

    def _check_new_in_run(
        self: _SqlStore,
        put: NewDocument,
        stored: dict[str, tuple[str, Status]],
        owners: dict[str, str],
    ) -> bool:
        """:func:`~veracity.catalog.store.check_new` of one put of a run, from what the run read
        (``stored``) and the chunks stored or put before it (``owners``)."""
        document = put.document

        def found() -> tuple[Document, list[Chunk]] | None:
            if document.document_id not in stored:
                return None
            stored_document = self._select_documents("document_id = ?", (document.document_id,))[0]
            return stored_document, self.get_chunks(document.document_id)

        def owner(chunk_ids: Sequence[str]) -> tuple[str, str] | None:
            taken = sorted(chunk_id for chunk_id in chunk_ids if chunk_id in owners)
            return (taken[0], owners[taken[0]]) if taken else None  # the first by id, as one SELECT would

        return check_new(document, put.chunks, found, owner)

    def _retire(self: _SqlStore, document_ids: Sequence[str], now: str) -> None:
        """``active`` → ``retired`` for each of ``document_ids`` (all active), as a supersede does."""
        if not document_ids:
            return
        where, bound = in_values(self.connection, "document_id", document_ids)
        self.connection.execute(
            "UPDATE documents SET status = ?, catalog_revision = catalog_revision + 1, updated_at = ? "
            f"WHERE {where} AND status = ?",
            (Status.RETIRED.value, now, bound, Status.ACTIVE.value),
        )
        if self.connection.changes() != len(document_ids):  # cannot happen under the write lock
            raise StaleWriteError("a replaced document changed during the update; retry")

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
