"""Claims that rest on numbers OCR read with low confidence, flagged so the answer says so.

OCR confuses 0/O and 1/I and loses decimal points and percent signs, so a
number read from a scanned page is only as good as the engine's confidence
in it. Chunks read by OCR carry the numbers, versions and amounts found in
them with the confidence of the text each was read in
(:class:`~veracity.model.contracts.OcrNumber`, set at ingest). A claim whose
text states one of those numbers, cited to such a chunk, with a confidence
below :data:`LOW_OCR_CONFIDENCE`, gets that number in ``ocr_uncertain``; the
answer prints it next to the claim ("read by OCR with low confidence"),
and the JSON answer carries it. Pure: records in, new records out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..model.contracts import Citation, Claim
from ..parse.structure import NUMBER

__all__ = ["LOW_OCR_CONFIDENCE", "flag_ocr_numbers"]

LOW_OCR_CONFIDENCE = 0.9
"""An OCR'd number read with a confidence below this is flagged on the claims stating it."""


def flag_ocr_numbers(
    claims: Sequence[Claim], citations: Sequence[Citation], *, threshold: float = LOW_OCR_CONFIDENCE
) -> tuple[Claim, ...]:
    """``claims`` with ``ocr_uncertain`` set to the low-confidence OCR numbers each one states.

    A number counts when it occurs in the claim's text (as a whole number,
    :data:`~veracity.parse.structure.NUMBER`) and one of the claim's cited
    chunks has it among its OCR numbers with a confidence below ``threshold``.
    Claims without such a number come back unchanged.
    """
    by_id = {citation.citation_id: citation for citation in citations}
    flagged: list[Claim] = []
    for claim in claims:
        low = {
            number.text
            for cid in claim.citation_ids
            if (citation := by_id.get(cid)) is not None
            for number in citation.ocr_numbers
            if number.confidence < threshold
        }
        stated = [match.group(0) for match in NUMBER.finditer(claim.text)] if low else []
        uncertain = tuple(dict.fromkeys(text for text in stated if text in low))
        flagged.append(replace(claim, ocr_uncertain=uncertain) if uncertain else claim)
    return tuple(flagged)
