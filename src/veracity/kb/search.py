"""Ranked permitted chunks for tools that bring their own generator (retrievers, agents).

A search runs the same pipeline as an answer up to the evidence packet:
eligibility before scoring, recall, fusion, rerank, the return gate against the
live catalog, quarantine and the per-tier evidence cut. What comes back is
only what the principal may use, each chunk with where it lives (document,
revision, source path, heading path, pages, trust) and its scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..model.contracts import Document, Hit
from ..text.tokens import tokenize

__all__ = ["SearchHit", "search_hits", "searchable"]


def searchable(query: str) -> bool:
    """Whether ``query`` holds a word at all. One of punctuation or symbols alone matches no
    text; only the dense channel would rank anything, by an embedding of nothing, so a search
    for it finds nothing (an answer abstains on its own: no evidence covers it)."""
    return bool(tokenize(query, drop_stopwords=False))


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One permitted chunk, ranked, with its citation data and scores."""

    rank: int
    chunk_id: str
    document_id: str
    source_id: str
    revision: str
    title: str
    path: str
    heading_path: tuple[str, ...]
    page_start: int | None
    page_end: int | None
    trust: str
    text: str
    lexical: float | None
    semantic: float | None
    fusion: float | None
    rerank: float | None

    def metadata(self) -> dict[str, Any]:
        """Everything but the text, as plain data (what adapters attach to their documents)."""
        data = asdict(self)
        del data["text"]
        data["heading_path"] = list(self.heading_path)
        return data


def search_hits(
    hits: tuple[Hit, ...], documents: Mapping[str, Document], paths: Mapping[tuple[str, str], str]
) -> list[SearchHit]:
    """The evidence hits of a retrieval as :class:`SearchHit` records, in rank order."""
    found = []
    for hit in hits:
        chunk, scores = hit.chunk, hit.scores
        document = documents[chunk.document_id]
        found.append(
            SearchHit(
                rank=hit.rank,
                chunk_id=chunk.chunk_id,
                document_id=chunk.document_id,
                source_id=document.source_id,
                revision=document.revision,
                title=document.title,
                path=paths.get((document.tenant, document.source_id), ""),
                heading_path=chunk.heading_path,
                page_start=chunk.page_start,
                page_end=chunk.page_end,
                trust=document.trust.value,
                text=chunk.text,
                lexical=scores.lexical,
                semantic=scores.semantic,
                fusion=scores.fusion,
                rerank=scores.rerank,
            )
        )
    return found
