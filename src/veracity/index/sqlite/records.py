"""Plain-JSON forms of the records a derived index keeps, and sortable version keys.

The SQLite search index stores each indexed ``Document`` and ``Chunk`` as it was
when indexed (the index snapshot), as JSON text: inspectable with any SQLite
client, no pickle. Datetimes are ISO-8601 UTC with microseconds, exactly as the
catalog stores them, so they sort as text.

:func:`version_key` turns a dotted version into fixed-width text whose prefix
comparisons match :func:`veracity.model.versions.in_range` (a bound compares on its
own precision), so the governance filter can run in SQL.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Final

from ...model.contracts import (
    Chunk,
    ChunkKind,
    Document,
    FactAnnotation,
    OcrNumber,
    PageBox,
    Status,
    Trust,
    Visibility,
)
from ...model.versions import parse_version

__all__ = [
    "VERSION_WIDTH",
    "chunk_from_json",
    "chunk_to_json",
    "document_from_json",
    "document_to_json",
    "moment_text",
    "version_key",
]

VERSION_WIDTH: Final = 10
"""Digits per version component in a :func:`version_key`."""


def moment_text(value: datetime) -> str:
    """ISO-8601 UTC text with microseconds (sorts as text), as the catalog stores moments."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def version_key(version: str | None) -> str | None:
    """Fixed-width sortable text of a dotted version (``None`` stays ``None``).

    ``"3.2"`` becomes ``"0000000003.0000000002"``. Cutting a key to the length of
    another key cuts it to as many components, so ``substr(key, 1, length(bound))``
    compares on the bound's precision, as ``in_range`` does.
    """
    if version is None or version == "":
        return None
    parts = parse_version(version)
    return ".".join(f"{part:0{VERSION_WIDTH}d}" for part in parts)


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def document_to_json(document: Document) -> str:
    """The document as compact JSON (every field, body included).

    ``extra_metadata`` and ``defaulted_fields`` are left out when empty, so
    records of documents without them stay as they were before they existed.
    """
    record: dict[str, Any] = {
        "document_id": document.document_id,
        "source_id": document.source_id,
        "revision": document.revision,
        "content_digest": document.content_digest,
        "title": document.title,
        "source_type": document.source_type,
        "tenant": document.tenant,
        "version_min": document.version_min,
        "version_max": document.version_max,
        "valid_from": moment_text(document.valid_from),
        "valid_until": (moment_text(document.valid_until) if document.valid_until is not None else None),
        "status": Status(document.status).value,
        "visibility": Visibility(document.visibility).value,
        "allowed_roles": list(document.allowed_roles),
        "trust": Trust(document.trust).value,
        "facts": [[f.fact_id, f.quote, f.stance] for f in document.facts],
        "body": document.body,
        "language": document.language,
    }
    if document.extra_metadata:
        record["extra_metadata"] = [list(pair) for pair in document.extra_metadata]
    if document.defaulted_fields:
        record["defaulted_fields"] = list(document.defaulted_fields)
    return _dumps(record)


def document_from_json(text: str) -> Document:
    """Inverse of :func:`document_to_json`."""
    raw = json.loads(text)
    return Document(
        document_id=raw["document_id"],
        source_id=raw["source_id"],
        revision=raw["revision"],
        content_digest=raw["content_digest"],
        title=raw["title"],
        source_type=raw["source_type"],
        tenant=raw["tenant"],
        version_min=raw["version_min"],
        version_max=raw["version_max"],
        valid_from=datetime.fromisoformat(raw["valid_from"]),
        valid_until=(datetime.fromisoformat(raw["valid_until"]) if raw["valid_until"] is not None else None),
        status=Status(raw["status"]),
        visibility=Visibility(raw["visibility"]),
        allowed_roles=tuple(raw["allowed_roles"]),
        trust=Trust(raw["trust"]),
        facts=tuple(FactAnnotation(fact_id=f, quote=q, stance=s) for f, q, s in raw["facts"]),
        body=raw["body"],
        language=raw["language"],
        extra_metadata=tuple((str(key), str(value)) for key, value in raw.get("extra_metadata", [])),
        defaulted_fields=tuple(raw.get("defaulted_fields", [])),
    )


def chunk_to_json(chunk: Chunk) -> str:
    """The chunk as compact JSON (every field; pages, boxes and OCR fields only when set).

    Pages, boxes and OCR fields are left out when unset so records of sources
    without them stay as they were before they existed.
    """
    record: dict[str, Any] = {
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.document_id,
        "document_digest": chunk.document_digest,
        "heading_path": list(chunk.heading_path),
        "ordinal": chunk.ordinal,
        "start": chunk.start,
        "end": chunk.end,
        "kind": ChunkKind(chunk.kind).value,
        "text": chunk.text,
        "context_prefix": chunk.context_prefix,
        "fact_ids": list(chunk.fact_ids),
    }
    if chunk.page_start is not None or chunk.page_end is not None:
        record["page_start"] = chunk.page_start
        record["page_end"] = chunk.page_end
    if chunk.boxes:
        record["boxes"] = [box.as_list() for box in chunk.boxes]
    if chunk.ocr_confidence is not None:
        record["ocr_confidence"] = chunk.ocr_confidence
    if chunk.ocr_numbers:
        record["ocr_numbers"] = [[n.text, n.confidence] for n in chunk.ocr_numbers]
    return _dumps(record)


def chunk_from_json(text: str) -> Chunk:
    """Inverse of :func:`chunk_to_json`; a record without pages (older indexes too) has ``None``."""
    raw = json.loads(text)
    page_start, page_end = raw.get("page_start"), raw.get("page_end")
    return Chunk(
        chunk_id=raw["chunk_id"],
        document_id=raw["document_id"],
        document_digest=raw["document_digest"],
        heading_path=tuple(raw["heading_path"]),
        ordinal=int(raw["ordinal"]),
        start=int(raw["start"]),
        end=int(raw["end"]),
        kind=ChunkKind(raw["kind"]),
        text=raw["text"],
        context_prefix=raw["context_prefix"],
        fact_ids=tuple(raw["fact_ids"]),
        page_start=None if page_start is None else int(page_start),
        page_end=None if page_end is None else int(page_end),
        boxes=tuple(PageBox.from_list(item) for item in raw.get("boxes", ())),
        ocr_confidence=raw.get("ocr_confidence"),
        ocr_numbers=tuple(OcrNumber(str(t), float(c)) for t, c in raw.get("ocr_numbers", ())),
    )
