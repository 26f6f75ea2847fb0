"""A page of a cited PDF (or a cited image) as a PNG, for the citation card's view of the region.

The page is rendered from the file the document was ingested from, with the same checks as
the cited chunk: the document must be one the key may see now (anything else is "not found",
as for a document that does not exist), the page one its chunks cover, and the file still
there. Only the document's current revision is rendered (an older revision's file is gone or
changed). The boxes are drawn by the page over the image (their corners are fractions of the
page, :class:`~veracity.model.contracts.PageBox`), so the image itself stays the original's.
Rendering uses ``pypdfium2`` and ``Pillow`` (the ``ocr`` extra).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Final

from ...catalog.catalog import Catalog
from ...model.contracts import Principal, Status
from ...model.errors import NotFoundError, ValidationError
from ...parse.parsers import IMAGE_SUFFIXES
from .visible import visible_document

__all__ = ["MAX_WIDTH_PX", "page_png"]

MAX_WIDTH_PX: Final = 1600
"""A rendered page is at most this wide (a phone and a desktop both scale it down)."""


def _not_found(what: str) -> NotFoundError:
    return NotFoundError(f"no page image {what} that this key may see")


def page_png(
    catalog: Catalog,
    id_or_source_id: str,
    page: int,
    principal: Principal,
    as_of: datetime,
    original: Callable[[str, str], Path | None],
    *,
    operator: bool,
    parsed_digest: Callable[[str], str | None],
    width_px: int = 1000,
) -> bytes:
    """PNG bytes of ``page`` (1-based) of the visible document's original file, ``width_px`` wide.

    ``original(tenant, source_id)`` is where the document's file is, or ``None``;
    ``parsed_digest(document_id)`` the sha256 of the bytes the document was parsed from: a file
    that is not those bytes any more (edited, or another upload of the same name in its place) is
    never rendered for it, nor is one whose digest was not recorded.
    """
    if not 1 <= width_px <= MAX_WIDTH_PX:
        raise ValidationError(f"width must be 1–{MAX_WIDTH_PX} pixels, got {width_px}", field="width")
    document = visible_document(catalog, id_or_source_id, principal, as_of, operator=operator)
    what = f"{page} of {id_or_source_id!r}"
    newest = [d for d in catalog.documents(document.tenant) if d.source_id == document.source_id]
    if document.status is not Status.ACTIVE or (newest and newest[-1].document_id != document.document_id):
        raise _not_found(what)
    covered = {p for c in catalog.chunks(document.document_id) if c.page_start is not None
               for p in range(c.page_start, (c.page_end or c.page_start) + 1)}  # fmt: skip
    path = original(document.tenant, document.source_id)
    if page not in covered or path is None or not path.is_file():
        raise _not_found(what)
    data = path.read_bytes()  # read once: checked, then drawn from these very bytes
    digest = parsed_digest(document.document_id)
    if digest is None or hashlib.sha256(data).hexdigest() != digest:
        raise _not_found(what)  # not the bytes this revision was read from
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return _image(data, width_px) if page == 1 else _raise(what)
    if suffix != ".pdf":
        raise _not_found(what)
    return _pdf_page(data, page, width_px, what)


def _raise(what: str) -> bytes:
    raise _not_found(what)


def _png(image: object, width_px: int) -> bytes:
    from PIL import Image

    assert isinstance(image, Image.Image)
    if image.width > width_px:
        image = image.resize((width_px, max(1, round(image.height * width_px / image.width))))
    out = io.BytesIO()
    image.convert("RGB").save(out, format="PNG", optimize=True)
    return out.getvalue()


def _image(data: bytes, width_px: int) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return _png(image.copy(), width_px)


def _pdf_page(data: bytes, page: int, width_px: int, what: str) -> bytes:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        if page > len(pdf):
            raise _not_found(what)
        sheet = pdf[page - 1]
        scale = width_px / max(1.0, sheet.get_width())
        bitmap = sheet.render(scale=scale)
        return _png(bitmap.to_pil(), width_px)
    finally:
        pdf.close()
