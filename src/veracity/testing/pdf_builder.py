"""Minimal valid PDFs, written byte by byte, for tests and benchmarks (not used at run time).

Every object and the cross-reference table are written here, so generated
files have a known origin and need no PDF library. A page is a list of
:data:`PdfLine` ``(font size, text, y)``, each line placed at x = 72 pt and
``y`` pt from the bottom of a US-letter page; ``(font size, text, y, x)``
places it at ``x``, and ``(font size, text, y, x, "bold")`` sets it in
Helvetica-Bold. ``rules`` draws line segments on a page (a table's grid);
``scans`` puts a JPEG image over a whole page, as a scanner writes it.

Latin-1 text is set in the standard Helvetica font. Lines whose text is listed
in ``cjk`` (or every line, with ``cjk=True``) are set in a Type0 font
(Identity-H) that maps each character to a 2-byte code, with a generated
``ToUnicode`` map: any Unicode text, Chinese included, then extracts without a
font file installed (viewers substitute the glyphs).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import Any

__all__ = ["PdfLine", "Rule", "Scan", "build_pdf", "table_rules", "write_pdf"]

PdfLine = tuple[Any, ...]
"""One line of text: ``(font size, text, y from the bottom[, x[, "bold"]])`` in points."""
Rule = tuple[float, float, float, float]
"""A line segment ``(x0, y0, x1, y1)`` in points from the bottom left."""
Scan = tuple[bytes, int, int]
"""A page image: ``(JPEG bytes, width in pixels, height in pixels)``, RGB."""

_BFCHAR_LIMIT = 100  # the PDF spec allows at most 100 entries per beginbfchar block


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _cmap(codes: dict[str, int]) -> bytes:
    """A ToUnicode CMap taking each 2-byte code back to its character."""
    items = sorted(codes.items(), key=lambda item: item[1])
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
    ]
    for first in range(0, len(items), _BFCHAR_LIMIT):
        block = items[first : first + _BFCHAR_LIMIT]
        lines.append(f"{len(block)} beginbfchar")
        lines += [f"<{code:04X}> <{ord(char):04X}>" for char, code in block]
        lines.append("endbfchar")
    lines += ["endcmap", "CMapName currentdict /CMap defineresource pop", "end", "end"]
    return "\n".join(lines).encode("ascii")


def _latin_operation(size: float, text: str, y: float, x: float = 72, bold: bool = False) -> str:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(
            f"line {text!r} has characters outside Latin-1; list its text in cjk= (or pass cjk=True)"
        ) from None
    return f"BT /{'F3' if bold else 'F1'} {size:g} Tf {x:g} {y:g} Td ({_escape(text)}) Tj ET"


def table_rules(x: Sequence[float], y: Sequence[float]) -> list[Rule]:
    """The grid of a ruled table: vertical rules at every ``x``, horizontal ones at every ``y``."""
    return [(v, min(y), v, max(y)) for v in x] + [(min(x), h, max(x), h) for h in y]


def build_pdf(
    pages: Sequence[Sequence[PdfLine]],
    *,
    cjk: bool | Collection[str] = (),
    rules: Mapping[int, Sequence[Rule]] | None = None,
    scans: Mapping[int, Scan] | None = None,
) -> bytes:
    """A valid PDF with one content stream per page (an empty page list item gives a blank page).

    Lines whose text is in ``cjk`` (every line when ``cjk`` is ``True``) use the
    Type0 font; the others must be Latin-1 (``ValueError`` otherwise).
    ``rules`` and ``scans`` map a 0-based page index to its line segments and
    its full-page image.
    """
    every = cjk is True
    wide = frozenset() if isinstance(cjk, bool) else frozenset(cjk)
    unicode_texts = {line[1] for page in pages for line in page if every or line[1] in wide}
    codes = {char: n + 1 for n, char in enumerate(sorted({c for text in unicode_texts for c in text}))}
    objects: list[bytes] = [b"", b""]  # 1: catalog, 2: page tree (filled in at the end)

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    helvetica = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    bold = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    fonts = b"/F1 %d 0 R /F3 %d 0 R" % (helvetica, bold)
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
    for index, page in enumerate(pages):
        operations = []
        xobjects = b""
        scan = (scans or {}).get(index)
        if scan is not None:
            jpeg, width, height = scan
            header = b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB" % (
                width, height
            ) + b" /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n" % len(jpeg)
            image = add(header + jpeg + b"\nendstream")
            xobjects = b" /XObject << /Im1 %d 0 R >>" % image
            operations.append("q 612 0 0 792 0 0 cm /Im1 Do Q")
        for line in page:
            size, text, y = line[:3]
            x = line[3] if len(line) > 3 else 72
            if text in unicode_texts:
                glyphs = "".join(f"{codes[char]:04X}" for char in text)
                operations.append(f"BT /F2 {size:g} Tf {x:g} {y:g} Td <{glyphs}> Tj ET")
            else:
                operations.append(_latin_operation(size, text, y, x, len(line) > 4 and line[4] == "bold"))
        for x0, y0, x1, y1 in (rules or {}).get(index, ()):
            operations.append(f"0.5 w {x0:g} {y0:g} m {x1:g} {y1:g} l S")
        contents = add(_stream("\n".join(operations).encode("latin-1")))
        kids.append(
            add(
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
                b" /Resources << /Font << %s >>%s >> /Contents %d 0 R >>" % (fonts, xobjects, contents)
            )
        )
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % kid for kid in kids),
        len(kids),
    )
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")  # binary comment: marks the file as binary
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def write_pdf(
    path: str | os.PathLike[str],
    pages: Sequence[Sequence[PdfLine]],
    *,
    cjk: bool | Collection[str] = (),
    rules: Mapping[int, Sequence[Rule]] | None = None,
    scans: Mapping[int, Scan] | None = None,
) -> None:
    """Write :func:`build_pdf` of ``pages`` to ``path``."""
    with open(path, "wb") as handle:
        handle.write(build_pdf(pages, cjk=cjk, rules=rules, scans=scans))
