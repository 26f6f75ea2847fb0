"""Fixtures for the ingest tests: governance metadata and a small hand-written PDF builder.

The PDF builder writes every object and the cross-reference table itself, so
the test files have a known origin. Latin text uses the standard Helvetica
font; text given with ``cjk=True`` is written with a Type0 font whose
``ToUnicode`` map is generated here, so Chinese text extracts without any
font file installed (viewers would substitute the glyphs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

PdfLine = tuple[float, str, float]  # (font size, text, y position from the bottom)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _cmap(codes: dict[str, int]) -> bytes:
    lines = [
        "/CIDInit /ProcSet findresource begin",
        "12 dict begin",
        "begincmap",
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        "/CMapName /Adobe-Identity-UCS def",
        "/CMapType 2 def",
        "1 begincodespacerange",
        "<0000> <FFFF>",
        "endcodespacerange",
        f"{len(codes)} beginbfchar",
        *(f"<{code:04X}> <{ord(char):04X}>" for char, code in codes.items()),
        "endbfchar",
        "endcmap",
        "CMapName currentdict /CMap defineresource pop",
        "end",
        "end",
    ]
    return "\n".join(lines).encode("ascii")


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def build_pdf(pages: Sequence[Sequence[PdfLine]], *, cjk: Sequence[str] = ()) -> bytes:
    """A valid PDF with one content stream per page; lines whose text is in ``cjk`` use the CJK font."""
    objects: list[bytes] = [b"", b""]  # 1: catalog, 2: page tree (filled in at the end)

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    helvetica = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    fonts = b"/F1 %d 0 R" % helvetica
    codes = {char: index + 1 for index, char in enumerate(sorted({c for text in cjk for c in text}))}
    if codes:
        to_unicode = add(_stream(_cmap(codes)))
        descriptor = add(
            b"<< /Type /FontDescriptor /FontName /SimSun /Flags 4 /FontBBox [0 -200 1000 900]"
            b" /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>"
        )
        cid_font = add(
            b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /SimSun /CIDSystemInfo"
            b" << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >>"
            b" /FontDescriptor %d 0 R /DW 1000 >>" % descriptor
        )
        type0 = add(
            b"<< /Type /Font /Subtype /Type0 /BaseFont /SimSun /Encoding /Identity-H"
            b" /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>" % (cid_font, to_unicode)
        )
        fonts += b" /F2 %d 0 R" % type0
    kids = []
    for page in pages:
        operations = []
        for size, text, y in page:
            if text in cjk:
                glyphs = "".join(f"{codes[char]:04X}" for char in text)
                operations.append(f"BT /F2 {size} Tf 72 {y} Td <{glyphs}> Tj ET")
            else:
                operations.append(f"BT /F1 {size} Tf 72 {y} Td ({_escape(text)}) Tj ET")
        contents = add(_stream("\n".join(operations).encode("latin-1")))
        kids.append(
            add(
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
                b" /Resources << /Font << %s >> >> /Contents %d 0 R >>" % (fonts, contents)
            )
        )
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % kid for kid in kids),
        len(kids),
    )
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.fixture
def pdf_bytes() -> Callable[..., bytes]:
    """The hand-written PDF builder (see :func:`build_pdf`)."""
    return build_pdf


@pytest.fixture
def governance() -> dict[str, Any]:
    """Complete governance metadata for a public, active, official document."""
    return {
        "id": "guide",
        "revision": "1",
        "title": "Guide",
        "tenant": "acme",
        "valid_from": "2026-01-01",
        "status": "active",
        "visibility": "public",
        "trust": "official",
    }


@pytest.fixture
def write_sidecar() -> Callable[[Path, dict[str, Any]], Path]:
    """Write ``NAME.meta.yaml`` (full-name form) next to a source file."""
    import yaml

    def write(path: Path, metadata: dict[str, Any]) -> Path:
        sidecar = path.with_name(path.name + ".meta.yaml")
        sidecar.write_text(yaml.safe_dump(metadata, allow_unicode=True), encoding="utf-8")
        return sidecar

    return write


def check_parsed(parsed: Any, *, chunker_agrees: bool = True) -> None:
    """The invariants every parse keeps: normalized body, exact node offsets, chunker agreement.

    With ``chunker_agrees``, the structural chunker sees exactly the parser's
    blocks (same kinds and spans), and every chunk has its node's heading path.
    """
    from veracity.chunking import block_spans, chunk_document
    from veracity.documents import make_document
    from veracity.text import normalize_body

    assert normalize_body(parsed.body) == parsed.body
    previous_end = -1
    for node in parsed.nodes:
        assert parsed.body[node.start : node.end] == node.text
        assert node.text and node.text == node.text.strip()
        assert node.start > previous_end
        previous_end = node.end
    if not chunker_agrees:
        return
    expected = [(node.chunk_kind, node.start, node.end) for node in parsed.nodes if node.chunk_kind]
    assert block_spans(parsed.body) == expected
    if not parsed.body.strip():
        return
    metadata = {
        "id": "check",
        "revision": "1",
        "title": "Check",
        "tenant": "acme",
        "valid_from": "2026-01-01",
        "status": "active",
        "visibility": "public",
        "trust": "official",
    }
    document = make_document(metadata, parsed.body)
    assert document.body == parsed.body
    chunks = chunk_document(document, "structural")
    for node in parsed.nodes:
        if node.chunk_kind is None:
            continue
        holders = [c for c in chunks if c.start <= node.start < c.end]
        assert holders, node
        assert holders[0].heading_path == node.heading_path
        if node.chunk_kind.value in ("table", "code"):
            assert holders[0].start <= node.start and node.end <= holders[0].end


@pytest.fixture
def consistent() -> Callable[..., None]:
    """:func:`check_parsed` as a fixture."""
    return check_parsed
