"""A scanned PDF end to end: ingest (OCR) → ask → the answer cites the page and the box;
parse diagnostics per file in the ledger and ``status``; a file with no text fails."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.catalog.ledger import history
from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb, open_kb
from veracity.kb.status import folder_status
from veracity.model.contracts import AnswerStatus, Principal
from veracity.pipeline.render import answer_dict, answer_text

pytest.importorskip("pdfplumber", reason="PDF parsing needs the 'pdf' extra")
pytest.importorskip("rapidocr_onnxruntime", reason="OCR needs the 'ocr' extra")

from veracity.parse.layout import Word
from veracity.parse.ocr import OcrSettings
from veracity.testing.page_images import find_cjk_font, image_bytes, render_page
from veracity.testing.pdf_builder import write_pdf

if find_cjk_font() is None:
    pytest.skip("no Noto Sans CJK font: apt-get install fonts-noto-cjk", allow_module_level=True)

META = (
    "id: {id}\nrevision: '1'\ntitle: {title}\nvalid_from: '2026-01-01T00:00:00Z'\n"
    "status: active\nvisibility: public\ntrust: official\nlanguage: en\n"
)
ASKER = Principal.of("acme", "public")
AS_OF = datetime(2026, 6, 1, tzinfo=UTC)
SCANNED = [
    "To undo a failed upgrade, run starship rollback --to 3.1",
    "and restart the gateway afterwards.",
]


def scan(lines: list[str], heading: str | None = None) -> tuple[bytes, int, int]:
    page = render_page(lines, heading=heading, dpi=100, page_points=(612, 792)).convert("RGB")
    return image_bytes(page, "JPEG", quality=92), page.width, page.height


@pytest.fixture(scope="module")
def kb_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scanned")
    sources = root / "sources"
    sources.mkdir()
    text_page = [(20, "Starship Manual", 740), (11, "Install the agent with the package manager.", 700)]
    write_pdf(sources / "manual.pdf", [text_page, []], scans={1: scan(SCANNED, "Rollback")})
    (sources / "manual.pdf.meta.yaml").write_text(META.format(id="manual", title="Starship Manual"), "utf-8")
    write_pdf(sources / "blank.pdf", [[]], scans={0: scan([])})  # a scan of an empty sheet
    (sources / "blank.pdf.meta.yaml").write_text(META.format(id="blank", title="Blank"), "utf-8")
    kb = create_kb(root / "kb", FakeEmbedder())
    try:
        report = ingest_paths(kb, [sources], tenant="acme", roles=["public"], ocr=OcrSettings(dpi=150))
    finally:
        kb.catalog.store.close()
    assert report.added == ("manual",)
    assert [(Path(source).name, "no text" in reason) for source, reason in report.rejected] == [
        ("blank.pdf", True)
    ]
    return root / "kb"


def test_answer_cites_the_scanned_page_and_its_box(kb_folder: Path) -> None:
    kb = open_kb(kb_folder, FakeEmbedder())
    try:
        answer = kb.ask("undo a failed upgrade", ASKER, "3.2", AS_OF)
    finally:
        kb.catalog.store.close()
    assert answer.status is AnswerStatus.ANSWER
    cited = answer.citations[answer.claims[0].citation_ids[0] - 1]
    assert (cited.source_id, cited.page_start, cited.page_end) == ("manual", 2, 2)
    (box,) = cited.boxes
    assert box.page == 2 and abs(box.x0 - 72 / 612) < 0.02 and 0.05 < box.top < box.bottom < 0.3
    assert cited.ocr_confidence is not None and cited.ocr_confidence > 0.8
    assert "3.1" in {number.text for number in cited.ocr_numbers}
    data = json.loads(json.dumps(answer_dict(answer)))
    served = data["citations"][cited.citation_id - 1]
    assert served["boxes"] == [
        {"page": 2, "x0": box.x0, "top": box.top, "x1": box.x1, "bottom": box.bottom}
    ]
    assert served["ocr_confidence"] == cited.ocr_confidence
    assert data["claims"][0]["ocr_uncertain"] == []  # read with high confidence: no caveat


def test_ledger_and_status_hold_the_parse_diagnostics(kb_folder: Path) -> None:
    report = folder_status(kb_folder)
    files = {Path(source).name: found for source, found in report["parsing"]["files"].items()}
    manual, blank = files["manual.pdf"], files["blank.pdf"]
    assert (manual["pages_total"], manual["pages_parsed"], manual["ocr_pages"]) == (2, 2, 1)
    assert manual["ocr_engine"] == "rapidocr" and manual["ocr_characters"] > 50
    assert manual["bytes"] > 0 and manual["seconds"] > 0
    assert (blank["pages_total"], blank["pages_parsed"], blank["empty_pages"]) == (1, 0, 1)
    totals = report["parsing"]["totals"]
    assert (totals["files"], totals["pages_total"], totals["ocr_pages"]) == (2, 3, 2)
    assert report["ingestion"].get("failed") == 1  # parsed but no text is a failure, never active
    blank_source = next(s for s in report["parsing"]["files"] if Path(s).name == "blank.pdf")
    kb = open_kb(kb_folder, FakeEmbedder())
    try:
        steps = history(kb.catalog.store.connection, blank_source)
    finally:
        kb.catalog.store.close()
    assert steps[-1]["state"] == "failed" and steps[-1]["diagnostics"]["empty_pages"] == 1


def test_status_command_prints_the_parse_lines(kb_folder: Path) -> None:
    result = CliRunner().invoke(main, ["status", "--kb", str(kb_folder)])
    assert result.exit_code == 0, result.output
    assert "parsing: 2 files" in result.output and "2/3 pages with text" in result.output
    assert "manual.pdf: 2/2 pages" in result.output and "OCR 1 pages" in result.output
    assert "blank.pdf: 0/1 pages · 1 empty" in result.output


class _DoubtfulEngine:
    """An OCR engine that reads every image as the same words, with a low confidence."""

    name = "rapidocr"

    def read(self, image: object) -> list[Word]:
        words, x = [], 40.0
        for token in "Backups are kept for 35 days on the Team plan.".split():
            words.append(Word(token, x, 100, x + 12 * len(token), 130, 30, False, 0.55))
            x += 12 * len(token) + 10
        return words


def test_a_claim_on_a_low_confidence_ocr_number_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veracity.parse import ocr

    settings = OcrSettings()
    monkeypatch.setitem(ocr._ENGINES, (settings.engine, settings.languages, settings.threads),
                        _DoubtfulEngine())  # fmt: skip
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "backups.png").write_bytes(image_bytes(render_page([], dpi=72, page_points=(600, 300))))
    (sources / "backups.png.meta.yaml").write_text(META.format(id="backups", title="Backups"), "utf-8")
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    try:
        report = ingest_paths(kb, [sources], tenant="acme", roles=["public"], images=True)
        assert report.added == ("backups",), report.rejected
        answer = kb.ask("How long are backups kept on the Team plan?", ASKER, "3.2", AS_OF)
    finally:
        kb.catalog.store.close()
    assert answer.status is AnswerStatus.ANSWER
    assert answer.claims[0].ocr_uncertain == ("35",)
    assert "(read by OCR with low confidence: 35; check the cited page)" in answer_text(answer)
    assert answer_dict(answer)["claims"][0]["ocr_uncertain"] == ["35"]
