"""The derived search index: built from the catalog, rebuildable, possibly stale.

An ``IndexSnapshot`` holds the governance metadata of every indexed document *as
it was when the index was built*, the chunks, one BM25 index per tenant and the
dense vectors. Lexical term statistics are computed over the eligible chunks of
each query, so documents an asker may not see (another tenant's, a role's, a
withdrawn one) change none of the asker's scores. The eligibility filter
runs on this snapshot; the return gate then asks the live catalog again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..model.contracts import Chunk, Document, Trust
from ..model.governance import EligibilityScope, EligibleDocuments
from ..text.tokens import tokenize
from .dense import DenseIndex, Embedder
from .lexical import BM25Index, TermStatistics


def index_text(chunk: Chunk) -> str:
    """What the channels see of a chunk: its context prefix, then its text."""
    return f"{chunk.context_prefix}\n{chunk.text}" if chunk.context_prefix else chunk.text


def ids_by_trust(documents: Mapping[str, Document]) -> dict[Trust, frozenset[str]]:
    """The ids of ``documents`` by their source's trust, every tier present (perhaps empty)."""
    tiers: dict[Trust, set[str]] = {trust: set() for trust in Trust}
    for document_id, document in documents.items():
        tiers[document.trust].add(document_id)
    return {trust: frozenset(ids) for trust, ids in tiers.items()}


class SearchBackend(Protocol):
    """The derived index as the pipeline sees it.

    ``documents`` is the governance metadata of every indexed document as of
    the build (the eligibility filter runs on it); ``chunks`` and
    ``chunks_by_document`` give the indexed chunks. Both searches score only
    chunks of ``eligible_document_ids`` (an empty collection scores nothing:
    there is no "everything" value), return at most ``k`` ``(chunk_id, score)``
    pairs, best first, ties by chunk id, and only chunks with a lexical score
    above 0. Lexical term statistics (document count, document frequencies,
    average length) come from the eligible chunks only: adding, changing or
    removing a chunk outside the eligible set changes no score.
    """

    @property
    def embedder_id(self) -> str:
        """Model id of the vectors."""
        ...

    @property
    def documents(self) -> Mapping[str, Document]:
        """Governance metadata of every indexed document, as of the build."""
        ...

    @property
    def chunks(self) -> Mapping[str, Chunk]:
        """Indexed chunks by id."""
        ...

    @property
    def document_ids_by_trust(self) -> Mapping[Trust, frozenset[str]]:
        """:func:`ids_by_trust` of ``documents`` (kept with them: an ask splits its eligible
        documents by trust with set intersections, not a lookup per document)."""
        ...

    @property
    def chunks_by_document(self) -> Mapping[str, tuple[str, ...]]:
        """Indexed chunk ids of each document, in order."""
        ...

    def lexical_search(
        self, tenant: str, query_tokens: Sequence[str], *, k: int, eligible_document_ids: Collection[str]
    ) -> list[tuple[str, float]]:
        """BM25 top ``k`` among the eligible documents' chunks of ``tenant``."""
        ...

    def dense_search(
        self,
        tenant: str,
        query_vector: npt.NDArray[np.float32],
        *,
        k: int,
        eligible_document_ids: Collection[str],
        model_id: str,
    ) -> list[tuple[str, float]]:
        """Cosine top ``k`` among the eligible documents' chunks of ``tenant``."""
        ...

    def document_frequencies(
        self, tenant: str, terms: Sequence[str], *, eligible_document_ids: Collection[str]
    ) -> tuple[int, dict[str, int]]:
        """The eligible chunks of ``tenant`` (count) and how many of them hold each term.

        Statistics cover only what the principal may use, so answer decisions
        built on them never depend on chunks the principal may not see.
        """
        ...


@runtime_checkable
class FiltersEligibility(Protocol):
    """A backend that runs the eligibility step itself (in SQL, say) rather than in Python.

    The outcome must equal :func:`veracity.model.governance.eligible_documents` over
    the backend's ``documents``: the same eligible ids, the same named exclusions
    with the same reasons, the same hidden count. Backends without it get the
    Python filter.
    """

    def eligible_documents(self, scope: EligibilityScope) -> EligibleDocuments:
        """Eligible documents of the principal's tenant, named exclusions, hidden count."""
        ...


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

    @cached_property
    def document_ids_by_trust(self) -> Mapping[Trust, frozenset[str]]:
        """:func:`ids_by_trust` of ``documents``, computed once."""
        return ids_by_trust(self.documents)

    def _allowed(self, tenant: str, eligible_document_ids: Collection[str]) -> list[str]:
        return sorted(
            chunk_id
            for document_id in eligible_document_ids
            if self.documents[document_id].tenant == tenant
            for chunk_id in self.chunks_by_document[document_id]
        )

    def lexical_search(
        self, tenant: str, query_tokens: Sequence[str], *, k: int, eligible_document_ids: Collection[str]
    ) -> list[tuple[str, float]]:
        """BM25 over the tenant's index, scoring and counting only the eligible documents' chunks."""
        index = self.lexical.get(tenant)
        allowed = self._allowed(tenant, eligible_document_ids)
        if index is None or not allowed:
            return []
        return index.search(query_tokens, k=k, allowed=allowed, statistics=TermStatistics.ALLOWED)

    def document_frequencies(
        self, tenant: str, terms: Sequence[str], *, eligible_document_ids: Collection[str]
    ) -> tuple[int, dict[str, int]]:
        """Eligible chunk count and per-term chunk frequencies among them (see ``SearchBackend``)."""
        index = self.lexical.get(tenant)
        allowed = self._allowed(tenant, eligible_document_ids)
        if index is None or not allowed:
            return 0, dict.fromkeys(terms, 0)
        return index.document_frequencies(terms, allowed=allowed)

    def dense_search(
        self,
        tenant: str,
        query_vector: npt.NDArray[np.float32],
        *,
        k: int,
        eligible_document_ids: Collection[str],
        model_id: str,
    ) -> list[tuple[str, float]]:
        """Exact cosine search, scoring only the eligible documents' chunks."""
        allowed = self._allowed(tenant, eligible_document_ids)
        if not allowed:
            return []
        found = self.dense.search(query_vector, k=k, allowed=allowed, model_id=model_id)
        return [(hit.id, hit.score) for hit in found]
