"""A PDF ingested into a knowledge base: answers cite the page their text is on."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from veracity.index.embedders import FakeEmbedder
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb, open_kb
from veracity.model.contracts import AnswerStatus, Principal
from veracity.pipeline.render import answer_dict, answer_text
from veracity.testing.pdf_builder import write_pdf

pytest.importorskip("pdfplumber", reason="PDF parsing needs the 'pdf' extra (pdfplumber)")

MANUAL = [
    [
        (20, "Starship Manual", 740),
        (11, "Install the agent with the package manager of your system.", 700),
    ],
    [
        (14, "Rollback", 740),
        (11, "To undo a failed upgrade, run starship rollback --to 3.1 and", 700),
        (11, "restart the gateway afterwards.", 687),
    ],
    [
        (14, "Backups", 740),
        (11, "Backups run every night at two o'clock.", 700),
    ],
]
META = (
    "id: manual\nrevision: '1'\ntitle: Starship Manual\nvalid_from: '2026-01-01T00:00:00Z'\n"
    "status: active\nvisibility: public\ntrust: official\nlanguage: en\n"
)
ASKER = Principal.of("acme", "public")
AS_OF = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture
def kb_folder(tmp_path: Path) -> Path:
    sources = tmp_path / "sources"
    sources.mkdir()
    write_pdf(sources / "manual.pdf", MANUAL)
    (sources / "manual.pdf.meta.yaml").write_text(META, "utf-8")
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    try:
        report = ingest_paths(kb, [sources], tenant="acme", roles=["public"])
    finally:
        kb.catalog.store.close()
    assert report.added == ("manual",) and not report.rejected
    return tmp_path / "kb"


def test_the_citation_carries_the_page_of_the_answer(kb_folder: Path) -> None:
    kb = open_kb(kb_folder, FakeEmbedder())
    try:
        chunks = kb.catalog.chunks(kb.catalog.document("manual").document_id)
        assert [(c.heading_path[-1], c.page_start, c.page_end) for c in chunks] == [
            ("Starship Manual", 1, 1),
            ("Rollback", 2, 2),
            ("Backups", 3, 3),
        ]
        answer = kb.ask("undo a failed upgrade", ASKER, "3.2", AS_OF)
    finally:
        kb.catalog.store.close()
    assert answer.status is AnswerStatus.ANSWER
    first = answer.citations[answer.claims[0].citation_ids[0] - 1]
    assert (first.source_id, first.heading_path[-1]) == ("manual", "Rollback")
    assert (first.page_start, first.page_end) == (2, 2)
    assert f"[{first.citation_id}] manual rev 1 · Starship Manual > Rollback · p. 2 · " in answer_text(answer)
    cited = json.loads(json.dumps(answer_dict(answer)))["citations"]
    assert (cited[first.citation_id - 1]["page_start"], cited[first.citation_id - 1]["page_end"]) == (2, 2)


def test_a_table_row_is_found_and_cited_with_its_box(tmp_path: Path) -> None:
    from veracity.testing.pdf_builder import table_rules

    page = [
        (16, "Plans", 740),
        (11, "Prices per seat and month, billed yearly.", 715),
        (11, "Plan", 685, 80, "bold"),
        (11, "Price", 685, 210, "bold"),
        (11, "Team", 665, 80),
        (11, "$12.50", 665, 210),
        (11, "Enterprise", 645, 80),
        (11, "$30", 645, 210),
    ]
    sources = tmp_path / "sources"
    sources.mkdir()
    write_pdf(sources / "plans.pdf", [page], rules={0: table_rules([72, 200, 330], [640, 660, 680, 700])})
    (sources / "plans.pdf.meta.yaml").write_text(META.replace("manual", "plans"), "utf-8")
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    try:
        assert ingest_paths(kb, [sources], tenant="acme", roles=["public"]).added == ("plans",)
        answer = kb.ask("Price of the Enterprise plan", ASKER, "3.2", AS_OF)
    finally:
        kb.catalog.store.close()
    assert answer.status is AnswerStatus.ANSWER
    # the row, carried with its header row so that the claim reads on its own
    assert answer.claims[0].text == "| Plan | Price |\n| --- | --- |\n| Enterprise | $30 |"
    (box,) = answer.citations[0].boxes
    assert box.page == 1 and box.x0 < 0.2 < box.x1 and box.top < 0.2
