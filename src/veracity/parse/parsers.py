"""Read a source file and parse it into structure nodes, whatever its format.

:func:`parse_file` checks the size (before reading), reads the bytes, picks the
parser from the file suffix (:data:`FORMATS`) and returns a
:class:`~veracity.parse.nodes.ParsedSource`. Text formats are decoded as
UTF-8 (a BOM is allowed; UTF-16 needs its BOM); bytes that are not UTF-8 are
accepted as GB18030 only when they decode cleanly and read as Chinese.
Every failure is an :class:`~veracity.parse.errors.IngestError` naming the file.
"""

from __future__ import annotations

import codecs
import re
import time
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..model.registry import PARSERS
from ..text.normalize import normalize_body
from ..text.scripts import HAN
from .errors import (
    EmptySourceError,
    EncodingError,
    FileTooLargeError,
    IngestError,
    TemplateSourceError,
    UnsupportedFormatError,
)
from .html import parse_html
from .limits import DEFAULT_LIMITS, InputLimits, over_limit
from .markdown import parse_markdown
from .nodes import Block, NodeKind, ParsedSource, assemble
from .ocr import DEFAULT_SETTINGS as DEFAULT_OCR
from .ocr import OcrSettings
from .rst import parse_rst
from .site_markup import looks_like_template

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMATS",
    "IMAGE_SUFFIXES",
    "DocumentParser",
    "decode_text",
    "format_of",
    "known_suffixes",
    "parse_bytes",
    "parse_file",
    "parse_text",
    "read_source",
]

DEFAULT_MAX_BYTES = DEFAULT_LIMITS.max_bytes

FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
}
IMAGE_SUFFIXES = frozenset(suffix for suffix, fmt in FORMATS.items() if fmt == "image")
"""Image files: read by OCR. Folder scans pass them over unless asked to read images
(a documentation site's screenshots and logos are not documents)."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\u3000]*\n")


def parse_plain_text(text: str, *, source: str = "<text>") -> ParsedSource:
    """Plain text: paragraphs split at blank lines, line breaks and spacing kept."""
    body = normalize_body(text)
    blocks = [Block(NodeKind.PARAGRAPH, part, collapse=False) for part in _PARAGRAPH_BREAK.split(body)]
    return assemble(blocks, fmt="text")


_TEXT_PARSERS: dict[str, Callable[..., ParsedSource]] = {
    "markdown": parse_markdown,
    "rst": parse_rst,
    "text": parse_plain_text,
    "html": parse_html,
}


def read_pdf(data: bytes, *, source: str, limits: InputLimits, ocr: OcrSettings | None) -> ParsedSource:
    """A PDF (the ``pdf`` extra, loaded when the first PDF is read)."""
    from .pdf import parse_pdf

    return parse_pdf(data, source=source, ocr=ocr, limits=limits)


def read_docx(data: bytes, *, source: str, limits: InputLimits, ocr: OcrSettings | None) -> ParsedSource:
    """A Word document (the ``docx`` extra)."""
    from .docx import parse_docx

    return parse_docx(data, source=source, limits=limits)


def read_image(data: bytes, *, source: str, limits: InputLimits, ocr: OcrSettings | None) -> ParsedSource:
    """An image, read by OCR (the ``ocr`` extra)."""
    from .images import parse_image

    return parse_image(data, source=source, ocr=ocr, limits=limits)


_BINARY_PARSERS: dict[str, Callable[..., ParsedSource]] = {
    "pdf": read_pdf,
    "docx": read_docx,
    "image": read_image,
}


@runtime_checkable
class DocumentParser(Protocol):
    """A document format a plugin adds (:data:`veracity.model.registry.PARSERS`, entry point group
    ``veracity.parsers``, named by the format): the suffixes of its files and how to read them.

    ``parse`` gets the file's bytes within ``limits`` (already checked against ``max_bytes``) and
    returns its :class:`ParsedSource`; it raises an :class:`IngestError` naming ``source`` for a
    file it cannot read. What it returns is checked as a built-in parser's is (no text: refused;
    over ``max_text_chars``: refused).
    """

    suffixes: tuple[str, ...]

    def parse(
        self, data: bytes, *, source: str, limits: InputLimits, ocr: OcrSettings | None
    ) -> ParsedSource:
        """The parsed document."""
        ...


def _plugin_parsers() -> dict[str, Any]:
    """The formats plugins add (a built-in format's name is the built-in's): each registered
    object, or an instance of it when it is a class (made once)."""
    built_in = {*_TEXT_PARSERS, *_BINARY_PARSERS}
    return {name: _instance(PARSERS[name]) for name in PARSERS if name not in built_in}


@lru_cache(maxsize=64)
def _instance(registered: Any) -> Any:
    return registered() if isinstance(registered, type) else registered


def known_suffixes() -> dict[str, str]:
    """Every suffix a parser reads, with its format: :data:`FORMATS`, then the plugins' (a suffix
    a built-in reads stays the built-in's)."""
    found = dict(FORMATS)
    for name, parser in _plugin_parsers().items():
        for suffix in getattr(parser, "suffixes", ()):
            found.setdefault(str(suffix).lower(), name)
    return found


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")


