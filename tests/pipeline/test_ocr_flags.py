"""Claims resting on numbers OCR read with low confidence are flagged; others are left alone."""

from __future__ import annotations

from veracity.model.contracts import Citation, Claim, OcrNumber
from veracity.pipeline.ocr_flags import LOW_OCR_CONFIDENCE, flag_ocr_numbers


def citation(citation_id: int, *numbers: OcrNumber) -> Citation:
    return Citation(
        citation_id=citation_id, source_id="scan", revision="1", document_id="d", chunk_id=f"c{citation_id}",
        heading_path=(), start=0, end=10, chunk_digest="x", ocr_numbers=numbers,
    )  # fmt: skip


def test_a_low_confidence_number_stated_by_the_claim_is_flagged() -> None:
    claims = [Claim("The Team plan costs $12.50 per seat, 15% off yearly.", (1,))]
    cited = [citation(1, OcrNumber("$12.50", 0.62), OcrNumber("15%", 0.99), OcrNumber("30", 0.4))]
    (flagged,) = flag_ocr_numbers(claims, cited)
    assert flagged.ocr_uncertain == ("$12.50",)  # 15% was read well; 30 is not in the claim


def test_numbers_read_well_or_not_by_ocr_leave_the_claim_unchanged() -> None:
    claims = (Claim("Backups are kept for 35 days.", (1,)), Claim("Release 3.2 adds SSO.", (2,)))
    cited = [citation(1, OcrNumber("35", LOW_OCR_CONFIDENCE)), citation(2)]
    assert flag_ocr_numbers(claims, cited) == claims


def test_only_the_claims_own_citations_count() -> None:
    claims = [Claim("Invitations expire after 72 hours.", (2,))]
    cited = [citation(1, OcrNumber("72", 0.3)), citation(2)]
    assert flag_ocr_numbers(claims, cited)[0].ocr_uncertain == ()


def test_numbers_inside_chinese_text_are_found() -> None:
    claims = [Claim("邀请链接7天内有效，价格为12.50元。", (1,))]
    cited = [citation(1, OcrNumber("12.50", 0.5), OcrNumber("7", 0.5))]
    assert flag_ocr_numbers(claims, cited)[0].ocr_uncertain == ("7", "12.50")
