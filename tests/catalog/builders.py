"""Shared builders for store tests: validated documents and simple chunks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from veracity.catalog.store import Store
from veracity.model.contracts import Chunk, ChunkKind, Document, sha256_hex
from veracity.parse.documents import make_document

MakeStore = Callable[[], Store]
"""A factory that opens the store under test (see ``StoreContract``)."""

BODY = (
    "# 安装星舰\n\n"
    "星舰 3.2 需要 Python 3.11 或更高版本。\n\n"
    "运行 `starship init` 初始化配置，默认超时为 30 秒。"
)


def make_doc(
    source_id: str = "guide/install",
    revision: str = "1",
    body: str = BODY,
    **metadata: Any,
) -> Document:
    """A valid document of tenant ``starship``; ``metadata`` overrides front-matter fields."""
    fields: dict[str, Any] = {
        "id": source_id,
        "revision": revision,
        "title": "安装星舰",
        "tenant": "starship",
        "valid_from": "2024-01-01T00:00:00+08:00",
        "status": "active",
        "visibility": "public",
        "trust": "official",
    }
    fields.update(metadata)
    return make_document(fields, body)


def make_chunks(document: Document, prefix: str = "") -> list[Chunk]:
    """Cut ``document.body`` at blank lines into paragraph chunks with unique hex ids.

    The first chunk has no pages, chunk ``n`` covers pages ``n`` to ``n + 1``, so
    every round trip through a store covers both.
    """
    chunks: list[Chunk] = []
    start = 0
    for ordinal, part in enumerate(document.body.split("\n\n")):
        begin = document.body.index(part, start)
        end = begin + len(part)
        start = end
        fact_ids = tuple(f.fact_id for f in document.facts if f.quote in part)
        chunks.append(
            Chunk(
                chunk_id=sha256_hex(f"{prefix}{document.document_id}/{ordinal}"),
                document_id=document.document_id,
                document_digest=document.content_digest,
                heading_path=("安装星舰",) if ordinal else (),
                ordinal=ordinal,
                start=begin,
                end=end,
                kind=ChunkKind.CODE if "`" in part else ChunkKind.PARAGRAPH,
                text=part,
                context_prefix=f"{document.title} › 第{ordinal}段",
                fact_ids=fact_ids,
                page_start=ordinal or None,
                page_end=ordinal + 1 if ordinal else None,
            )
        )
    return chunks


def rich_metadata() -> Mapping[str, Any]:
    """Front matter that exercises every optional field the store keeps."""
    return {
        "source_type": "faq",
        "version_min": "3.0",
        "version_max": "3.2",
        "valid_until": "2030-06-30",
        "visibility": "internal",
        "allowed_roles": ["support", "admin"],
        "trust": "community",
        "language": "zh",
        "facts": [
            {"id": "python-version", "quote": "需要 Python 3.11"},
            {"id": "timeout", "quote": "默认超时为 30 秒", "stance": "contradicts"},
        ],
    }
