"""Page images rendered from known text, for OCR tests and benchmarks (not used at run time).

Text is set with Pillow in Noto Sans CJK SC (Debian's ``fonts-noto-cjk``),
which has glyphs for Chinese and Latin alike, on an A4 page at a given dpi,
as a scanner at that resolution would capture a printed page. Because the
text is known, the character error rate of an OCR engine on the image is
measurable (:func:`character_error_rate`).

:func:`english_lines` and :func:`chinese_lines` give page-sized runs of
known text: English product-documentation prose written for this purpose,
and the Chinese paragraphs of the bundled Starship demo documents; both carry
the numbers, versions, amounts and percentages OCR tends to get wrong.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import unicodedata
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..text.scripts import HAN

__all__ = [
    "character_error_rate",
    "chinese_lines",
    "english_lines",
    "find_cjk_font",
    "normalize_for_cer",
    "render_page",
    "wrap_text",
]

_FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf",
)
_SC_INDEX = 2  # Simplified Chinese face in the .ttc collection

ENGLISH_TEXT = """\
Starship Workbench keeps daily snapshots for 35 days by default, and weekly snapshots for 12 weeks.
Release 3.2.1 raised the upload limit from 100 MB to 250 MB per file; release 3.2.0 kept the old limit.
A Team plan costs $12.50 per seat per month, billed yearly; the Enterprise plan adds SAML single sign-on.
When an upgrade fails, run starship rollback --to 3.1 and restart the gateway afterwards.
The gateway answers on port 8443; health checks use /healthz and return 200 when the node is ready.
Invitations expire after 72 hours, and an administrator can send at most 500 invitations a day.
Audit logs are kept for 400 days on Enterprise and for 90 days on Team; exports are CSV or JSON.
The desktop client 3.2 needs 4 GB of memory and 1.5 GB of free disk space on Windows 10 or macOS 13.
Error rates above 0.8% for five minutes page the on-call engineer, who acknowledges within 15 minutes.
Version 2.8 reaches the end of support on 2026-12-31; after that date no security fixes are published.
Backups run every night at 02:00 UTC, take about 40 minutes for 1,000 projects, and are encrypted.
The API allows 600 requests per minute per key; a client over the limit gets status 429 and a Retry-After.
Data is stored in the region chosen at sign-up: Frankfurt, Singapore or Virginia, never moved silently.
Single sign-on with OIDC works on every plan from 3.2 on; SAML stays available on Enterprise only.
Migrating from 2.x to 3.2 takes about 20 minutes for 10 GB of data and needs a maintenance window.
Discounts of 15% apply to yearly plans above 100 seats; nonprofits get 50% off the Team plan.
Webhooks retry 5 times with exponential backoff, starting after 30 seconds and doubling each time.
The search index is rebuilt in the background; queries keep using the previous index until it is ready.
Two-factor authentication is required for administrators since 3.1.4 and optional for other members.
A project can hold at most 10,000 documents and 2,000 members; larger teams split work into projects.
Preview 3.3 adds offline mode for the desktop client; it is not covered by the service level agreement.
Support answers within 4 business hours on Enterprise and within 2 business days on the Team plan.
The retention period for deleted projects is 30 days; after that the data cannot be restored.
Usage reports count active seats on the 1st of each month at 00:00 UTC and bill the difference.
"""


def find_cjk_font() -> Path | None:
    """The Noto Sans CJK font file, if installed (``apt-get install fonts-noto-cjk``)."""
    for candidate in _FONT_CANDIDATES:
        if Path(candidate).is_file():
            return Path(candidate)
    if shutil.which("fc-match"):
        found = subprocess.run(
            ["fc-match", "-f", "%{file}", "Noto Sans CJK SC"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if "CJK" in found and Path(found).is_file():
            return Path(found)
    return None


@cache
def _font(pixels: int) -> Any:
    from PIL import ImageFont

    path = find_cjk_font()
    if path is None:
        raise FileNotFoundError("no Noto Sans CJK font; install it with: apt-get install fonts-noto-cjk")
    index = _SC_INDEX if path.suffix == ".ttc" else 0
    return ImageFont.truetype(str(path), pixels, index=index)


def _pixels(points: float, dpi: int) -> int:
    return max(1, round(points * dpi / 72))


def wrap_text(text: str, *, width_points: float, size_points: float = 11, dpi: int = 300) -> list[str]:
    """``text``'s paragraphs wrapped to lines no wider than ``width_points`` at ``size_points``."""
    font = _font(_pixels(size_points, dpi))
    limit = width_points * dpi / 72
    lines: list[str] = []
    for paragraph in text.splitlines():
        line = ""
        for token in re.findall(r"[A-Za-z0-9$%.,:;/@'()+\-–]+\s*|\S\s*", paragraph.strip()):
            if line and font.getlength(line + token.rstrip()) > limit:
                lines.append(line.rstrip())
                line = ""
            line += token
        if line.strip():
            lines.append(line.rstrip())
    return lines


