"""Looking at the documents of a knowledge base: rows for ``docs list``, details for ``docs show``.

Pure views over a :class:`~veracity.catalog.catalog.Catalog` and the source
paths the knowledge base remembers (:func:`veracity.ingest.sources.source_paths`;
the in-memory demo has none). A document is found by source id or 64-hex
document id, within one tenant when one is given (source ids are per tenant).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..catalog.catalog import Catalog
from ..model.contracts import Chunk, Document
from ..pipeline.render import document_detail

__all__ = ["document_rows", "find_document", "show_document"]

Paths = Mapping[tuple[str, str], str]


def document_rows(
    catalog: Catalog, tenant: str | None = None, paths: Paths | None = None
) -> list[dict[str, Any]]:
    """One row per document (of ``tenant``): id, title, path, revision, status, governance, chunks."""
    rows = []
    for document in catalog.documents(tenant):
        versions = f"{document.version_min or ''}–{document.version_max or ''}" if (
            document.version_min or document.version_max
        ) else "all"
        visibility = document.visibility.value
        if document.allowed_roles:
            visibility += f" ({', '.join(document.allowed_roles)})"
        rows.append(
            {
                "id": document.source_id,
                "title": document.title,
                "path": (paths or {}).get((document.tenant, document.source_id), ""),
                "tenant": document.tenant,
                "revision": document.revision,
                "status": document.status.value,
                "versions": versions,
                "valid_from": document.valid_from.date().isoformat(),
                "valid_until": document.valid_until.date().isoformat() if document.valid_until else "",
                "visibility": visibility,
                "trust": document.trust.value,
                "chunks": len(catalog.chunks(document.document_id)),
                "defaults": ", ".join(document.defaulted_fields),
            }
        )
    return rows


def find_document(catalog: Catalog, id_or_source_id: str, tenant: str | None = None) -> Document:
    """A document by id or source id (its active revision, else its latest), within ``tenant`` if
    given (:meth:`Catalog.document <veracity.catalog.catalog.Catalog.document>`)."""
    return catalog.document(id_or_source_id, tenant)


def show_document(
    catalog: Catalog, id_or_source_id: str, tenant: str | None = None, paths: Paths | None = None
) -> tuple[Document, list[Chunk], dict[str, Any]]:
    """The document, its chunks and ``docs show``'s data (metadata, path, revisions, chunks)."""
    document = find_document(catalog, id_or_source_id, tenant)
    chunks = catalog.chunks(document.document_id)
    detail = document_detail(document, chunks)
    detail["path"] = (paths or {}).get((document.tenant, document.source_id), "")
    detail["revisions"] = [
        {"revision": d.revision, "status": d.status.value, "document_id": d.document_id}
        for d in catalog.documents(document.tenant)
        if d.source_id == document.source_id
    ]
    return document, chunks, detail
