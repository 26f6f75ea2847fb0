"""Documents as one principal may see them: lists, a document with its chunks, a chunk in context.

A document is *visible* to an asker when the catalog's eligibility
predicate admits it for that principal at the moment asked about (tenant,
role, status, validity window; every product version): exactly what an
answer asked at that moment could cite. An operator sees every document of
its own tenant, in any status. Anything else is reported as not found, with
the same message as a document that does not exist, so existence does not
leak. Pure views over a catalog; no writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePath
from typing import Any

from ...catalog.catalog import Catalog
from ...kb.browse import document_rows, find_document
from ...model.contracts import Chunk, Document, Principal
from ...model.errors import NotFoundError
from ...model.governance import EligibilityScope, eligibility
from ...model.versions import range_label
from ...pipeline.render import box_dict, chunk_dict, page_label

__all__ = [
    "chunk_context", "document_view", "quote_spans", "served_paths", "shown_path", "visible_document",
    "visible_documents",
]

Paths = Mapping[tuple[str, str], str]


def shown_path(path: str) -> str:
    """A source path as an asker sees it: relative paths as they are, absolute ones by file name only."""
    return PurePath(path).name if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path) else path


def served_paths(paths: Paths, uploads: PurePath) -> dict[tuple[str, str], str]:
    """``paths`` with each uploaded file named as it was uploaded, not by the server's folder.

    An upload is kept at ``uploads/<tenant>/NAME`` (:mod:`veracity.service.core.operate`;
    ``uploads`` resolved, as the remembered paths are): that folder is the
    server's business (for a database knowledge base, a temporary directory),
    so even an operator sees ``NAME``. Other paths are kept.
    """

    def shown(path: str) -> str:
        try:
            inside = PurePath(path).relative_to(uploads)
        except ValueError:
            return path
        return PurePath(*inside.parts[1:]).as_posix() if len(inside.parts) > 1 else inside.as_posix()

    return {key: shown(path) for key, path in paths.items()}


def _not_found(id_or_source_id: str) -> NotFoundError:
    return NotFoundError(f"no document {id_or_source_id!r} that this key may see")


def may_see(
    catalog: Catalog, document: Document, principal: Principal, as_of: datetime, *, operator: bool
) -> bool:
    """Whether ``principal`` may see ``document`` (see the module docstring)."""
    if document.tenant != principal.tenant:
        return False
    if operator:
        return True
    verdict = eligibility(document, EligibilityScope(principal, None, as_of, catalog.roles(principal.tenant)))
    return verdict.eligible


def _asker_row(document: Document, chunks: int, path: str) -> dict[str, Any]:
    return {
        "id": document.source_id,
        "document_id": document.document_id,
        "title": document.title,
        "path": shown_path(path),
        "revision": document.revision,
        "versions": range_label(document.version_min, document.version_max) or "all",
        "language": document.language,
        "chunks": chunks,
    }


def visible_documents(
    catalog: Catalog, principal: Principal, as_of: datetime, paths: Paths, *, operator: bool
) -> list[dict[str, Any]]:
    """One row per document ``principal`` may see; an operator gets ``docs list``'s rows of its tenant."""
    if operator:
        rows = document_rows(catalog, principal.tenant, paths)
        ids = [d.document_id for d in catalog.documents(principal.tenant)]
        return [{**row, "document_id": document_id} for row, document_id in zip(rows, ids, strict=True)]
    return [
        _asker_row(d, len(catalog.chunks(d.document_id)), paths.get((d.tenant, d.source_id), ""))
        for d in catalog.documents(principal.tenant)
        if may_see(catalog, d, principal, as_of, operator=False)
    ]


def visible_document(
    catalog: Catalog, id_or_source_id: str, principal: Principal, as_of: datetime, *, operator: bool
) -> Document:
    """The document if ``principal`` may see it now; ``NotFoundError`` (the same as for none) otherwise."""
    return _visible(catalog, id_or_source_id, principal, as_of, operator=operator)


