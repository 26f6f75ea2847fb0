"""Removing documents from the catalog and every index version at once, and their bytes from the
file: what a pruning ingest and ``veracity delete`` share (:mod:`veracity.kb.lifecycle`).

The ledger gets the new state of each document's file, so ``status`` shows it; a deletion may
leave a tombstone (:mod:`veracity.catalog.tombstones`) so the next ingest of its folder does not
add it back.
"""

from __future__ import annotations

from ..catalog.erase import erase_freed_storage
from ..catalog.ledger import Ledger, forget_document, source_of
from ..catalog.sources import forget_fingerprints, forget_source
from ..catalog.store import DatabaseStore
from ..catalog.tombstones import add_tombstone
from ..index.versioned import VersionedIndex, is_versioned
from ..model.contracts import Document
from ..model.errors import ConfigError
from ..pipeline.engine import Engine
from .verdicts import forget_verdicts
from .writing import writing

__all__ = ["delete_documents", "erase_freed_pages", "parts", "record"]


def parts(kb: Engine) -> tuple[DatabaseStore, VersionedIndex]:
    store, index = kb.catalog.store, kb.snapshot
    if not isinstance(store, DatabaseStore) or not is_versioned(index):
        raise ConfigError(
            "lifecycle commands need an on-disk knowledge base (a directory or a postgresql:// URL)"
        )
    return store, index


BY_REQUEST = "by request"
"""The ledger reason of a change a command made (``withdraw``, ``retire``, ``delete``)."""


def record(store: DatabaseStore, document: Document, state: str, reason: str, *, ids: bool = True) -> None:
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
    store, index = parts(kb)
    with store.transaction():
        removed = index.remove([d.document_id for d in documents])
        forget_fingerprints(store.connection, [d.document_id for d in documents])
        for document in documents:
            record(store, document, "deleted", reason, ids=False)
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
    store, _ = parts(kb)
    with writing(kb, "delete"):
        erase_freed_storage(store.connection, store.path)
