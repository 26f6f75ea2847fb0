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

from ..ingest.removal import BY_REQUEST, delete_documents, erase_freed_pages, parts, record
from ..ingest.writing import writing
from ..model.contracts import Status
from ..model.errors import ConfigError
from ..pipeline.engine import Engine
from .backends import location_of
from .directory import read_manifest, write_manifest
from .status import status_of_store


@dataclass(frozen=True, slots=True)
class Change:
    """What one lifecycle command did."""

    action: str
    source_id: str
    document_id: str
    catalog_revision: int | None
    chunks_removed: int = 0
    changed: bool = True
    tenant: str = ""
    """False when the document already had the status asked for (nothing was written)."""


def change_status(
    kb: Engine,
    folder: str | os.PathLike[str],
    id_or_source_id: str,
    status: Status,
    *,
    expected_revision: int | None = None,
    tenant: str | None = None,
) -> Change:
    """Withdraw or retire a document in the catalog and the index together (a source id is looked
    up within ``tenant``; one several tenants hold needs it)."""
    if status not in (Status.WITHDRAWN, Status.RETIRED):
        raise ConfigError(f"status must be withdrawn or retired, got {status.value!r}")
    store, index = parts(kb)
    with writing(kb, "withdraw" if status is Status.WITHDRAWN else "retire"):
        document = kb.catalog.document(id_or_source_id, tenant)
        current = store.catalog_revision(document.document_id)
        if document.status is status and expected_revision in (None, current):
            return Change(
                status.value, document.source_id, document.document_id, current, changed=False,
                tenant=document.tenant,
            )  # fmt: skip
        with store.transaction():
            if status is Status.WITHDRAWN:
                revision = kb.catalog.withdraw(document.document_id, expected_revision)
            else:
                revision = kb.catalog.retire(document.document_id, expected_revision)
            record(store, document, status.value, BY_REQUEST)
            index.refresh(kb.catalog, [document.document_id])
        write_manifest(folder, kb)
    return Change(status.value, document.source_id, document.document_id, revision, tenant=document.tenant)


def delete(
    kb: Engine, folder: str | os.PathLike[str], id_or_source_id: str, *, tenant: str | None = None
) -> Change:
    """Delete a document: catalog rows, chunks, facts, lexical postings and vectors, at once.

    A tombstone keeps the next ingest of the same source from adding it back.
    """
    with writing(kb, "delete"):
        document = kb.catalog.document(id_or_source_id, tenant)
        removed = delete_documents(kb, [document], tombstone=True, reason=BY_REQUEST)
        erase_freed_pages(kb)
        write_manifest(folder, kb)
    return Change("deleted", document.source_id, document.document_id, None, removed, tenant=document.tenant)


def status_report(kb: Engine, folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Counts per tenant and status, index counts and the manifest summary (see :mod:`veracity.kb.status`)."""
    store, _ = parts(kb)
    return status_of_store(store, read_manifest(location_of(folder)))
