"""PDF to structure nodes with pdfplumber (the optional ``pdf`` extra), and OCR for image-only pages.

pdfplumber (MIT, on pdfminer.six) gives every word of the text layer with its
box, font size and font name; tables ruled with lines come out as rows of
cells (``find_tables``). From there the layout steps are shared with OCR
(:mod:`veracity.parse.layout`, :mod:`veracity.parse.structure`): lines,
running headers and footers removed, reading order across columns,
headings from size and weight, lists, tables whose first row is the header.
Every node carries its page and its box.

A page with (almost) no text layer but an image covering much of it is a
scan: with the ``ocr`` extra it is rendered with pypdfium2 at the OCR dpi and
read by the OCR engine (:mod:`veracity.parse.ocr`); without it the page is
counted in the diagnostics as needing OCR. A PDF that yields no text at all,
after OCR, raises :class:`~veracity.parse.errors.NoTextError`. Encrypted PDFs
(unless the user password is empty) and damaged files are rejected with a
message saying so.
"""

from __future__ import annotations

import io
import logging
import re
import threading
import time
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

from .diagnostics import clean_extracted
from .errors import CorruptFileError, MissingExtraError, NoTextError
from .layout import PageText, TableRegion, Word, paged_diagnostics
from .limits import DEFAULT_LIMITS, InputLimits, over_limit
from .nodes import ParsedSource, assemble
from .ocr import DEFAULT_SETTINGS, OcrSettings, ocr_engine, ocr_page
from .structure import layout_blocks

__all__ = ["parse_pdf"]

_SCAN_MAX_CHARS = 20
_SCAN_MIN_IMAGE_AREA = 0.3
_BOLD = ("bold", "black", "heavy", "semibold", "demi")


@dataclass(frozen=True, slots=True)
class _Read:
    """What the text layer of the pages gave, before OCR."""

    pages: list[PageText]
    scans: list[int]
    illegal: int
    title: str | None


def _is_bold(fontname: str) -> bool:
    name = fontname.split("+")[-1].lower()
    return any(mark in name for mark in _BOLD)


def _inside(word: dict[str, Any], table: TableRegion) -> bool:
    x = (float(word["x0"]) + float(word["x1"])) / 2
    y = (float(word["top"]) + float(word["bottom"])) / 2
    return table.x0 <= x <= table.x1 and table.top <= y <= table.bottom


def _tables(page: Any) -> tuple[TableRegion, ...]:
    found = []
    for table in page.find_tables():
        rows = tuple(
            tuple(clean_extracted(" ".join(str(cell or "").split()))[0] for cell in row)
            for row in table.extract()
        )
        rows = tuple(row for row in rows if any(row))
        if len(rows) >= 2 and max(len(row) for row in rows) >= 2:
            x0, top, x1, bottom = (float(v) for v in table.bbox)
            found.append(TableRegion(x0, top, x1, bottom, rows))
    return tuple(found)


def _image_share(page: Any) -> float:
    area = float(page.width) * float(page.height) or 1.0
    covered = 0.0
    for image in page.images:
        width = max(0.0, min(float(image["x1"]), float(page.width)) - max(float(image["x0"]), 0.0))
        height = max(0.0, min(float(image["bottom"]), float(page.height)) - max(float(image["top"]), 0.0))
        covered += width * height
    return covered / area


