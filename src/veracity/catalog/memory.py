"""``InMemoryStore``: a small, complete ``Store`` on plain dicts (the test fake).

Every write checks everything it needs before it mutates anything, so a
refused write leaves no trace. ``transaction()`` snapshots the dicts and puts
them back if the block raises. One re-entrant lock serializes all calls, so a
transaction is isolated from other threads.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from ..model.contracts import Chunk, Document, Status
from ..model.errors import NotFoundError, StaleWriteError, ValidationError
from .store import NewDocument, PutError, check_new, check_successor, iter_unique

__all__ = ["InMemoryStore"]


@dataclass(frozen=True, slots=True)
class _Row:
    document: Document
    catalog_revision: int
    seq: int
    chunk_ids: tuple[str, ...]


class InMemoryStore:
    """A ``Store`` held in memory; see :class:`veracity.catalog.store.Store` for the semantics."""

    def __init__(self) -> None:
        """An empty store."""
        self._rows: dict[str, _Row] = {}
        self._chunks: dict[str, Chunk] = {}
        self._roles: dict[str, frozenset[str]] = {}
        self._seq = 0
        self._lock = threading.RLock()

    # -- documents -----------------------------------------------------------

    def put_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """See :meth:`veracity.catalog.store.Store.put_document`."""
        with self._lock:
            if self._check_new(document, chunks):
                self._insert(document, chunks)

    def put_documents(self, puts: Sequence[NewDocument]) -> list[PutError | None]:
        """See :meth:`veracity.catalog.store.Store.put_documents` (one put after another here)."""
        errors: list[PutError | None] = []
        with self._lock:
            for put in puts:
                try:
                    if put.replaces is None:
                        self.put_document(put.document, put.chunks)
                    else:  # each write checks everything before it changes anything
                        revision = self.catalog_revision(put.replaces)
                        self.supersede(put.replaces, put.document, put.chunks, revision)
                except (ValidationError, NotFoundError) as exc:
                    errors.append(exc)
                else:
                    errors.append(None)
        return errors

    def get_document(self, document_id: str) -> Document:
        """See :meth:`veracity.catalog.store.Store.get_document`."""
        with self._lock:
            return self._row(document_id).document

    def find_documents(self, tenant: str | None = None, source_id: str | None = None) -> list[Document]:
        """See :meth:`veracity.catalog.store.Store.find_documents`."""
        with self._lock:
            rows = [
                row
                for row in self._rows.values()
                if (tenant is None or row.document.tenant == tenant)
                and (source_id is None or row.document.source_id == source_id)
            ]
        rows.sort(key=lambda row: (row.document.source_id, row.seq))
        return [row.document for row in rows]

    def get_chunks(self, document_id: str) -> list[Chunk]:
        """See :meth:`veracity.catalog.store.Store.get_chunks`."""
        with self._lock:
            row = self._row(document_id)
            chunks = [self._chunks[chunk_id] for chunk_id in row.chunk_ids]
        return sorted(chunks, key=lambda chunk: chunk.ordinal)

    def get_chunk(self, chunk_id: str) -> Chunk:
        """See :meth:`veracity.catalog.store.Store.get_chunk`."""
        with self._lock:
            try:
                return self._chunks[chunk_id]
            except KeyError:
                raise NotFoundError(f"no chunk {chunk_id!r} in the catalog") from None

    def set_status(self, document_id: str, new_status: Status, expected_catalog_revision: int) -> int:
        """See :meth:`veracity.catalog.store.Store.set_status`."""
        new_status = Status(new_status)
        with self._lock:
            row = self._cas(document_id, expected_catalog_revision)
            return self._apply_status(row, new_status)

    def catalog_revision(self, document_id: str) -> int:
        """See :meth:`veracity.catalog.store.Store.catalog_revision`."""
        with self._lock:
            return self._row(document_id).catalog_revision

    def supersede(
        self,
        old_document_id: str,
        new_document: Document,
        new_chunks: Sequence[Chunk],
        expected_catalog_revision: int,
    ) -> int:
        """See :meth:`veracity.catalog.store.Store.supersede`."""
        with self._lock:
            old = self._cas(old_document_id, expected_catalog_revision)
            check_successor(old.document, new_document)
            insert = self._check_new(new_document, new_chunks)
            # Everything is checked; from here on nothing can fail.
            status = Status.RETIRED if old.document.status is Status.ACTIVE else old.document.status
            revision = self._apply_status(old, status)
            if insert:
                self._insert(new_document, new_chunks)
            return revision

    def delete_document(self, document_id: str) -> None:
        """See :meth:`veracity.catalog.store.Store.delete_document`."""
        with self._lock:
            row = self._row(document_id)
            for chunk_id in row.chunk_ids:
                del self._chunks[chunk_id]
            del self._rows[document_id]

    # -- roles ---------------------------------------------------------------

    def put_roles(self, tenant: str, roles: frozenset[str] | set[str] | Sequence[str]) -> None:
        """See :meth:`veracity.catalog.store.Store.put_roles`."""
        names = frozenset(iter_unique(roles, tenant=tenant))
        with self._lock:
            if names:
                self._roles[tenant] = names
            else:
                self._roles.pop(tenant, None)

    def roles(self, tenant: str) -> frozenset[str]:
        """See :meth:`veracity.catalog.store.Store.roles`."""
        with self._lock:
            return self._roles.get(tenant, frozenset())

    # -- transactions --------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """See :meth:`veracity.catalog.store.Store.transaction`."""
        with self._lock:
            snapshot = (dict(self._rows), dict(self._chunks), dict(self._roles), self._seq)
            try:
                yield
            except BaseException:
                self._rows, self._chunks, self._roles, self._seq = snapshot
                raise

    @contextmanager
    def read(self) -> Iterator[None]:
        """See :meth:`veracity.catalog.store.Store.read` (the lock keeps writers out meanwhile)."""
        with self._lock:
            yield

    # -- internals -----------------------------------------------------------

    def _row(self, document_id: str) -> _Row:
        try:
            return self._rows[document_id]
        except KeyError:
            raise NotFoundError(f"no document {document_id!r} in the catalog") from None

    def _cas(self, document_id: str, expected: int) -> _Row:
        row = self._row(document_id)
        if row.catalog_revision != expected:
            raise StaleWriteError(
                f"document {document_id!r} is at catalog revision {row.catalog_revision}, "
                f"not {expected}; read it again and retry"
            )
        return row

    def _apply_status(self, row: _Row, status: Status) -> int:
        if row.document.status is status:
            return row.catalog_revision
        updated = dataclasses.replace(
            row,
            document=dataclasses.replace(row.document, status=status),
            catalog_revision=row.catalog_revision + 1,
        )
        self._rows[row.document.document_id] = updated
        return updated.catalog_revision

    def _check_new(self, document: Document, chunks: Sequence[Chunk]) -> bool:
        """See :func:`~veracity.catalog.store.check_new` (the first chunk already owned, in put order)."""

        def stored() -> tuple[Document, list[Chunk]] | None:
            row = self._rows.get(document.document_id)
            return None if row is None else (row.document, [self._chunks[c] for c in row.chunk_ids])

        def owner(chunk_ids: Sequence[str]) -> tuple[str, str] | None:
            taken = (c for c in chunk_ids if c in self._chunks)
            first = next(taken, None)
            return None if first is None else (first, self._chunks[first].document_id)

        return check_new(document, chunks, stored, owner)

    def _insert(self, document: Document, chunks: Sequence[Chunk]) -> None:
        self._seq += 1
        ordered = sorted(chunks, key=lambda chunk: chunk.ordinal)
        self._rows[document.document_id] = _Row(
            document=document,
            catalog_revision=1,
            seq=self._seq,
            chunk_ids=tuple(chunk.chunk_id for chunk in ordered),
        )
        for chunk in ordered:
            self._chunks[chunk.chunk_id] = chunk

    # -- many at once --------------------------------------------------------

    def get_documents(self, document_ids: Sequence[str]) -> dict[str, Document]:
        """See :meth:`veracity.catalog.store.Store.get_documents`."""
        with self._lock:
            return {i: self._rows[i].document for i in document_ids if i in self._rows}

    def catalog_revisions(self, document_ids: Sequence[str]) -> dict[str, int]:
        """See :meth:`veracity.catalog.store.Store.catalog_revisions`."""
        with self._lock:
            return {i: self._rows[i].catalog_revision for i in document_ids if i in self._rows}

    def get_chunks_by_id(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """See :meth:`veracity.catalog.store.Store.get_chunks_by_id`."""
        with self._lock:
            return {i: self._chunks[i] for i in chunk_ids if i in self._chunks}
