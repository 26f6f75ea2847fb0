"""Keep a knowledge base in step with a folder: withdraw or delete what left it.

``ingest --prune`` compares each ingested folder with what the knowledge base
remembers was ingested from it (:mod:`veracity.ingest.sources`). A source whose
file is gone has its active documents withdrawn (kept, never returned until the
file comes back: a later ``--prune`` ingest or sync that finds it again serves it
again, as ``--restore`` does) or,
with ``--delete``, all its revisions deleted (no tombstone: the file is gone,
and a file that comes back is new). Files that are still there but were
rejected this time are not pruned.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..catalog.sources import sources_under
from ..catalog.store import DatabaseStore
from ..model.contracts import Status
from ..pipeline.engine import Engine
from .removal import delete_documents, erase_freed_pages
from .sources import SourceScan

__all__ = ["PruneReport", "gone_but_served", "prune_missing"]

REASON = "source file gone (pruned)"


@dataclass(frozen=True, slots=True)
class PruneReport:
    """Sources whose files have gone: withdrawn or deleted (source ids)."""

    withdrawn: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()


def _missing(store: DatabaseStore, scan: SourceScan) -> Iterator[tuple[str, str, str]]:
    """``(tenant, source_id, path)`` of each source ingested from a folder of ``scan`` whose
    file is no longer there."""
    present = {(file.root, file.source) for file in scan.files}
    for root in scan.roots:
        for tenant, source_id, path in sources_under(store.connection, root):
            if (root, path) not in present:
                yield tenant, source_id, path


def gone_but_served(kb: Engine, scan: SourceScan) -> tuple[str, ...]:
    """Source ids whose files have left the folders of ``scan`` while a revision is still
    served: what ``--prune`` would withdraw (an ingest without it says so)."""
    store = kb.catalog.store
    if not isinstance(store, DatabaseStore):
        return ()
    return tuple(
        source_id
        for tenant, source_id, _ in _missing(store, scan)
        if any(d.status is Status.ACTIVE for d in store.find_documents(source_id=source_id, tenant=tenant))
    )


def prune_missing(kb: Engine, scan: SourceScan, *, delete: bool, ledger: Any) -> PruneReport:
    """Withdraw (or delete) the documents of sources gone from the folders in ``scan``."""
    store = kb.catalog.store
    if not isinstance(store, DatabaseStore):
        return PruneReport()
    withdrawn: list[str] = []
    doomed = []
    for tenant, source_id, path in _missing(store, scan):
        revisions = store.find_documents(source_id=source_id, tenant=tenant)
        if delete:
            doomed.extend(revisions)
            continue
        active = [d for d in revisions if d.status is Status.ACTIVE]
        with store.transaction():
            for document in active:
                kb.catalog.withdraw(document.document_id)
                ledger.step(path, "withdrawn", source_id=source_id, document_id=document.document_id,
                            reason=REASON)  # fmt: skip
        if active:
            withdrawn.append(source_id)
    if doomed:
        delete_documents(kb, doomed, tombstone=False, reason=REASON)
        erase_freed_pages(kb)
    return PruneReport(tuple(withdrawn), tuple(sorted({d.source_id for d in doomed})))
