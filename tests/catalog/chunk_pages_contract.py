"""Chunk pages in the Store contract: a mixin of ``StoreContract``, so every store runs it."""

from __future__ import annotations

import dataclasses

import pytest

from tests.catalog.builders import make_chunks, make_doc
from veracity.catalog.store import Store
from veracity.model.errors import ValidationError

PAGES = [(None, None), (1, 1), (4, 7)]


class ChunkPagesContract:
    """A store gives back each chunk's pages as stored, ``None`` included, and refuses impossible ones."""

    def test_chunk_pages_round_trip(self, store: Store) -> None:
        document = make_doc()
        chunks = [
            dataclasses.replace(chunk, page_start=first, page_end=last)
            for chunk, (first, last) in zip(make_chunks(document), PAGES, strict=True)
        ]
        store.put_document(document, chunks)
        assert [(c.page_start, c.page_end) for c in store.get_chunks(document.document_id)] == PAGES
        assert [store.get_chunk(c.chunk_id) for c in chunks] == chunks

    def test_the_same_chunks_with_other_pages_are_refused(self, store: Store) -> None:
        document = make_doc()
        chunks = make_chunks(document)
        store.put_document(document, chunks)
        unpaged = [dataclasses.replace(c, page_start=None, page_end=None) for c in chunks]
        with pytest.raises(ValidationError, match="chunks"):
            store.put_document(document, unpaged)
        assert store.get_chunks(document.document_id) == chunks

    @pytest.mark.parametrize("pages", [(0, 1), (2, 1), (1, None), (None, 1), (-2, -1)])
    def test_impossible_pages_are_refused(self, store: Store, pages: tuple[int | None, int | None]) -> None:
        document = make_doc()
        chunks = make_chunks(document)
        chunks[1] = dataclasses.replace(chunks[1], page_start=pages[0], page_end=pages[1])
        with pytest.raises(ValidationError, match="pages"):
            store.put_document(document, chunks)
        assert store.find_documents() == []
