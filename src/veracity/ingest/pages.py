"""Page numbers of chunks, from the structure nodes of a parsed source.

The PDF parser gives every node its 1-based page (:class:`~veracity.ingest.nodes.Node`);
a chunk's pages run from the first to the last page of the nodes its
``[start, end)`` span overlaps. Formats without pages give ``None``.

Pages are set here, after chunking, rather than by the chunker: the chunker
only sees the normalized body (it is format-blind), and chunk ids never depend
on pages. Both functions are pure.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..model.contracts import Chunk
from .nodes import Node, ParsedSource

__all__ = ["page_span", "with_pages"]


def _span(nodes: Sequence[Node], ends: Sequence[int], start: int, end: int) -> tuple[int, int] | None:
    pages: list[int] = []
    # nodes are in body order and never overlap, so their ends are sorted too:
    # the first node that can overlap is the first ending after ``start``
    for index in range(bisect.bisect_right(ends, start), len(nodes)):
        node = nodes[index]
        if node.start >= end:
            break
        if node.page is not None:
            pages.append(node.page)
    return (min(pages), max(pages)) if pages else None


def page_span(nodes: Sequence[Node], start: int, end: int) -> tuple[int, int] | None:
    """``(first, last)`` page of the nodes overlapping ``[start, end)``; ``None`` if none has a page.

    ``nodes`` must be in body order and must not overlap, as
    :func:`~veracity.ingest.nodes.assemble` makes them.
    """
    return _span(nodes, [node.end for node in nodes], start, end)


def with_pages(chunks: Iterable[Chunk], parsed: ParsedSource) -> tuple[Chunk, ...]:
    """``chunks`` with ``page_start``/``page_end`` set from ``parsed``'s nodes; ids and text unchanged.

    The chunks must be cut from ``parsed.body`` (a document made from it). A
    chunk whose text is not ``parsed.body[start:end]`` gets no pages rather
    than wrong ones. For a source without pages the chunks come back as given.
    """
    chunks = tuple(chunks)
    if all(node.page is None for node in parsed.nodes):
        return chunks
    ends = [node.end for node in parsed.nodes]
    paged: list[Chunk] = []
    for chunk in chunks:
        span = None
        if parsed.body[chunk.start : chunk.end] == chunk.text:
            span = _span(parsed.nodes, ends, chunk.start, chunk.end)
        first, last = span if span is not None else (None, None)
        paged.append(replace(chunk, page_start=first, page_end=last))
    return tuple(paged)