class _QuietPdfminer:
    """While any parse runs, the ``pdfminer`` logger passes errors only.

    pdfminer logs a warning for each thing it works around ("Could not get
    FontBBox from font descriptor…" for a font box it cannot read, a missing
    CropBox): nothing the text depends on or the user can act on, and printed
    again on every ingest of the same file. The level is raised for the time
    of the parses only, and only when nobody set one on that logger (a level
    set on purpose, to debug pdfminer, is left alone); the count of running
    parses makes threads restore it once, when the last one ends.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._raised = False

    def __enter__(self) -> None:
        with self._lock:
            logger = logging.getLogger("pdfminer")
            if self._running == 0:
                self._raised = logger.level == logging.NOTSET
                if self._raised:
                    logger.setLevel(logging.ERROR)
            self._running += 1

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        with self._lock:
            self._running -= 1
            if self._running == 0 and self._raised:
                logging.getLogger("pdfminer").setLevel(logging.NOTSET)


_QUIET_PDFMINER = _QuietPdfminer()


def _read_text_layer(data: bytes, source: str) -> _Read:
    try:
        import pdfplumber
    except ImportError:
        raise MissingExtraError(path=source, fmt="PDF", extra="pdf", module="pdfplumber") from None
    pages: list[PageText] = []
    scans: list[int] = []
    illegal = 0
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            title = _meaningful_title(str((pdf.metadata or {}).get("Title") or ""))
            for number, page in enumerate(pdf.pages, 1):
                tables = _tables(page)
                words: list[Word] = []
                for raw in page.extract_words(extra_attrs=["size", "fontname"]):
                    if any(_inside(raw, table) for table in tables):
                        continue
                    text, removed = clean_extracted(str(raw["text"]))
                    illegal += removed
                    if text.strip():
                        size = round(float(raw["size"]) * 2) / 2
                        bold = _is_bold(str(raw["fontname"]))
                        x0, top, x1, bottom = (float(raw[k]) for k in ("x0", "top", "x1", "bottom"))
                        words.append(Word(text, x0, top, x1, bottom, size, bold))
                characters = sum(len(w.text) for w in words)
                if characters < _SCAN_MAX_CHARS and not tables and _image_share(page) >= _SCAN_MIN_IMAGE_AREA:
                    scans.append(number)
                    words = []
                pages.append(PageText(number, float(page.width), float(page.height), tuple(words), tables))
    except Exception as exc:  # pdfminer raises many types for damaged and encrypted files
        inner = exc.args[0] if exc.args and isinstance(exc.args[0], Exception) else exc  # pdfplumber wraps
        text = f"{type(inner).__name__} {inner}".lower()
        if "password" in text or "encrypt" in text:
            raise CorruptFileError(
                "PDF is encrypted with a password; save an unencrypted copy and ingest that", path=source
            ) from None
        raise CorruptFileError(f"cannot read PDF, the file is damaged: {inner or type(inner).__name__}",
                               path=source) from None  # fmt: skip
    return _Read(pages, scans, illegal, title)


def _ocr_pages(data: bytes, numbers: list[int], settings: OcrSettings, source: str) -> list[PageText]:
    """Render the listed pages with pypdfium2 and read them with the OCR engine."""
    engine = ocr_engine(settings, source=source)
    try:
        import pypdfium2
    except ImportError:
        raise MissingExtraError(
            path=source, fmt="scanned PDF pages", extra="ocr", module="pypdfium2"
        ) from None
    document = pypdfium2.PdfDocument(data)
    try:
        read = []
        for number in numbers:
            bitmap = document[number - 1].render(scale=settings.dpi / 72)
            read.append(ocr_page(bitmap.to_pil(), number, engine, scale=settings.dpi / 72))
        return read
    finally:
        document.close()


_FILE_NAME_TITLE = re.compile(
    r"(?i)^(?:microsoft (?:word|powerpoint|excel) - .*|untitled(?:\s*\d*)?"
    r"|.*\.(?:html?|docx?|pdf|pptx?|xlsx?|txt|md|odt|rtf))$"
)


def _meaningful_title(title: str) -> str | None:
    """A PDF's metadata title, or ``None`` when it names the file it was printed from
    (``router.html``, ``Microsoft Word - draft.docx``, ``Untitled``): the first heading is the
    title then."""
    title = title.strip()
    return None if not title or _FILE_NAME_TITLE.match(title) else title


def _ocr_available(settings: OcrSettings, source: str) -> bool:
    try:
        ocr_engine(settings, source=source)
    except MissingExtraError:
        return False
    return True


def parse_pdf(
    data: bytes,
    *,
    source: str = "<bytes>",
    ocr: OcrSettings | None = DEFAULT_SETTINGS,
    limits: InputLimits = DEFAULT_LIMITS,
) -> ParsedSource:
    """Parse PDF bytes into a :class:`ParsedSource` whose nodes carry pages and boxes.

    Image-only pages are read by OCR with ``ocr`` (``None``: never). Raises
    ``MissingExtraError`` without pdfplumber, ``CorruptFileError`` for a
    damaged or encrypted file, ``LimitExceededError`` for more scanned pages
    than ``limits.max_ocr_pages`` and ``NoTextError`` when no page has text,
    even after OCR.
    """
    started = time.perf_counter()
    with _QUIET_PDFMINER:
        read = _read_text_layer(data, source)
    pages = read.pages
    ocr_read: list[PageText] = []
    needing = 0
    if read.scans:
        if len(read.scans) > limits.max_ocr_pages:
            raise over_limit(source, "the PDF has {value} scanned pages", len(read.scans), "max_ocr_pages",
                             limits.max_ocr_pages)  # fmt: skip
        if ocr is not None and _ocr_available(ocr, source):
            ocr_read = _ocr_pages(data, read.scans, ocr, source)
            by_number = {page.number: page for page in ocr_read}
            pages = [by_number.get(page.number, page) for page in pages]
        else:
            needing = len(read.scans)
    blocks, removed = layout_blocks(pages)
    parsed = assemble(blocks, title=read.title, fmt="pdf")
    diagnostics = paged_diagnostics(
        data, parsed, pages, ocr_read, ocr.engine if ocr_read and ocr is not None else None,
        removed=removed, seconds=time.perf_counter() - started, pages_needing_ocr=needing,
        tables=sum(len(page.tables) for page in pages), illegal_characters=read.illegal,
    )  # fmt: skip
    if not parsed.body:
        if needing and ocr is None:
            reason = (
                f"no text: its {len(pages)} page(s) are images, and OCR is off (--ocr none); "
                "--ocr rapidocr or --ocr tesseract reads them"
            )
        elif needing:
            reason = (
                f"no text: its {len(pages)} page(s) are images and reading them needs OCR; "
                "install it with: pip install 'veracity[ocr]'"
            )
        elif ocr_read:
            reason = f"no text: OCR found none on its {len(pages)} page(s)"
        else:
            reason = f"no text: its {len(pages)} page(s) have no text layer and no scanned image"
        raise NoTextError(reason, path=source, diagnostics=diagnostics)
    return replace(parsed, diagnostics=diagnostics)
