"""Lifecycle of documents in an on-disk knowledge base: withdraw, retire, delete, status.

Each change is one transaction over the catalog *and* the derived index (they
share ``catalog.sqlite``): the catalog write is a compare-and-set on the
document's catalog revision, and the governance snapshot of every kept index
version is updated (or the document's chunks, lexical postings and vectors
removed from each) before the transaction commits. A stale write changes
nothing anywhere. The ingestion ledger gets the new state of the document's
file, so ``status`` shows it; a deletion leaves a tombstone
(:mod:`veracity.catalog.tombstones`) so the next ingest of its folder does not add
it back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..catalog.erase import erase_freed_storage
from ..catalog.ledger import Ledger, forget_document, source_of
from ..catalog.sources import forget_source
from ..catalog.store import DatabaseStore
from ..catalog.tombstones import add_tombstone
from ..index.versioned import VersionedIndex
from ..model.contracts import Document, Status
from ..model.errors import ConfigError
from ..pipeline.engine import Engine
from .backends import location_of
from .directory import read_manifest, write_manifest
from .status import status_of_store
from .verdicts import forget_verdicts
from .writing import writing


@dataclass(frozen=True, slots=True)
class Change:
    """What one lifecycle command did."""

    action: str
    source_id: str
    document_id: str
    catalog_revision: int | None
    chunks_removed: int = 0


def _parts(kb: Engine) -> tuple[DatabaseStore, VersionedIndex]:
    store, index = kb.catalog.store, kb.snapshot
    if not isinstance(store, DatabaseStore) or not isinstance(index, VersionedIndex):
        raise ConfigError("lifecycle commands need an on-disk knowledge base (open it with open_kb)")
    return store, index


def change_status(
    kb: Engine,
    folder: str | os.PathLike[str],
    id_or_source_id: str,
    status: Status,
    *,
    expected_revision: int | None = None,
) -> Change:
    """Withdraw or retire a document in the catalog and the index together."""
    if status not in (Status.WITHDRAWN, Status.RETIRED):
        raise ConfigError(f"status must be withdrawn or retired, got {status.value!r}")
    store, index = _parts(kb)
    with writing(kb, "withdraw" if status is Status.WITHDRAWN else "retire"):
        document = kb.catalog.document(id_or_source_id)
        with store.transaction():
            if status is Status.WITHDRAWN:
                revision = kb.catalog.withdraw(document.document_id, expected_revision)
            else:
                revision = kb.catalog.retire(document.document_id, expected_revision)
            _record(store, document, status.value, "by request")
            index.sync(kb.catalog, kb.embedder)
        write_manifest(folder, kb)
    return Change(status.value, document.source_id, document.document_id, revision)


def _record(store: DatabaseStore, document: Document, state: str, reason: str, *, ids: bool = True) -> None:
    """Append ``state`` for the file ``document`` was ingested from, if the ledger knows it."""
    source = source_of(store.connection, document.document_id)
    if source is not None:
        source_id, document_id = (document.source_id, document.document_id) if ids else (None, None)
        ledger = Ledger(store.connection)
        ledger.step(source, state, reason=reason, source_id=source_id, document_id=document_id)


def delete_documents(kb: Engine, documents: list[Document], *, tombstone: bool, reason: str) -> int:
    """Delete documents from the catalog and every index version in one transaction; chunks removed.

    The ledger's rows lose the documents' ids and get a ``deleted`` step; with
    ``tombstone``, a later ingest of the same source skips it. Call
    :func:`erase_freed_pages` afterwards so the bytes leave the file.
    """
    store, index = _parts(kb)
    with store.transaction():
        removed = index.remove([d.document_id for d in documents])
        for document in documents:
            _record(store, document, "deleted", reason, ids=False)
            forget_document(store.connection, document.document_id)
            forget_verdicts(store, document, kb.catalog.chunks(document.document_id))
            store.delete_document(document.document_id)
            if tombstone:
                add_tombstone(store.connection, document)
            if not store.find_documents(source_id=document.source_id, tenant=document.tenant):
                forget_source(store.connection, document.tenant, document.source_id)
    return removed


def erase_freed_pages(kb: Engine) -> None:
    """Rewrite the file so deleted documents' text and ids are gone from disk, not only from queries."""
    store, _ = _parts(kb)
    with writing(kb, "delete"):
        erase_freed_storage(store.connection, store.path)


def delete(kb: Engine, folder: str | os.PathLike[str], id_or_source_id: str) -> Change:
    """Delete a document: catalog rows, chunks, facts, lexical postings and vectors, at once.

    A tombstone keeps the next ingest of the same source from adding it back.
    """
    with writing(kb, "delete"):
        document = kb.catalog.document(id_or_source_id)
        removed = delete_documents(kb, [document], tombstone=True, reason="by request")
        erase_freed_pages(kb)
        write_manifest(folder, kb)
    return Change("deleted", document.source_id, document.document_id, None, removed)


def status_report(kb: Engine, folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Counts per tenant and status, index counts and the manifest summary (see :mod:`veracity.kb.status`)."""
    store, _ = _parts(kb)
    return status_of_store(store, read_manifest(location_of(folder)))
