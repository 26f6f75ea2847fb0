"""Pages, boxes and OCR marks of chunks, from the structure nodes of a parsed source.

The PDF and image parsers give every node its 1-based page and its box
(:class:`~veracity.parse.nodes.Node`); a chunk's pages run from the first to
the last page of the nodes its ``[start, end)`` span overlaps, and its boxes
are the union of those nodes' boxes, one per page. A chunk overlapping OCR'd
nodes gets their mean confidence (weighted by node length) and the numbers OCR
read in them that occur in the chunk's text. Formats without pages give
``None`` and no boxes.

Pages are set here, after chunking, rather than by the chunker: the chunker
only sees the normalized body (it is format-blind), and chunk ids never depend
on pages. Both functions are pure.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..model.contracts import Chunk, OcrNumber, PageBox
from .nodes import Node, ParsedSource

__all__ = ["page_span", "with_pages"]


def _overlapping(nodes: Sequence[Node], ends: Sequence[int], start: int, end: int) -> list[Node]:
    found: list[Node] = []
    for index in range(bisect.bisect_right(ends, start), len(nodes)):
        if nodes[index].start >= end:
            break
        found.append(nodes[index])
    return found


def _layout(chunk: Chunk, nodes: Sequence[Node]) -> Chunk:
    """``chunk`` with the boxes, OCR confidence and OCR numbers of the ``nodes`` it overlaps."""
    boxes: dict[int, PageBox] = {}
    for node in nodes:
        if node.bbox is not None:
            page = node.bbox.page
            boxes[page] = boxes[page].union(node.bbox) if page in boxes else node.bbox
    read = [node for node in nodes if node.source == "ocr" and node.confidence is not None]
    confidence = None
    numbers: tuple[OcrNumber, ...] = ()
    if read:
        weight = sum(len(node.text) for node in read) or 1
        confidence = round(sum((node.confidence or 0.0) * len(node.text) for node in read) / weight, 4)
        seen: set[tuple[str, float]] = set()
        kept: list[OcrNumber] = []
        for node in read:
            for number in node.ocr_numbers:
                if number.text in chunk.text and (number.text, number.confidence) not in seen:
                    seen.add((number.text, number.confidence))
                    kept.append(number)
        numbers = tuple(kept)
    ordered = tuple(boxes[page] for page in sorted(boxes))
    return replace(chunk, boxes=ordered, ocr_confidence=confidence, ocr_numbers=numbers)


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
    :func:`~veracity.parse.nodes.assemble` makes them.
    """
    return _span(nodes, [node.end for node in nodes], start, end)


def with_pages(chunks: Iterable[Chunk], parsed: ParsedSource) -> tuple[Chunk, ...]:
    """``chunks`` with pages, boxes and OCR marks set from ``parsed``'s nodes; ids and text unchanged.

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
        chunk = replace(chunk, page_start=first, page_end=last)
        if span is not None:
            chunk = _layout(chunk, _overlapping(parsed.nodes, ends, chunk.start, chunk.end))
        paged.append(chunk)
    return tuple(paged)
