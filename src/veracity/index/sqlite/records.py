"""Plain-JSON forms of the records a derived index keeps, and sortable version keys.

The SQLite search index stores each indexed ``Document`` and ``Chunk`` as it was
when indexed (the index snapshot), as JSON text: inspectable with any SQLite
client, no pickle. Datetimes are ISO-8601 UTC with microseconds, exactly as the
catalog stores them, so they sort as text.

No record holds text: a chunk's text and context prefix, and a document's
body, live once, in the catalog's ``chunks`` and ``documents`` rows of the same
database, and readers join them on ``chunk_id`` / ``document_id``. A chunk
record keeps ``indexed_digest``, the sha256 of what the channels saw
(:func:`embedded_text_digest`), a document record ``body_digest``, so a reader
can tell whether the catalog row still holds what was indexed (else it gets no
text: :func:`chunk_from_json`), verification compares both sides without the
text, and vector reuse needs no text at all. Records written before this (with
``text`` and ``context_prefix``, or ``body``) still read.

:func:`version_key` turns a dotted version into fixed-width text whose prefix
comparisons match :func:`veracity.model.versions.in_range` (a bound compares on its
own precision), so the governance filter can run in SQL.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

from ...catalog.rows import moment_text
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
    sha256_hex,
)
from ...model.versions import parse_version
from ..snapshot import index_text

__all__ = [
    "VERSION_WIDTH",
    "chunk_from_json",
    "chunk_to_json",
    "current_chunk_record",
    "current_document_record",
    "document_from_json",
    "document_to_json",
    "embedded_text_digest",
    "moment_text",
    "record_text_digest",
    "version_key",
]

VERSION_WIDTH: Final = 10
"""Digits per version component in a :func:`version_key`."""


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


_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
"""One encoder for every record (``json.dumps`` with options builds a new one per call: an
ingest writes two records per chunk)."""


def _dumps(data: dict[str, Any]) -> str:
    return _COMPACT_JSON.encode(data)


def document_to_json(document: Document) -> str:
    """The document as indexed, as compact JSON: every field but its body.

    The body stays in the catalog (one copy); ``body_digest`` records which body
    was indexed. ``extra_metadata`` and ``defaulted_fields`` are left out when
    empty, so records of documents without them stay as they were before they existed.
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
        "body_digest": sha256_hex(document.body),
        "language": document.language,
    }
    if document.extra_metadata:
        record["extra_metadata"] = [list(pair) for pair in document.extra_metadata]
    if document.defaulted_fields:
        record["defaulted_fields"] = list(document.defaulted_fields)
    return _dumps(record)


def document_from_json(record: str, body: str | None = None) -> Document:
    """The indexed document of ``record``, with ``body`` from its catalog row.

    As for chunks (:func:`chunk_from_json`): an older record carries its own body;
    otherwise a catalog body other than the indexed one (or none) gives ``""``.
    """
    raw = json.loads(record)
    if "body" in raw:
        body = raw["body"]
    elif body is None or sha256_hex(body) != raw["body_digest"]:
        body = ""
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
        body=body,
        language=raw["language"],
        extra_metadata=tuple((str(key), str(value)) for key, value in raw.get("extra_metadata", [])),
        defaulted_fields=tuple(raw.get("defaulted_fields", [])),
    )


def embedded_text_digest(chunk: Chunk) -> str:
    """sha256 of what the channels see of ``chunk`` (context prefix and text, :func:`index_text`)."""
    return sha256_hex(index_text(chunk))


def chunk_to_json(chunk: Chunk) -> str:
    """The chunk as indexed, as compact JSON: every field but its text and context prefix.

    Those stay in the catalog (one copy); ``indexed_digest`` records what the
    channels saw. Pages, boxes and OCR fields are left out when unset so records
    of sources without them stay as they were before they existed.
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
        "indexed_digest": embedded_text_digest(chunk),
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


def chunk_from_json(record: str, text: str | None = None, context_prefix: str | None = None) -> Chunk:
    """The indexed chunk of ``record``, with ``text`` and ``context_prefix`` from its catalog row.

    A record written before the text left the index carries its own and
    ignores both arguments. Otherwise the catalog's text is used only if it is
    the text that was indexed (same ``indexed_digest``); when the catalog row is
    gone (``None``) or holds other text, the chunk comes back with empty text
    and prefix: a stale index never invents text, and the return gate, which
    compares the live chunk's digest, drops it. A record without pages (older
    indexes too) has ``None``.
    """
    raw = json.loads(record)
    own = "text" in raw
    page_start, page_end = raw.get("page_start"), raw.get("page_end")
    chunk = Chunk(
        chunk_id=raw["chunk_id"],
        document_id=raw["document_id"],
        document_digest=raw["document_digest"],
        heading_path=tuple(raw["heading_path"]),
        ordinal=int(raw["ordinal"]),
        start=int(raw["start"]),
        end=int(raw["end"]),
        kind=ChunkKind(raw["kind"]),
        text=raw["text"] if own else (text or ""),
        context_prefix=raw["context_prefix"] if own else (context_prefix or ""),
        fact_ids=tuple(raw["fact_ids"]),
        page_start=None if page_start is None else int(page_start),
        page_end=None if page_end is None else int(page_end),
        boxes=tuple(PageBox.from_list(item) for item in raw.get("boxes", ())),
        ocr_confidence=raw.get("ocr_confidence"),
        ocr_numbers=tuple(OcrNumber(str(t), float(c)) for t, c in raw.get("ocr_numbers", ())),
    )
    if own or (text is not None and embedded_text_digest(chunk) == raw["indexed_digest"]):
        return chunk
    return replace(chunk, text="", context_prefix="")


def record_text_digest(record: str) -> str:
    """:func:`embedded_text_digest` of the chunk a record was indexed from (any record form)."""
    raw = json.loads(record)
    if "indexed_digest" in raw:
        return str(raw["indexed_digest"])
    return embedded_text_digest(chunk_from_json(record))


def current_document_record(record: str) -> str:
    """``record`` in the form :func:`document_to_json` writes now (an older record loses its body)."""
    # a quote inside a JSON string is escaped, so '"body":' can only be the key of an older record
    return document_to_json(document_from_json(record)) if '"body":' in record else record


def current_chunk_record(record: str) -> str:
    """``record`` in the form :func:`chunk_to_json` writes now (an older record loses its text)."""
    # a quote inside a JSON string is escaped, so '"text":' can only be the key of an older record
    return chunk_to_json(chunk_from_json(record)) if '"text":' in record else record
