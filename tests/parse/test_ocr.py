"""OCR for images and scanned PDF pages: both engines on small rendered images with known text.

Images are rendered with Noto Sans CJK (:mod:`veracity.testing.page_images`),
so what OCR should read is known. Kept to a few small images: every test here
runs the real engines. Tesseract and the font come from Debian packages that
``.ci/run`` installs; without them the tests skip, and under CI (``CI`` set)
they fail unless ``VERACITY_NO_TESSERACT`` says why they could not be installed.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from veracity.model.errors import ConfigError
from veracity.parse.errors import CorruptFileError, MissingExtraError, NoTextError
from veracity.parse.nodes import NodeKind
from veracity.parse.parsers import parse_bytes

pytest.importorskip("rapidocr_onnxruntime", reason="OCR needs the 'ocr' extra")

from tests.system_packages import need_cjk_font, need_tesseract
from veracity.parse.ocr import OcrSettings
from veracity.testing.page_images import character_error_rate, image_bytes, render_page
from veracity.testing.pdf_builder import build_pdf


@pytest.fixture(autouse=True)
def _font() -> None:
    need_cjk_font()


RAPID = OcrSettings(engine="rapidocr")  # type: ignore[arg-type]
TESSERACT = OcrSettings(engine="tesseract")  # type: ignore[arg-type]
ENGLISH = ["The Team plan costs $12.50 per seat.", "Invitations expire after 72 hours."]
CHINESE = ["单点登录需要企业计划。", "邀请链接7天内有效。"]


def small_image(lines: list[str], heading: str | None = None) -> Any:
    return render_page(lines, heading=heading, dpi=150, page_points=(320, 150), margin_points=14)


def compact(text: str) -> str:
    return "".join(text.split())


def test_image_is_read_into_ocr_nodes_with_confidence_box_and_numbers() -> None:
    parsed = parse_bytes(image_bytes(small_image(ENGLISH, "Plans")), "image", source="plans.png", ocr=RAPID)
    assert parsed.fmt == "image"
    assert compact(ENGLISH[0]) in compact(parsed.body) and compact(ENGLISH[1]) in compact(parsed.body)
    assert parsed.nodes[0].kind is NodeKind.HEADING and parsed.nodes[0].heading_path == ("Plans",)
    for node in parsed.nodes:
        assert node.source == "ocr" and node.page == 1 and node.bbox is not None
    body = [n for n in parsed.nodes if n.kind is NodeKind.PARAGRAPH]
    assert all(n.confidence is not None and 0.5 < n.confidence <= 1 for n in body)
    assert {"$12.50", "72"} <= {number.text for n in body for number in n.ocr_numbers}
    diagnostics = parsed.diagnostics
    assert (diagnostics.ocr_engine, diagnostics.ocr_pages, diagnostics.pages_total) == ("rapidocr", 1, 1)
    assert diagnostics.ocr_characters > 40 and diagnostics.ocr_confidence is not None


@pytest.mark.parametrize("settings", [RAPID, TESSERACT], ids=["rapidocr", "tesseract"])
def test_both_engines_read_chinese(settings: OcrSettings) -> None:
    if settings.engine == "tesseract":
        need_tesseract()
    parsed = parse_bytes(image_bytes(small_image(CHINESE), "JPEG", quality=92), "image", source="a.jpg",
                         ocr=settings)  # fmt: skip
    # exact here (rapidocr-onnxruntime 1.4, Tesseract 5.3); a little slack for other builds
    assert character_error_rate("\n".join(CHINESE), parsed.body) <= 0.1
    assert parsed.diagnostics.ocr_engine == settings.engine
    assert "7" in [n.text for node in parsed.nodes for n in node.ocr_numbers]


def test_every_frame_of_a_tiff_is_a_page() -> None:
    frames = [small_image(["First page text."]), small_image(["Second page text."])]
    data = image_bytes(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    parsed = parse_bytes(data, "image", source="two.tiff", ocr=RAPID)
    assert [(n.page, n.text) for n in parsed.nodes] == [(1, "First page text."), (2, "Second page text.")]


def scanned_page(lines: list[str], heading: str | None = None) -> tuple[bytes, int, int]:
    """A US-letter page scanned at 100 dpi, as :func:`~veracity.testing.pdf_builder.build_pdf` places it."""
    scan = render_page(lines, heading=heading, dpi=100, page_points=(612, 792)).convert("RGB")
    return image_bytes(scan, "JPEG", quality=92), scan.width, scan.height


def test_scanned_pdf_page_is_read_by_ocr_next_to_a_text_page() -> None:
    scan = scanned_page(["Restart the gateway after a rollback."], "Rollback")
    pdf = build_pdf([[(18, "Manual", 740), (11, "Install the agent first.", 700)], []], scans={1: scan})
    parsed = parse_bytes(pdf, "pdf", source="manual.pdf", ocr=OcrSettings(dpi=150))
    assert [(n.kind, n.page, n.source) for n in parsed.nodes] == [
        (NodeKind.HEADING, 1, "text"),
        (NodeKind.PARAGRAPH, 1, "text"),
        (NodeKind.HEADING, 2, "ocr"),
        (NodeKind.PARAGRAPH, 2, "ocr"),
    ]
    assert parsed.nodes[3].text == "Restart the gateway after a rollback."
    assert parsed.nodes[2].heading_path[-1] == "Rollback"
    box = parsed.nodes[3].bbox  # in page fractions: 1 inch margin, text under the heading
    assert box is not None and abs(box.x0 - 72 / 612) < 0.02 and 0.1 < box.top < 0.2
    diagnostics = parsed.diagnostics
    assert (diagnostics.pages_parsed, diagnostics.ocr_pages, diagnostics.pages_needing_ocr) == (2, 1, 0)


def test_scanned_pdf_without_ocr_fails_with_no_text_and_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    from veracity.parse import ocr

    pdf = build_pdf([[]], scans={0: scanned_page(["Only an image here."])})
    with pytest.raises(NoTextError, match=r"OCR is off \(--ocr none\); --ocr rapidocr") as off:
        parse_bytes(pdf, "pdf", source="scan.pdf", ocr=None)
    assert off.value.diagnostics.pages_needing_ocr == 1
    monkeypatch.setattr(ocr, "_ENGINES", {})
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # OCR asked for, not installed
    advice = r"needs OCR; install it with: pip install 'veracity\[ocr\]'"
    with pytest.raises(NoTextError, match=advice) as missing:
        parse_bytes(pdf, "pdf", source="scan.pdf", ocr=RAPID)
    assert missing.value.diagnostics.pages_needing_ocr == 1


def test_an_image_with_ocr_off_is_not_read() -> None:
    with pytest.raises(NoTextError, match=r"read only by OCR, and OCR is off \(--ocr none\)"):
        parse_bytes(image_bytes(small_image(["Store batteries cool."])), "image", source="a.png", ocr=None)


def test_image_without_text_is_a_no_text_failure() -> None:
    blank = render_page([], dpi=72, page_points=(200, 100))
    with pytest.raises(NoTextError, match="no text: OCR found none") as caught:
        parse_bytes(image_bytes(blank), "image", source="blank.png", ocr=RAPID)
    assert caught.value.diagnostics.ocr_pages == 1 and caught.value.diagnostics.empty_pages == 1


def test_damaged_image_is_a_clear_error() -> None:
    with pytest.raises(CorruptFileError, match="not an image"):
        parse_bytes(b"\x89PNG\r\n\x1a\n broken", "image", source="broken.png", ocr=RAPID)


def test_missing_engine_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from veracity.parse import ocr

    monkeypatch.setattr(ocr, "_ENGINES", {})
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'veracity\[ocr\]'"):
        parse_bytes(image_bytes(small_image(["text"])), "image", source="a.png", ocr=RAPID)


def test_unknown_engine_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"rapidocr.*tesseract"):
        OcrSettings(engine="paddle")  # type: ignore[arg-type]