def _supported(suffixes: dict[str, str]) -> str:
    return ", ".join(sorted(suffixes))


def format_of(path: Path | str) -> str:
    """The format name for ``path``'s suffix; ``UnsupportedFormatError`` lists the valid ones."""
    suffix = Path(path).suffix.lower()
    if suffix in FORMATS:
        return FORMATS[suffix]
    suffixes = known_suffixes()
    if suffix not in suffixes:
        what = f"suffix {suffix!r}" if suffix else "no suffix"
        raise UnsupportedFormatError(
            f"unknown format ({what}); supported suffixes: {_supported(suffixes)}", path=str(path)
        )
    return suffixes[suffix]


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def read_source(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of ``path``, refusing missing, non-regular, empty and over-size files.

    The size is checked with ``stat`` before anything is read.
    """
    source = str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise IngestError("no such file", path=source) from None
    except OSError as exc:
        raise IngestError(f"cannot read file: {exc.strerror or exc}", path=source) from None
    if not path.is_file():
        raise IngestError("not a regular file", path=source)
    if info.st_size > max_bytes:
        raise FileTooLargeError(
            f"file is {_megabytes(info.st_size)} ({info.st_size} bytes), over the limit of "
            f"{_megabytes(max_bytes)}; split it or raise the size limit (max_bytes, --max-bytes)",
            path=source,
        )
    if info.st_size == 0:
        raise EmptySourceError("file is empty (0 bytes)", path=source)
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise IngestError(f"cannot read file: {exc.strerror or exc}", path=source) from None
    if len(data) > max_bytes:
        raise FileTooLargeError(f"file grew past the limit of {_megabytes(max_bytes)}", path=source)
    return data


def _reads_as_chinese(text: str) -> bool:
    """GB18030 text that is really Chinese: ideographs dominate and come from GB2312."""
    wide = [char for char in text if ord(char) > 0x7F]
    ideographs = [char for char in wide if HAN.match(char)]
    if not ideographs or len(ideographs) * 2 < len(wide):
        return False
    common = 0
    for char in wide:
        encoded = char.encode("gb18030")
        common += len(encoded) == 2 and encoded[0] >= 0xA1 and encoded[1] >= 0xA1
    return common * 10 >= len(wide) * 9


def decode_text(data: bytes, *, source: str = "<bytes>") -> str:
    """Decode text bytes: UTF-8 (BOM allowed), UTF-16 with BOM, else GB18030 Chinese.

    Raises ``EncodingError`` naming the first bad byte, and for NUL bytes
    (binary content).
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        bad = f"byte 0x{data[exc.start]:02x} at offset {exc.start}" if exc.start < len(data) else ""
        try:
            text = data.decode("gb18030")
        except UnicodeDecodeError:
            text = ""
        if encoding != "utf-8-sig" or not _reads_as_chinese(text):
            raise EncodingError(
                f"wrong encoding: not valid {encoding.upper().replace('-SIG', '')} ({bad}) and "
                "not GB18030 Chinese text; save the file as UTF-8",
                path=source,
            ) from None
    if "\x00" in text:
        raise EncodingError(
            "wrong encoding: the text holds NUL characters (a binary file, or UTF-16 "
            "without a byte-order mark); save the file as UTF-8",
            path=source,
        )
    return text


def _check_text(text: str, source: str, limits: InputLimits, what: str) -> None:
    if len(text) > limits.max_text_chars:
        raise over_limit(source, what, len(text), "max_text_chars", limits.max_text_chars)


def parse_text(
    text: str, fmt: str, *, source: str = "<text>", limits: InputLimits = DEFAULT_LIMITS
) -> ParsedSource:
    """Parse already-decoded text of a text format (``markdown``, ``rst``, ``text``, ``html``).

    Text longer than ``limits.max_text_chars`` (markup included) is refused before parsing.
    """
    parser = _TEXT_PARSERS.get(fmt)
    if parser is None:
        raise UnsupportedFormatError(
            f"unknown text format {fmt!r}; valid values: {', '.join(sorted(_TEXT_PARSERS))}",
            path=source,
        )
    if not text.strip():
        raise EmptySourceError("file holds only whitespace", path=source)
    _check_text(text, source, limits, "the text is {value} characters")
    if fmt == "html" and looks_like_template(text):
        raise TemplateSourceError(
            "an HTML page template (Jinja/Liquid statements), not a document", path=source
        )
    if fmt == "html":
        parsed: ParsedSource = parse_html(text, source=source, max_depth=limits.max_html_depth)
    else:
        parsed = parser(text, source=source)
    if not parsed.body and parsed.metadata:
        raise EmptySourceError("only front matter, no text (a layout page such as a home page)", path=source)
    if not parsed.body:
        raise EmptySourceError(f"no text content found in this {fmt} file", path=source)
    return parsed


def parse_bytes(
    data: bytes,
    fmt: str,
    *,
    source: str = "<bytes>",
    limits: InputLimits = DEFAULT_LIMITS,
    ocr: OcrSettings | None = DEFAULT_OCR,
) -> ParsedSource:
    """Parse the bytes of a file of format ``fmt`` (a value of :data:`FORMATS`) within ``limits``.

    Scanned PDF pages and images are read by OCR with ``ocr`` (``None``: never).
    The result's diagnostics always hold the bytes read, the characters
    parsed and the time taken.
    """
    started = time.perf_counter()
    binary = _BINARY_PARSERS.get(fmt)
    if binary is None and fmt not in _TEXT_PARSERS:
        plugin = _plugin_parsers().get(fmt)
        binary = plugin.parse if plugin is not None else None
    if binary is not None:
        parsed: ParsedSource = binary(data, source=source, limits=limits, ocr=ocr)
        if not parsed.body:
            raise EmptySourceError(f"no text content found in this {fmt} file", path=source)
        _check_text(parsed.body, source, limits, "the text extracted is {value} characters")
        illegal = parsed.diagnostics.illegal_characters
    elif fmt in _TEXT_PARSERS:
        text = decode_text(data, source=source)
        parsed = parse_text(text, fmt, source=source, limits=limits)
        illegal = len(_CONTROL.findall(text))
    else:
        valid = ", ".join(sorted({*_TEXT_PARSERS, *_BINARY_PARSERS, *_plugin_parsers()}))
        raise UnsupportedFormatError(f"unknown format {fmt!r}; valid values: {valid}", path=source)
    diagnostics = replace(
        parsed.diagnostics, bytes=len(data), characters=len(parsed.body), illegal_characters=illegal,
        seconds=time.perf_counter() - started,
    )  # fmt: skip
    return replace(parsed, diagnostics=diagnostics)


def _check_size_as_text(path: Path, limits: InputLimits) -> None:
    """Refuse a text file unread when even 4 bytes a character would make too much text."""
    try:
        size = path.stat().st_size
    except OSError:
        return  # read_source names the problem
    if 4 * limits.max_text_chars < size <= limits.max_bytes:  # over max_bytes: read_source says so
        raise over_limit(
            str(path), "the text is at least {value} characters", size // 4, "max_text_chars",
            limits.max_text_chars,
        )  # fmt: skip


def parse_file(
    path: Path | str,
    *,
    max_bytes: int | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
    ocr: OcrSettings | None = DEFAULT_OCR,
) -> ParsedSource:
    """Parse one file into a :class:`ParsedSource`, choosing the parser by suffix.

    Raises an ``IngestError`` subclass (a ``ValidationError``) naming the file
    for an unknown suffix, a missing file, a file over one of ``limits``
    (``max_bytes`` overrides its size limit), empty content, a wrong encoding,
    a damaged PDF/DOCX, a PDF or image without text even after OCR
    (``NoTextError``) or a missing optional extra. ``ocr`` says how scanned
    pages and images are read (``None``: never).
    """
    path = Path(path)
    fmt = format_of(path)
    if max_bytes is not None:
        limits = replace(limits, max_bytes=max_bytes)
    if fmt in _TEXT_PARSERS:
        _check_size_as_text(path, limits)
    data = read_source(path, max_bytes=limits.max_bytes)
    return parse_bytes(data, fmt, source=str(path), limits=limits, ocr=ocr)
