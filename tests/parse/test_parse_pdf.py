"""PDF to structure nodes: page numbers, heading heuristics, Chinese text, damaged files."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from veracity.parse.chunking import chunk_document
from veracity.parse.documents import make_document
from veracity.parse.errors import CorruptFileError, EmptySourceError, NoTextError
from veracity.parse.nodes import NodeKind
from veracity.parse.parsers import parse_file

pytest.importorskip("pdfplumber", reason="PDF parsing needs the 'pdf' extra (pdfplumber)")
pypdf = pytest.importorskip("pypdf", reason="the encrypted PDF is written with pypdf (the 'test' extra)")

from veracity.parse.pdf import parse_pdf  # noqa: E402

CHINESE = "单点登录需要企业计划。"
PAGES = [
    [
        (20, "Install Guide", 740),
        (11, "This guide explains how to set up", 710),
        (11, "Starship on a new machine.", 697),
        (14, "Requirements", 660),
        (11, "You need Python 3.11 or newer.", 640),
        (11, "- a 64-bit system", 620),
        (11, "- 2 GB of memory", 607),
        (11, CHINESE, 580),
    ],
    [
        (14, "Upgrade", 740),
        (11, "Run the upgrade tool, then restart.", 720),
    ],
]


@pytest.fixture
def guide(pdf_bytes: Callable[..., bytes]) -> bytes:
    return pdf_bytes(PAGES, cjk=[CHINESE])


def test_nodes_carry_page_numbers_and_heading_paths(guide: bytes, consistent: Callable[..., None]) -> None:
    parsed = parse_pdf(guide, source="guide.pdf")
    summary = [(n.kind, n.page, n.heading_path) for n in parsed.nodes]
    assert summary == [
        (NodeKind.HEADING, 1, ("Install Guide",)),
        (NodeKind.PARAGRAPH, 1, ("Install Guide",)),
        (NodeKind.HEADING, 1, ("Install Guide", "Requirements")),
        (NodeKind.PARAGRAPH, 1, ("Install Guide", "Requirements")),
        (NodeKind.LIST, 1, ("Install Guide", "Requirements")),
        (NodeKind.PARAGRAPH, 1, ("Install Guide", "Requirements")),
        (NodeKind.HEADING, 2, ("Install Guide", "Upgrade")),
        (NodeKind.PARAGRAPH, 2, ("Install Guide", "Upgrade")),
    ]
    assert parsed.nodes[1].text == "This guide explains how to set up\nStarship on a new machine."
    assert parsed.nodes[4].text == "- a 64-bit system\n- 2 GB of memory"
    assert parsed.title == "Install Guide"
    assert parsed.page_at(parsed.nodes[-1].start) == 2
    consistent(parsed)


def test_chinese_text_survives(guide: bytes) -> None:
    assert CHINESE in parse_pdf(guide).body


def test_structural_chunks_of_a_pdf(guide: bytes, governance: dict[str, object]) -> None:
    parsed = parse_pdf(guide)
    chunks = chunk_document(make_document(governance, parsed.body), "structural")
    assert [c.heading_path for c in chunks] == [
        ("Install Guide",),
        ("Install Guide", "Requirements"),
        ("Install Guide", "Upgrade"),
    ]
    assert [parsed.page_at(c.start) for c in chunks] == [1, 1, 2]


def test_parse_file_dispatches_pdf(tmp_path: Path, guide: bytes) -> None:
    path = tmp_path / "Guide.PDF"
    path.write_bytes(guide)
    assert parse_file(path).fmt == "pdf"


@pytest.mark.parametrize(
    "data",
    [b"%PDF-1.4\nthis is not a pdf", b"GIF89a not a pdf at all", b"%PDF-1.7\n" + bytes(range(256)) * 4],
    ids=["garbage-after-header", "no-header", "binary-noise"],
)
def test_corrupt_pdf_is_a_clear_error(data: bytes) -> None:
    with pytest.raises((CorruptFileError, EmptySourceError), match=r"broken\.pdf"):
        parse_pdf(data, source="broken.pdf")


def test_truncated_pdf_is_rejected(guide: bytes) -> None:
    with pytest.raises((CorruptFileError, EmptySourceError)):
        parse_pdf(guide[: len(guide) // 3], source="cut.pdf")


def test_encrypted_pdf_is_rejected_with_advice(guide: bytes) -> None:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(guide)))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(CorruptFileError, match="encrypted"):
        parse_pdf(buffer.getvalue(), source="locked.pdf")


def test_pdf_without_text_is_a_no_text_failure(pdf_bytes: Callable[..., bytes]) -> None:
    with pytest.raises(NoTextError, match="no text: its 1 page") as caught:
        parse_pdf(pdf_bytes([[]]), source="blank.pdf")
    assert not isinstance(caught.value, EmptySourceError)  # a failure, never skipped as empty
    assert caught.value.diagnostics.pages_total == 1 and caught.value.diagnostics.empty_pages == 1


def test_pdfminer_warnings_are_quiet_during_a_parse_only(pdf_bytes, caplog) -> None:
    """A font box pdfminer cannot read ("Could not get FontBBox…") changes no text; its warning,
    printed on every ingest of the file, is dropped while parsing and nowhere else."""
    import logging

    good = pdf_bytes([[(12, "Heading", 740), (11, CHINESE, 700)]], cjk=[CHINESE])
    broken = good.replace(b"/FontBBox [0 -200 1000 900]", b"/FontBBox [0 -200 1000 /No]")
    assert len(broken) == len(good) and broken != good  # the cross-reference offsets still hold
    miner = logging.getLogger("pdfminer")
    with caplog.at_level(logging.WARNING):
        parsed = parse_pdf(broken)
        assert CHINESE in parsed.body
        assert not [r for r in caplog.records if r.name.startswith("pdfminer")]
        assert miner.level == logging.NOTSET  # restored: pdfminer's own logging is left as it was
        logging.getLogger("pdfminer.pdffont").warning("outside a parse")
    assert [r.getMessage() for r in caplog.records if r.name.startswith("pdfminer")] == ["outside a parse"]


def test_look_alike_radicals_from_a_printed_pdf_become_the_ideographs(pdf_bytes) -> None:
    # a browser-printed PDF maps 支, 一 and 小 to Kangxi radicals (U+2F00 block) in its text layer
    radicals = "⽀持⼀级⼩时，：（OIDC）"
    body = parse_pdf(pdf_bytes([[(14, "说明", 740), (11, radicals, 700)]], cjk=[radicals, "说明"])).body
    assert "支持一级小时，：（OIDC）" in body
    assert not any("\u2e80" <= ch <= "\u2fdf" for ch in body)


@pytest.mark.parametrize(
    ("metadata", "title"),
    [
        ("router.html", None),  # printed from a browser: the file's name, not the document's title
        ("Microsoft Word - draft.docx", None),
        ("Untitled", None),
        ("  ", None),
        ("Orion Router Manual", "Orion Router Manual"),
        ("v3.2 Release Notes", "v3.2 Release Notes"),
    ],
)
def test_a_metadata_title_naming_a_file_gives_way_to_the_first_heading(metadata: str, title: str | None):
    from veracity.parse.pdf import _meaningful_title

    assert _meaningful_title(metadata) == title