def render_page(
    lines: Sequence[str],
    *,
    dpi: int = 300,
    size_points: float = 11,
    heading: str | None = None,
    margin_points: float = 72,
    page_points: tuple[float, float] = (595, 842),
) -> Any:
    """An A4 page image (Pillow, grayscale) with ``heading`` at 1.6× the size above ``lines``."""
    from PIL import Image, ImageDraw

    width, height = (_pixels(p, dpi) for p in page_points)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    x = y = _pixels(margin_points, dpi)
    if heading:
        big = _font(_pixels(size_points * 1.6, dpi))
        draw.text((x, y), heading, font=big, fill=0)
        y += round(_pixels(size_points * 1.6, dpi) * 2.0)
    font = _font(_pixels(size_points, dpi))
    step = round(_pixels(size_points, dpi) * 1.6)
    for line in lines:
        draw.text((x, y), line, font=font, fill=0)
        y += step
    return image


def image_bytes(image: Any, fmt: str = "PNG", **options: Any) -> bytes:
    """``image`` encoded as ``fmt`` (``PNG``, ``JPEG``, ``TIFF``)."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def english_lines(*, dpi: int = 300, size_points: float = 11) -> list[str]:
    """:data:`ENGLISH_TEXT` wrapped to an A4 text width."""
    return wrap_text(ENGLISH_TEXT, width_points=595 - 144, size_points=size_points, dpi=dpi)


def chinese_lines(*, dpi: int = 300, size_points: float = 11) -> list[str]:
    """The Chinese paragraphs of the Starship demo documents, wrapped to an A4 text width."""
    paragraphs: list[str] = []
    folder = resources.files("veracity.fixtures") / "starship"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".md"):
            continue
        text = entry.read_text(encoding="utf-8").split("---", 2)[-1]
        for raw in text.splitlines():
            line = raw.strip().lstrip("#>-*0123456789. ").strip()
            if len(HAN.findall(line)) >= 12 and "|" not in line and "`" not in line:
                paragraphs.append(re.sub(r"\*\*|__|\[|\]\([^)]*\)", "", line))
    return wrap_text("\n".join(paragraphs), width_points=595 - 144, size_points=size_points, dpi=dpi)


def normalize_for_cer(text: str) -> str:
    """NFKC (full-width and half-width forms compare equal), whitespace removed."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def character_error_rate(reference: str, hypothesis: str) -> float:
    """Levenshtein distance over :func:`normalize_for_cer` forms, divided by the reference length."""
    ref, hyp = normalize_for_cer(reference), normalize_for_cer(hypothesis)
    if not ref:
        return float(bool(hyp))
    previous = list(range(len(hyp) + 1))
    for i, a in enumerate(ref, 1):
        current = [i]
        for j, b in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1] / len(ref)
