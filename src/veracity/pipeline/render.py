"""Plain data and text views of records, for the CLI, reports and HTTP."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..model.contracts import Chunk, Citation, Claim, Document, PageBox
from ..model.versions import range_label
from ..parse.documents import metadata_of
from .trace import Audience

if TYPE_CHECKING:  # only annotations: rendering a document needs no engine (fast `veracity docs`)
    from .engine import Answer


def canonical_json(data: Any) -> str:
    """Sorted keys, no NaN, UTF-8 text, trailing newline: byte-identical for equal data."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False) + "\n"


def citation_dict(citation: Citation) -> dict[str, Any]:
    """A citation as plain data."""
    return {
        "id": citation.citation_id,
        "source_id": citation.source_id,
        "revision": citation.revision,
        "document_id": citation.document_id,
        "chunk_id": citation.chunk_id,
        "heading_path": list(citation.heading_path),
        "start": citation.start,
        "end": citation.end,
        "chunk_digest": citation.chunk_digest,
        "page_start": citation.page_start,
        "page_end": citation.page_end,
        "boxes": [box_dict(box) for box in citation.boxes],
        "ocr_confidence": citation.ocr_confidence,
        "versions": range_label(citation.version_min, citation.version_max) or None,
    }


def box_dict(box: PageBox) -> dict[str, Any]:
    """Where on a page: ``page`` (1-based) and the corners as fractions of its width and height."""
    return {"page": box.page, "x0": box.x0, "top": box.top, "x1": box.x1, "bottom": box.bottom}


def page_label(page_start: int | None, page_end: int | None) -> str:
    """``p. 3`` for one page, ``pp. 3–4`` for a range, ``""`` without pages."""
    if page_start is None:
        return ""
    if page_end is None or page_end == page_start:
        return f"p. {page_start}"
    return f"pp. {page_start}–{page_end}"


def claim_dict(claim: Claim) -> dict[str, Any]:
    """A claim as plain data."""
    return {
        "text": claim.text,
        "citations": list(claim.citation_ids),
        "fact_ids": list(claim.fact_ids),
        "source_trust": claim.source_trust,
        "composer": claim.composer,
        "ocr_uncertain": list(claim.ocr_uncertain),
    }


def answer_dict(
    answer: Answer,
    *,
    explain: bool = False,
    timings: bool = True,
    audience: Audience | str = Audience.ASKER,
) -> dict[str, Any]:
    """An answer as plain data; ``explain`` adds the trace as ``audience`` may see it."""
    data: dict[str, Any] = {
        "question": answer.question,
        "status": answer.status.value,
        "claims": [claim_dict(c) for c in answer.claims],
        "citations": [citation_dict(c) for c in answer.citations],
        "missing_fact_ids": list(answer.missing_fact_ids),
        "uncovered_subquestions": list(answer.uncovered_subquestions),
        "reasons": list(answer.reasons),
    }
    composer = dict(answer.trace.composer)
    if composer:  # a written answer says what wrote it and what was dropped
        data["composer"] = composer.get("name", "")
        data["dropped_claims"] = [
            {"claim": index, "reason": why} for index, why in answer.trace.dropped_claims
        ]
    # always there (empty when every component took part), as in the service's JSON
    data["degraded"] = ["llm_unavailable"] if composer.get("outcome") == "llm_unavailable" else []
    if explain:
        data["trace"] = answer.trace.to_dict(timings=timings, audience=audience)
    return data


_LIST_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


def answer_text(answer: Answer) -> str:
    """A human view: status, claims with [n] markers, then the numbered citations."""
    lines = [f"status: {answer.status.value}"]
    if answer.claims:
        lines.append("")
        for claim in answer.claims:
            marks = "".join(f"[{cid}]" for cid in claim.citation_ids)
            # a claim copied from a list item keeps its marker; print one bullet, not "- - "
            marked = f"({claim.source_trust} source) " if claim.source_trust else ""
            lines.append(f"- {marked}{_LIST_MARKER.sub('', claim.text, count=1)} {marks}")
            if claim.ocr_uncertain:
                numbers = ", ".join(claim.ocr_uncertain)
                lines.append(f"  (read by OCR with low confidence: {numbers}; check the cited page)")
    if answer.missing_fact_ids:
        lines.append("")
        lines.append(
            "missing facts (nothing is said about them): " + ", ".join(answer.missing_fact_ids)
        )
    if answer.uncovered_subquestions:
        lines.append("")
        lines.append("not covered by the evidence:")
        lines.extend(f"  ? {text}" for text in answer.uncovered_subquestions)
    if answer.citations:
        lines.append("")
        lines.append("citations:")
        scoped = {int(r.split(":")[1]) for r in answer.reasons if r.startswith("version_scope:")}
        for c in answer.citations:
            path = " > ".join(c.heading_path) or "(top)"
            pages = page_label(c.page_start, c.page_end)
            where = f"{path} · {pages}" if pages else path
            scope = (
                f" · covers versions {range_label(c.version_min, c.version_max)}"
                f" (asked: {answer.trace.target_version})"
                if c.citation_id in scoped
                else ""
            )
            head = f"  [{c.citation_id}] {c.source_id} rev {c.revision}"
            lines.append(f"{head} · {where} · chunk {c.chunk_id[:12]}{scope}")
    if answer.reasons:
        lines.append("")
        lines.append("reasons: " + ", ".join(answer.reasons))
    composer = dict(answer.trace.composer)
    if composer:
        lines.append("")
        lines.append(composer_line(composer, answer.trace.dropped_claims))
    return "\n".join(lines)


def composer_line(composer: dict[str, str], dropped: tuple[tuple[int, str], ...]) -> str:
    """One line on what wrote the claims: composer, model, outcome, and the dropped claims."""
    name, model, outcome = (composer.get(key, "") for key in ("name", "model", "outcome"))
    line = f"composer: {name} ({model}), {outcome}"
    if composer.get("outcome") == "llm_unavailable":
        line += f" ({composer.get('error', '')}); degraded: llm_unavailable, the extractive answer is shown"
    if dropped:
        line += "; dropped: " + ", ".join(f"claim {index} ({why})" for index, why in dropped)
    return line


def chunk_dict(chunk: Chunk, *, text: bool = False) -> dict[str, Any]:
    """A chunk as plain data (``text`` adds the chunk text and context prefix)."""
    data: dict[str, Any] = {
        "chunk_id": chunk.chunk_id,
        "ordinal": chunk.ordinal,
        "heading_path": list(chunk.heading_path),
        "start": chunk.start,
        "end": chunk.end,
        "kind": chunk.kind.value,
        "fact_ids": list(chunk.fact_ids),
        "content_digest": chunk.content_digest,
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "boxes": [box_dict(box) for box in chunk.boxes],
        "ocr_confidence": chunk.ocr_confidence,
    }
    if text:
        data["context_prefix"] = chunk.context_prefix
        data["text"] = chunk.text
    return data


def document_detail(document: Document, chunks: list[Chunk]) -> dict[str, Any]:
    """``docs show``: metadata, digests and chunks."""
    return {**metadata_of(document), "chunks": [chunk_dict(c) for c in chunks]}
