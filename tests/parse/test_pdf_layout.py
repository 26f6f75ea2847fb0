"""Layout-aware PDF parsing: two columns in reading order, ruled tables as rows with headers,
bold headings, running headers and footers removed and counted, a box on every node and chunk."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from veracity.model.contracts import ChunkKind
from veracity.parse.chunking import chunk_for_index
from veracity.parse.documents import make_document
from veracity.parse.nodes import NodeKind
from veracity.parse.pages import with_pages
from veracity.testing.pdf_builder import table_rules

pytest.importorskip("pdfplumber", reason="PDF parsing needs the 'pdf' extra (pdfplumber)")

from veracity.parse.pdf import parse_pdf

LEFT = [
    "Left one: backups run every night.",
    "They take forty minutes in all.",
    "",
    "Left two: restores need a ticket.",
    "An operator approves each one.",
]
RIGHT = [
    "Right one: audit logs are kept.",
    "Exports are written as CSV files.",
    "",
    "Right two: keys rotate yearly.",
    "Old keys stop working at once.",
]


def two_columns() -> list[tuple[object, ...]]:
    lines: list[tuple[object, ...]] = [(18, "Operations Handbook", 740)]
    for n, (left, right) in enumerate(zip(LEFT, RIGHT, strict=True)):
        y = 700 - 14 * n
        if left:
            lines.append((11, left, y, 72))
            lines.append((11, right, y, 330))
    return lines


def paragraphs(texts: list[str]) -> list[str]:
    out, current = [], []
    for text in [*texts, ""]:
        if text:
            current.append(text)
        elif current:
            out.append("\n".join(current))
            current = []
    return out


def test_two_column_page_reads_every_paragraph_in_order(pdf_bytes: Callable[..., bytes]) -> None:
    parsed = parse_pdf(pdf_bytes([two_columns()]), source="columns.pdf")
    body = [n.text for n in parsed.nodes if n.kind is NodeKind.PARAGRAPH]
    assert body == paragraphs(LEFT) + paragraphs(RIGHT)
    assert parsed.nodes[0].kind is NodeKind.HEADING and parsed.title == "Operations Handbook"


TABLE_PAGE = [
    (16, "Plans", 740),
    (11, "Prices per seat and month, billed yearly.", 715),
    (11, "Plan", 685, 80, "bold"),
    (11, "Price", 685, 210, "bold"),
    (11, "Team", 665, 80),
    (11, "$12.50", 665, 210),
    (11, "Enterprise", 645, 80),
    (11, "$30", 645, 210),
]
TABLE_RULES = {0: table_rules([72, 200, 330], [640, 660, 680, 700])}


def test_ruled_table_becomes_rows_with_their_header(pdf_bytes: Callable[..., bytes]) -> None:
    parsed = parse_pdf(pdf_bytes([TABLE_PAGE], rules=TABLE_RULES), source="plans.pdf")
    (table,) = [n for n in parsed.nodes if n.kind is NodeKind.TABLE]
    assert table.header == ("Plan", "Price")
    assert table.rows == (("Team", "$12.50"), ("Enterprise", "$30"))
    assert table.row_texts() == ("Plan: Team; Price: $12.50", "Plan: Enterprise; Price: $30")
    assert table.heading_path == ("Plans",) and table.bbox is not None
    assert parsed.diagnostics.tables == 1
    # the cell texts are not read a second time as loose lines
    assert parsed.body.count("$12.50") == 1


def test_table_chunk_keeps_its_header_and_box(
    pdf_bytes: Callable[..., bytes], governance: dict[str, object]
) -> None:
    parsed = parse_pdf(pdf_bytes([TABLE_PAGE], rules=TABLE_RULES), source="plans.pdf")
    chunks = with_pages(chunk_for_index(make_document(governance, parsed.body)), parsed)
    (table,) = [c for c in chunks if "| Team | $12.50 |" in c.text]
    assert "| Plan | Price |\n| --- | --- |\n| Team | $12.50 |" in table.text  # the row keeps its header
    assert table.kind in (ChunkKind.TABLE, ChunkKind.MIXED)
    assert [box.page for box in table.boxes] == [1]


def handbook_page(number: int, body: str) -> list[tuple[object, ...]]:
    return [
        (9, "ACME Corp - Internal", 770),
        (14, f"Section {number}", 720),
        (11, body, 690),
        (9, f"Page {number} of 3", 30),
    ]


def test_running_headers_and_footers_are_gone_and_counted(pdf_bytes: Callable[..., bytes]) -> None:
    bodies = ["Backups run nightly.", "Restores need a ticket.", "Keys rotate yearly."]
    pages = [handbook_page(n, body) for n, body in enumerate(bodies, 1)]
    parsed = parse_pdf(pdf_bytes(pages), source="handbook.pdf")
    assert "ACME Corp" not in parsed.body and "Page 1 of 3" not in parsed.body
    assert parsed.diagnostics.header_footer_lines_removed == 6
    assert [n.text for n in parsed.nodes if n.kind is NodeKind.PARAGRAPH] == bodies
    assert "6 header/footer lines removed" in parsed.diagnostics.summary()


def test_bold_line_is_a_heading(pdf_bytes: Callable[..., bytes]) -> None:
    page = [(11, "Rollback", 740, 72, "bold"), (11, "Run the rollback tool, then restart.", 720)]
    parsed = parse_pdf(pdf_bytes([page]), source="bold.pdf")
    assert [(n.kind, n.heading_path) for n in parsed.nodes] == [
        (NodeKind.HEADING, ("Rollback",)),
        (NodeKind.PARAGRAPH, ("Rollback",)),
    ]


def test_every_node_and_chunk_has_its_page_and_box(
    pdf_bytes: Callable[..., bytes], governance: dict[str, object]
) -> None:
    pages = [two_columns(), [(14, "Second Page", 740), (11, "More text on the second page.", 700)]]
    parsed = parse_pdf(pdf_bytes(pages), source="boxes.pdf")
    for node in parsed.nodes:
        assert node.bbox is not None and node.bbox.page == node.page and node.source == "text"
    chunks = with_pages(chunk_for_index(make_document(governance, parsed.body)), parsed)
    assert chunks and all(chunk.boxes for chunk in chunks)
    for chunk in chunks:
        pages = range(chunk.page_start or 0, (chunk.page_end or 0) + 1)
        assert [box.page for box in chunk.boxes] == list(pages)
        assert chunk.ocr_confidence is None and chunk.ocr_numbers == ()
    diagnostics = parsed.diagnostics
    assert (diagnostics.pages_total, diagnostics.pages_parsed, diagnostics.empty_pages) == (2, 2, 0)
    assert diagnostics.ocr_pages == 0 and diagnostics.bytes > 0
