"""Catalog rows and records: documents and chunks as the SQLite catalog stores them.

Datetimes are ISO-8601 UTC text with microseconds (they sort as text);
tuples are JSON arrays; extra metadata is one JSON object with sorted keys.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

import apsw

from ..model.contracts import (
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
from .sql import dialect_of

__all__ = [
    "CHUNK_COLUMNS",
    "DOCUMENT_COLUMNS",
    "boxes_json",
    "boxes_of",
    "chunk_of",
    "document_of",
    "extra_metadata_json",
    "extra_metadata_pairs",
    "insert_document",
    "insert_documents",
    "insert_rows",
    "moment_text",
    "now_text",
    "ocr_numbers_json",
    "ocr_numbers_of",
    "select_documents",
]


def moment_text(value: datetime) -> str:
    """A moment as the catalog stores it: ISO-8601 UTC text with microseconds (sorts as text)."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def now_text() -> str:
    """Now, as :func:`moment_text` writes it."""
    return moment_text(datetime.now(UTC))


def _moment(value: datetime | None) -> str | None:
    return None if value is None else moment_text(value)


DOCUMENT_COLUMNS = (
    "document_id, source_id, revision, content_digest, title, source_type, tenant, "
    "version_min, version_max, valid_from, valid_until, status, visibility, trust, "
    "language, body, extra_metadata, defaulted_fields"
)
CHUNK_COLUMNS = (
    'chunk_id, document_id, document_digest, heading_path, ordinal, "start", "end", '
    "kind, text, context_prefix, fact_ids, page_start, page_end, boxes, ocr_confidence, ocr_numbers"
)


def select_documents(connection: apsw.Connection, where: str, params: tuple[Any, ...]) -> list[Document]:
    """Documents matching a fixed ``where`` clause (callers pass only literal SQL)."""
    rows = connection.execute(
        f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE {where} ORDER BY source_id, seq",
        params,
    ).fetchall()
    if not rows:
        return []
    roles: dict[str, list[str]] = {}
    for document_id, role in connection.execute(
        "SELECT r.document_id, r.role FROM document_roles AS r "
        f"JOIN documents USING (document_id) WHERE {where} ORDER BY r.document_id, r.ordinal",
        params,
    ):
        roles.setdefault(document_id, []).append(role)
    facts: dict[str, list[FactAnnotation]] = {}
    for document_id, fact_id, quote, stance in connection.execute(
        "SELECT f.document_id, f.fact_id, f.quote, f.stance FROM document_facts AS f "
        f"JOIN documents USING (document_id) WHERE {where} ORDER BY f.document_id, f.ordinal",
        params,
    ):
        facts.setdefault(document_id, []).append(FactAnnotation(fact_id=fact_id, quote=quote, stance=stance))
    return [document_of(row, roles.get(str(row[0]), []), facts.get(str(row[0]), [])) for row in rows]


def insert_document(
    connection: apsw.Connection, document: Document, chunks: Sequence[Chunk], now: str
) -> None:
    """Insert a validated document with its roles, facts and chunks (inside a transaction)."""
    insert_documents(connection, [(document, chunks)], now)


_DOCUMENT_INSERT: Final = (*DOCUMENT_COLUMNS.split(", "), "catalog_revision", "stored_at", "updated_at")
_CHUNK_INSERT: Final = tuple(CHUNK_COLUMNS.split(", "))


_TEXT_LIST_JSON: Final = json.JSONEncoder(ensure_ascii=False)
"""The encoder of a chunk's heading path and fact ids, made once (``json.dumps`` with an option
makes one per call, and an ingest writes two lists per chunk)."""


def insert_documents(
    connection: apsw.Connection, items: Sequence[tuple[Document, Sequence[Chunk]]], now: str
) -> None:
    """Insert validated documents, each with its roles, facts and chunks (inside a transaction):
    one statement per table for them all (:func:`insert_rows`), the documents in the given order.

    On PostgreSQL the rows a document owns carry its tenant (``doc_tenant``, which a foreign key
    holds equal to the document's: :mod:`veracity.catalog.postgres.migrations`, pg0010).
    """
    owned = ("doc_tenant",) if dialect_of(connection) == "postgresql" else ()
    documents: list[tuple[Any, ...]] = []
    roles: list[tuple[Any, ...]] = []
    facts: list[tuple[Any, ...]] = []
    chunk_rows: list[tuple[Any, ...]] = []
    for document, chunks in items:
        documents.append((
            document.document_id, document.source_id, document.revision,
            document.content_digest, document.title, document.source_type, document.tenant,
            document.version_min, document.version_max, _moment(document.valid_from),
            _moment(document.valid_until), Status(document.status).value,
            Visibility(document.visibility).value, Trust(document.trust).value,
            document.language, document.body, extra_metadata_json(document.extra_metadata),
            json.dumps(list(document.defaulted_fields)), 1, now, now,
        ))  # fmt: skip
        tenant = (document.tenant,) if owned else ()
        roles.extend((document.document_id, i, r, *tenant) for i, r in enumerate(document.allowed_roles))
        facts.extend(
            (document.document_id, i, fact.fact_id, fact.quote, fact.stance, *tenant)
            for i, fact in enumerate(document.facts)
        )
        chunk_rows.extend(
            (
                chunk.chunk_id,
                chunk.document_id,
                chunk.document_digest,
                _TEXT_LIST_JSON.encode(list(chunk.heading_path)),
                chunk.ordinal,
                chunk.start,
                chunk.end,
                ChunkKind(chunk.kind).value,
                chunk.text,
                chunk.context_prefix,
                _TEXT_LIST_JSON.encode(list(chunk.fact_ids)),
                chunk.page_start,
                chunk.page_end,
                boxes_json(chunk.boxes),
                chunk.ocr_confidence,
                ocr_numbers_json(chunk.ocr_numbers),
                *tenant,
            )
            for chunk in sorted(chunks, key=lambda chunk: chunk.ordinal)
        )
    insert_rows(connection, "documents", _DOCUMENT_INSERT, documents)
    insert_rows(connection, "document_roles", ("document_id", "ordinal", "role", *owned), roles)
    insert_rows(
        connection, "document_facts", ("document_id", "ordinal", "fact_id", "quote", "stance", *owned), facts
    )
    insert_rows(connection, "chunks", (*_CHUNK_INSERT, *owned), chunk_rows)


