"""DOCX to structure nodes with python-docx (the optional ``docx`` extra).

Body content only, in document order (headers, footers, comments and
footnotes are not read):

- ``Heading 1`` … ``Heading 9`` styles (or a paragraph outline level) are
  headings; ``Title`` is a level-1 heading;
- ``List …`` styles and numbered paragraphs form lists; the depth comes from
  the numbering level (or a trailing style number, ``List Bullet 2``), and an
  item is numbered unless its numbering format is ``bullet`` (without a
  numbering definition: when its style name says ``Number``);
- ``Code``, ``Source Code``, ``HTML Preformatted``, ``Macro Text`` and
  ``Plain Text`` paragraphs are code, consecutive ones merged;
- tables keep their first row as the header.

Damaged files and files that are not DOCX (``.doc``, renamed archives) are
rejected, and so is a zip bomb: an archive that expands past
``max_unzipped_bytes`` or a member that expands more than ``max_zip_ratio``
times (:mod:`veracity.parse.limits`). Sizes are counted while decompressing,
in bounded blocks, so a header that understates them does not help.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from typing import Any

from .errors import CorruptFileError, MissingExtraError
from .limits import DEFAULT_LIMITS, InputLimits, over_limit
from .nodes import Block, ListItem, NodeKind, ParsedSource, assemble

__all__ = ["parse_docx"]

_BLOCK = 1024 * 1024
_RATIO_FLOOR = 1024 * 1024
"""Members smaller than this are never refused for their ratio (tiny XML parts compress oddly)."""
_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_STYLE_DEPTH = re.compile(r"\s(\d)$")
_CODE_STYLES = frozenset({"code", "source code", "html preformatted", "macro text", "macro", "plain text"})
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _val(element: Any, path: str) -> str | None:
    found = element.find(path) if element is not None else None
    return None if found is None else found.get(f"{_W}val")


def _outline_level(paragraph: Any) -> int | None:
    for owner in (paragraph._p, getattr(paragraph.style, "element", None)):
        value = _val(owner, f"{_W}pPr/{_W}outlineLvl")
        if value is not None and value.isdigit() and int(value) < 9:
            return int(value) + 1
    return None


class _Numbering:
    """Looks up whether a numbering definition level is a bullet."""

    def __init__(self, document: Any) -> None:
        self.formats: dict[tuple[str, str], str] = {}
        try:
            numbering = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return
        abstract: dict[str, dict[str, str]] = {}
        for definition in numbering.findall(f"{_W}abstractNum"):
            levels = {
                level.get(f"{_W}ilvl") or "0": _val(level, f"{_W}numFmt") or "decimal"
                for level in definition.findall(f"{_W}lvl")
            }
            abstract[definition.get(f"{_W}abstractNumId") or ""] = levels
        for num in numbering.findall(f"{_W}num"):
            levels = abstract.get(_val(num, f"{_W}abstractNumId") or "", {})
            for ilvl, fmt in levels.items():
                self.formats[(num.get(f"{_W}numId") or "", ilvl)] = fmt

    def ordered(self, num_id: str, ilvl: str) -> bool | None:
        """``True`` for a numbered level, ``False`` for a bullet, ``None`` when unknown."""
        fmt = self.formats.get((num_id, ilvl))
        return None if fmt is None else fmt != "bullet"


def _list_item(paragraph: Any, style: str, numbering: _Numbering) -> ListItem | None:
    num_pr = paragraph._p.find(f"{_W}pPr/{_W}numPr")
    if num_pr is None and not style.lower().startswith("list"):
        return None
    depth_match = _STYLE_DEPTH.search(style)
    depth = int(depth_match.group(1)) - 1 if depth_match else 0
    ordered: bool | None = None
    if num_pr is not None:
        ilvl = _val(num_pr, f"{_W}ilvl") or "0"
        depth = int(ilvl) if ilvl.isdigit() else depth
        ordered = numbering.ordered(_val(num_pr, f"{_W}numId") or "", ilvl)
    if ordered is None:
        ordered = "number" in style.lower()
    return ListItem(paragraph.text, depth, ordered)


def _blocks(document: Any) -> list[Block]:
    from docx.table import Table

    numbering = _Numbering(document)
    blocks: list[Block] = []
    items: list[ListItem] = []
    code: list[str] = []

    def flush() -> None:
        nonlocal items, code
        if items:
            blocks.append(Block(NodeKind.LIST, items=tuple(items)))
        if code:
            blocks.append(Block(NodeKind.CODE, "\n".join(code)))
        items, code = [], []

    for element in document.iter_inner_content():
        if isinstance(element, Table):
            flush()
            rows = [tuple(cell.text for cell in row.cells) for row in element.rows]
            if rows:
                blocks.append(Block(NodeKind.TABLE, header=rows[0], rows=tuple(rows[1:])))
            continue
        style = (element.style.name if element.style is not None else "") or ""
        heading = _HEADING_STYLE.match(style)
        level = int(heading.group(1)) if heading else 1 if style == "Title" else _outline_level(element)
        if style.lower() in _CODE_STYLES:
            if items:
                flush()
            code.append(element.text)
            continue
        item = None if level else _list_item(element, style, numbering)
        if item is not None:
            if code:
                flush()
            items.append(item)
            continue
        flush()
        if level:
            blocks.append(Block(NodeKind.HEADING, element.text, level=level))
        elif element.text.strip():
            blocks.append(Block(NodeKind.PARAGRAPH, element.text))
    flush()
    return blocks


def _check_archive(data: bytes, source: str, limits: InputLimits) -> None:
    """Refuse what is not a zip archive, and a zip bomb, before python-docx expands anything."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            declared = sum(info.file_size for info in archive.infolist())
            if declared > limits.max_unzipped_bytes:  # what the archive admits to, before expanding
                raise over_limit(
                    source, "the DOCX archive declares {value} bytes expanded", declared,
                    "max_unzipped_bytes", limits.max_unzipped_bytes,
                )  # fmt: skip
            total = 0
            for info in archive.infolist():
                total += _expanded_size(archive, info, source, limits, total)
    except zipfile.BadZipFile:
        raise CorruptFileError(
            "not a DOCX file (not a zip archive; old .doc files must be saved as .docx first)",
            path=source,
        ) from None
    except (zlib.error, EOFError, NotImplementedError) as exc:
        raise CorruptFileError(f"cannot read DOCX, the archive is damaged: {exc}", path=source) from None


