"""The derived search index: built from the catalog, rebuildable, possibly stale.

An ``IndexSnapshot`` holds the governance metadata of every indexed document *as
it was when the index was built*, the chunks, one BM25 index per tenant (term
statistics never mix tenants) and the dense vectors. The eligibility filter
runs on this snapshot; the return gate then asks the live catalog again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .contracts import Chunk, Document
from .index.dense import DenseIndex, Embedder
from .index.lexical import BM25Index
from .text import tokenize


def index_text(chunk: Chunk) -> str:
    """What the channels see of a chunk: its context prefix, then its text."""
    return f"{chunk.context_prefix}\n{chunk.text}" if chunk.context_prefix else chunk.text


@dataclass(frozen=True)
class IndexSnapshot:
    """Derived indexes over a set of documents and their chunks."""

    documents: Mapping[str, Document]
    chunks: Mapping[str, Chunk]
    chunks_by_document: Mapping[str, tuple[str, ...]]
    lexical: Mapping[str, BM25Index]
    dense: DenseIndex
    embedder_id: str

    @classmethod
    def build(
        cls,
        items: Iterable[tuple[Document, tuple[Chunk, ...]]],
        embedder: Embedder,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        batch_size: int = 64,
    ) -> IndexSnapshot:
        """Index ``(document, chunks)`` pairs with BM25 per tenant and ``embedder``."""
        documents: dict[str, Document] = {}
        chunks: dict[str, Chunk] = {}
        by_document: dict[str, tuple[str, ...]] = {}
        per_tenant: dict[str, list[tuple[str, list[str]]]] = {}
        for document, doc_chunks in items:
            documents[document.document_id] = document
            by_document[document.document_id] = tuple(c.chunk_id for c in doc_chunks)
            for chunk in doc_chunks:
                chunks[chunk.chunk_id] = chunk
                per_tenant.setdefault(document.tenant, []).append(
                    (chunk.chunk_id, tokenize(index_text(chunk)))
                )
        lexical = {
            tenant: BM25Index.build(sorted(rows), k1=k1, b=b) for tenant, rows in sorted(per_tenant.items())
        }
        ids = sorted(chunks)
        texts = [index_text(chunks[i]) for i in ids]
        vectors = [
            embedder.embed_batch(texts[start : start + batch_size], kind="passage")
            for start in range(0, len(texts), batch_size)
        ]
        matrix = np.vstack(vectors) if vectors else np.zeros((0, embedder.dim), dtype=np.float32)
        dense = DenseIndex.build(ids, matrix, embedder.model_id)
        return cls(
            documents=documents,
            chunks=chunks,
            chunks_by_document=by_document,
            lexical=lexical,
            dense=dense,
            embedder_id=embedder.model_id,
        )