COPY_MIN_ROWS: Final = 16
"""From this many rows up, PostgreSQL gets them by ``COPY`` (below, one multi-row ``INSERT``)."""


def insert_rows(connection: Any, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """``INSERT`` every row into ``table (columns)``: one statement per row on SQLite (in process,
    cheap); on PostgreSQL, where each statement is a round trip to the server, one ``COPY`` (or, for
    fewer than :data:`COPY_MIN_ROWS` rows, one multi-row ``INSERT``) for them all: no statement text
    grows with the rows past that, so none is parsed anew for each batch.
    """
    if not rows:
        return
    names = ", ".join(columns)
    one = "(" + ", ".join("?" * len(columns)) + ")"
    if dialect_of(connection) != "postgresql":
        connection.executemany(f"INSERT INTO {table} ({names}) VALUES {one}", rows)
    elif len(rows) >= COPY_MIN_ROWS:
        connection.copy_rows(table, columns, rows)
    else:
        connection.execute(
            f"INSERT INTO {table} ({names}) VALUES {', '.join([one] * len(rows))}",
            [value for row in rows for value in row],
        )


def document_of(row: Sequence[Any], roles: list[str], facts: list[FactAnnotation]) -> Document:
    """A ``documents`` row (its columns in catalog order), its roles and facts, as a ``Document``."""
    (document_id, source_id, revision, content_digest, title, source_type, tenant,
     version_min, version_max, valid_from, valid_until, status, visibility, trust,
     language, body, extra_metadata, defaulted_fields) = row  # fmt: skip
    return Document(
        document_id=document_id,
        source_id=source_id,
        revision=revision,
        content_digest=content_digest,
        title=title,
        source_type=source_type,
        tenant=tenant,
        version_min=version_min,
        version_max=version_max,
        valid_from=datetime.fromisoformat(valid_from),
        valid_until=datetime.fromisoformat(valid_until) if valid_until is not None else None,
        status=Status(status),
        visibility=Visibility(visibility),
        allowed_roles=tuple(roles),
        trust=Trust(trust),
        facts=tuple(facts),
        body=body,
        language=language,
        extra_metadata=extra_metadata_pairs(extra_metadata),
        defaulted_fields=tuple(json.loads(defaulted_fields)),
    )


def extra_metadata_json(pairs: Sequence[tuple[str, str]]) -> str:
    """``Document.extra_metadata`` as one JSON object (keys sorted), as the catalog stores it."""
    return json.dumps({key: json.loads(value) for key, value in pairs}, ensure_ascii=False, sort_keys=True)


def extra_metadata_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """Inverse of :func:`extra_metadata_json`: sorted ``(key, canonical JSON)`` pairs."""
    return tuple(
        (key, json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
        for key, value in sorted(json.loads(text).items())
    )


def chunk_of(row: Sequence[Any]) -> Chunk:
    """A ``chunks`` row (its columns in catalog order) as a ``Chunk``."""
    (chunk_id, document_id, document_digest, heading_path, ordinal, start, end, kind, text,
     context_prefix, fact_ids, page_start, page_end, boxes, ocr_confidence, ocr_numbers) = row  # fmt: skip
    return Chunk(
        chunk_id=chunk_id,
        document_id=document_id,
        document_digest=document_digest,
        heading_path=tuple(json.loads(heading_path)),
        ordinal=int(ordinal),
        start=int(start),
        end=int(end),
        kind=ChunkKind(kind),
        text=text,
        context_prefix=context_prefix,
        fact_ids=tuple(json.loads(fact_ids)),
        page_start=None if page_start is None else int(page_start),
        page_end=None if page_end is None else int(page_end),
        boxes=boxes_of(boxes),
        ocr_confidence=None if ocr_confidence is None else float(ocr_confidence),
        ocr_numbers=ocr_numbers_of(ocr_numbers),
    )


def boxes_json(boxes: Sequence[PageBox]) -> str | None:
    """A chunk's boxes as stored: a JSON list of ``[page, x0, top, x1, bottom]``; ``None`` for none."""
    return json.dumps([box.as_list() for box in boxes]) if boxes else None


def boxes_of(text: str | None) -> tuple[PageBox, ...]:
    """Inverse of :func:`boxes_json`."""
    return tuple(PageBox.from_list(item) for item in json.loads(text)) if text else ()


def ocr_numbers_json(numbers: Sequence[OcrNumber]) -> str | None:
    """OCR-read numbers as stored: a JSON list of ``[text, confidence]``; ``None`` for none."""
    return json.dumps([[n.text, n.confidence] for n in numbers], ensure_ascii=False) if numbers else None


def ocr_numbers_of(text: str | None) -> tuple[OcrNumber, ...]:
    """Inverse of :func:`ocr_numbers_json`."""
    return tuple(OcrNumber(str(t), float(c)) for t, c in json.loads(text)) if text else ()