def _expanded_size(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, limits: InputLimits, before: int
) -> int:
    """Bytes ``info`` expands to, read in blocks; refused as soon as a limit is passed."""
    allowed_ratio = max(_RATIO_FLOOR, limits.max_zip_ratio * max(info.compress_size, 1))
    size = 0
    with archive.open(info) as member:
        while block := member.read(_BLOCK):
            size += len(block)
            if before + size > limits.max_unzipped_bytes:
                raise over_limit(
                    source, "the DOCX archive expands to more than {value} bytes", before + size,
                    "max_unzipped_bytes", limits.max_unzipped_bytes,
                )  # fmt: skip
            if size > allowed_ratio:
                raise over_limit(
                    source, f"member {info.filename!r} expands more than {{value}} times",
                    size / max(info.compress_size, 1), "max_zip_ratio", limits.max_zip_ratio,
                )  # fmt: skip
    return size


def parse_docx(
    data: bytes, *, source: str = "<bytes>", limits: InputLimits = DEFAULT_LIMITS
) -> ParsedSource:
    """Parse DOCX bytes into a :class:`ParsedSource`.

    Raises ``MissingExtraError`` without python-docx, ``CorruptFileError``
    for a damaged file or one that is not DOCX, ``LimitExceededError`` for a
    zip bomb (see the module docstring).
    """
    try:
        import docx
    except ImportError:
        raise MissingExtraError(path=source, fmt="DOCX", extra="docx", module="python-docx") from None
    _check_archive(data, source, limits)
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = _blocks(document)
        title = (document.core_properties.title or "").strip() or None
    except Exception as exc:  # python-docx, zipfile and lxml raise many types
        raise CorruptFileError(f"cannot read DOCX, the file is damaged: {exc}", path=source) from None
    return assemble(blocks, title=title, fmt="docx")
