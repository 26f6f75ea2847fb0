"""Chunk page numbers from the parsed source's nodes (pure functions)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from veracity.parse.chunking import chunk_document
from veracity.parse.documents import make_document
from veracity.parse.nodes import Block, NodeKind, assemble
from veracity.parse.pages import page_span, with_pages
from veracity.parse.parsers import parse_text

PAGED = assemble(
    [
        Block(NodeKind.HEADING, "Guide", page=1),
        Block(NodeKind.PARAGRAPH, "First page text.", page=1),
        Block(NodeKind.HEADING, "Upgrade", level=2, page=2),
        Block(NodeKind.PARAGRAPH, "Bottom of page two.", page=2),
        Block(NodeKind.PARAGRAPH, "Top of page three.", page=3),
    ],
    fmt="pdf",
)


def _span_of(*texts: str) -> tuple[int, int]:
    nodes = [node for node in PAGED.nodes if node.text in texts]
    return nodes[0].start, nodes[-1].end


def test_a_span_over_two_pages_gives_both() -> None:
    assert page_span(PAGED.nodes, *_span_of("Bottom of page two.", "Top of page three.")) == (2, 3)


@pytest.mark.parametrize(
    ("texts", "pages"),
    [
        (("First page text.",), (1, 1)),
        (("Top of page three.",), (3, 3)),
        (("## Upgrade", "Bottom of page two."), (2, 2)),
    ],
)
def test_a_span_within_pages(texts: tuple[str, ...], pages: tuple[int, int]) -> None:
    assert page_span(PAGED.nodes, *_span_of(*texts)) == pages


def test_part_of_a_node_counts_and_the_gap_between_nodes_does_not() -> None:
    first = PAGED.nodes[1]
    assert page_span(PAGED.nodes, first.start + 3, first.start + 5) == (1, 1)
    assert page_span(PAGED.nodes, first.end, first.end + 2) is None  # the "\n\n" between nodes
    assert page_span(PAGED.nodes, first.end - 1, first.end + 3) == (1, 2)  # touches the next heading
    assert page_span(PAGED.nodes, 0, len(PAGED.body)) == (1, 3)
    assert page_span((), 0, 10) is None


def test_formats_without_pages_give_none() -> None:
    parsed = parse_text("# Guide\n\nSome text.\n\nMore text.", "markdown")
    assert page_span(parsed.nodes, 0, len(parsed.body)) is None


def test_with_pages_keeps_ids_and_text(governance: dict[str, Any]) -> None:
    document = make_document(governance, PAGED.body)
    chunks = chunk_document(document, "structural")
    paged = with_pages(chunks, PAGED)
    assert [(c.page_start, c.page_end) for c in paged] == [(1, 1), (2, 3)]
    assert [dataclasses.replace(c, page_start=None, page_end=None) for c in paged] == list(chunks)
    assert [c.chunk_id for c in paged] == [c.chunk_id for c in chunks]


def test_with_pages_leaves_non_pdf_chunks_alone(governance: dict[str, Any]) -> None:
    parsed = parse_text("# Guide\n\nSome text.", "markdown")
    chunks = chunk_document(make_document(governance, parsed.body), "structural")
    assert with_pages(chunks, parsed) == chunks
    assert all(c.page_start is None and c.page_end is None for c in chunks)


def test_a_chunk_not_cut_from_the_parsed_body_gets_no_pages(governance: dict[str, Any]) -> None:
    other = make_document(governance, PAGED.body.replace("First", "Frist"))
    chunks = chunk_document(other, "structural")
    assert [(c.page_start, c.page_end) for c in with_pages(chunks, PAGED)] == [(None, None), (2, 3)]


def test_pages_of_a_real_pdf(pdf_bytes: Callable[..., bytes], governance: dict[str, Any]) -> None:
    pytest.importorskip("pypdf", reason="PDF parsing needs the 'pdf' extra (pypdf)")
    from veracity.parse.pdf import parse_pdf

    parsed = parse_pdf(
        pdf_bytes(
            [
                [(20, "Guide", 740), (11, "Install it first.", 700)],
                [(14, "Upgrade", 740), (11, "Stop the service.", 700)],
                [(11, "Then start it again.", 740)],
            ]
        )
    )
    chunks = with_pages(chunk_document(make_document(governance, parsed.body), "structural"), parsed)
    assert [(c.heading_path, c.page_start, c.page_end) for c in chunks] == [
        (("Guide",), 1, 1),
        (("Guide", "Upgrade"), 2, 3),
    ]