def _visible(
    catalog: Catalog, id_or_source_id: str, principal: Principal, as_of: datetime, *, operator: bool
) -> Document:
    try:
        document = find_document(catalog, id_or_source_id, principal.tenant)
    except NotFoundError:
        raise _not_found(id_or_source_id) from None
    if not may_see(catalog, document, principal, as_of, operator=operator):
        raise _not_found(id_or_source_id)
    return document


def document_view(
    catalog: Catalog,
    id_or_source_id: str,
    principal: Principal,
    as_of: datetime,
    paths: Paths,
    *,
    operator: bool,
) -> dict[str, Any]:
    """A visible document's metadata and chunks with their text; ``NotFoundError`` otherwise."""
    document = _visible(catalog, id_or_source_id, principal, as_of, operator=operator)
    chunks = catalog.chunks(document.document_id)
    path = paths.get((document.tenant, document.source_id), "")
    data = _asker_row(document, len(chunks), path)
    if operator:
        data.update(
            path=path,
            status=document.status.value,
            visibility=document.visibility.value,
            allowed_roles=list(document.allowed_roles),
            trust=document.trust.value,
            valid_from=document.valid_from.isoformat(),
            valid_until=document.valid_until.isoformat() if document.valid_until else None,
        )
    data["chunks"] = [
        {**chunk_dict(c, text=True), "pages": page_label(c.page_start, c.page_end)} for c in chunks
    ]
    return data


def quote_spans(text: str, quote: str | None) -> list[tuple[int, int]]:
    """Where ``quote`` occurs in ``text`` (exactly, else with any run of whitespace for any other);
    a quote whose lines are not contiguous in ``text`` (a table row with its header and separator
    rows) is found line by line."""
    wanted = (quote or "").strip()
    if not wanted:
        return []
    whole = _span_of(text, wanted)
    if whole is not None or "\n" not in wanted:
        return [whole] if whole is not None else []
    lines = [_span_of(text, line.strip()) for line in wanted.split("\n") if line.strip()]
    return sorted(span for span in lines if span is not None) if all(lines) else []


def _span_of(text: str, wanted: str) -> tuple[int, int] | None:
    found = text.find(wanted)
    if found >= 0:
        return (found, found + len(wanted))
    pattern = r"\s*".join(re.escape(part) for part in wanted.split())
    match = re.search(pattern, text)
    return (match.start(), match.end()) if match else None


def _context_chunk(chunk: Chunk, quote: str | None) -> dict[str, Any]:
    return {
        "chunk_id": chunk.chunk_id,
        "ordinal": chunk.ordinal,
        "heading_path": list(chunk.heading_path),
        "pages": page_label(chunk.page_start, chunk.page_end),
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "boxes": [box_dict(box) for box in chunk.boxes],
        "text": chunk.text,
        "highlights": [list(span) for span in quote_spans(chunk.text, quote)],
    }


def chunk_context(
    catalog: Catalog,
    id_or_source_id: str,
    chunk_id: str,
    principal: Principal,
    as_of: datetime,
    paths: Paths,
    *,
    operator: bool,
    quote: str | None = None,
    around: int = 1,
) -> dict[str, Any]:
    """A cited chunk in its document: title, heading path, page, ``around`` chunks each side, the quote.

    ``NotFoundError`` unless the document is visible and holds the chunk.
    """
    document = _visible(catalog, id_or_source_id, principal, as_of, operator=operator)
    chunks = catalog.chunks(document.document_id)
    position = next((i for i, c in enumerate(chunks) if c.chunk_id == chunk_id), None)
    if position is None:
        raise NotFoundError(f"no chunk {chunk_id!r} in document {id_or_source_id!r} that this key may see")
    around = max(0, min(int(around), 5))
    cited = chunks[position]
    path = paths.get((document.tenant, document.source_id), "")
    return {
        "document_id": document.document_id,
        "id": document.source_id,
        "title": document.title,
        "path": path if operator else shown_path(path),
        "revision": document.revision,
        "chunk": _context_chunk(cited, quote),
        "before": [_context_chunk(c, None) for c in chunks[max(0, position - around) : position]],
        "after": [_context_chunk(c, None) for c in chunks[position + 1 : position + 1 + around]],
    }
