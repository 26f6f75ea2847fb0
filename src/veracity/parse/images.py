"""Images (``.png``, ``.jpg``, ``.jpeg``, ``.tif``, ``.tiff``) to structure nodes through OCR.

The image is opened with Pillow (every frame of a multi-page TIFF is a page),
read by the OCR engine (:mod:`veracity.parse.ocr`) into positioned words,
and laid out like a PDF page (:func:`veracity.parse.structure.layout_blocks`):
lines, reading order across columns, headings from text height, lists.
Every node has ``source="ocr"``, its page, box and confidence, and the
numbers read in it. An image in which OCR finds no text raises
:class:`~veracity.parse.errors.NoTextError`; reading images needs the
``ocr`` extra.
"""

from __future__ import annotations

import io
import time
from dataclasses import replace
from typing import Any

from .errors import CorruptFileError, MissingExtraError, NoTextError
from .layout import PageText, paged_diagnostics
from .limits import DEFAULT_LIMITS, InputLimits, over_limit
from .nodes import ParsedSource, assemble
from .ocr import DEFAULT_SETTINGS, OcrSettings, ocr_engine, ocr_page
from .structure import layout_blocks

__all__ = ["IMAGE_SUFFIXES", "parse_image"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")


def _frames(data: bytes, source: str, limits: InputLimits) -> list[Any]:
    try:
        from PIL import Image, ImageSequence
    except ImportError:
        raise MissingExtraError(path=source, fmt="image", extra="ocr", module="Pillow") from None
    try:
        image = Image.open(io.BytesIO(data))
        frames = []
        for number, frame in enumerate(ImageSequence.Iterator(image), 1):
            if number > limits.max_ocr_pages:
                raise over_limit(source, "the image has over {value} frames", number - 1, "max_ocr_pages",
                                 limits.max_ocr_pages)  # fmt: skip
            frames.append(frame.convert("RGB"))
        return frames
    except Image.DecompressionBombError as exc:
        raise CorruptFileError(f"image is too large to read safely: {exc}", path=source) from None
    except (OSError, ValueError, SyntaxError):  # Pillow's errors for unreadable files
        raise CorruptFileError(
            "cannot read the image: the file is damaged or is not an image (PNG, JPEG, TIFF)", path=source
        ) from None


def parse_image(
    data: bytes,
    *,
    source: str = "<bytes>",
    ocr: OcrSettings | None = DEFAULT_SETTINGS,
    limits: InputLimits = DEFAULT_LIMITS,
) -> ParsedSource:
    """OCR an image file into a :class:`ParsedSource` (see the module docstring); ``ocr=None``
    (``--ocr none``: never OCR) reads none: ``NoTextError``."""
    started = time.perf_counter()
    if ocr is None:
        raise NoTextError("no text: an image is read only by OCR, and OCR is off (--ocr none)", path=source)
    settings = ocr
    frames = _frames(data, source, limits)
    engine = ocr_engine(settings, source=source)
    pages: list[PageText] = [ocr_page(frame, number, engine) for number, frame in enumerate(frames, 1)]
    blocks, removed = layout_blocks(pages)
    parsed = assemble(blocks, fmt="image")
    diagnostics = paged_diagnostics(
        data, parsed, pages, pages, engine.name, removed=removed, seconds=time.perf_counter() - started
    )
    if not parsed.body:
        raise NoTextError(f"no text: OCR found none in its {len(pages)} page(s)", path=source,
                          diagnostics=diagnostics)  # fmt: skip
    return replace(parsed, diagnostics=diagnostics)
