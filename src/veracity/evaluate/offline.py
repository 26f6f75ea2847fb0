"""Checks that run without the answer pipeline: baselines, chunkers, citation scoring.

Also the catalog edit used by the stale-index case.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..catalog.catalog import Catalog
from ..model.contracts import ChunkKind, Citation, Claim, Document, Visibility
from ..model.governance import eligibility
from ..parse.chunking import Strategy, block_spans, chunk_document, fact_chunk_map
from ..parse.documents import make_document, metadata_of
from .scoring import citation_scores

if TYPE_CHECKING:
    from .cases import Case
    from .context import CaseOutput, Context

V0_FIXED_ANSWER = "可以继续使用 SAML；成员数超过上限时，多出来的成员会被自动删除。"


def publish_edited_revision(catalog: Catalog, document: Document) -> Document:
    """Publish the next revision of ``document`` with one sentence added (old one retired)."""
    from ..parse.chunking import chunk_for_index

    metadata = {**metadata_of(document), "revision": str(int(document.revision) + 1)}
    edited = make_document(metadata, document.body + "\n\n本文已更新。")
    return catalog.new_revision(document.document_id, edited, chunk_for_index(edited))


def _checked(metrics: dict[str, Any], failures: list[str]) -> CaseOutput:
    """An offline check's output: no answer status, its metrics and what failed, no trace."""
    return {"status": None, "metrics": metrics, "failures": failures}, None

def check_baseline_v0(ctx: Context, case: Case) -> CaseOutput:
    """v0: one fixed answer, no retrieval, no citation."""
    claim = Claim(text=V0_FIXED_ANSWER, citation_ids=())
    scores = citation_scores([claim], [], {}, case.required_fact_ids)
    failures = []
    if scores["citations"] != case.params.get("expect_citations", 0):
        failures.append(f"{scores['citations']} citations")
    if scores["unsupported_claims"] != case.params.get("expect_unsupported_claims", 1):
        failures.append(f"{scores['unsupported_claims']} unsupported claims")
    return {"status": "answer", "metrics": scores, "failures": failures}, None


def check_baseline_v1(ctx: Context, case: Case) -> CaseOutput:
    """v1: every document of the tenant stuffed into the context, no governance."""
    catalog = ctx.kb.catalog
    documents = catalog.documents(case.tenant)
    scope = case.scope(catalog.roles(case.tenant))
    required = set(case.required_fact_ids)
    ineligible = [d for d in documents if not eligibility(d, scope).eligible]
    contradicting = sorted(
        d.source_id
        for d in documents
        if any(f.stance == "contradicts" and f.fact_id in required for f in d.facts)
    )
    # Labeled by the cases, never by the detector under test.
    instructing = sorted(d.source_id for d in documents if d.source_id in ctx.instruction_sources)
    counts = {
        "context_documents": len(documents),
        "internal_documents": sum(d.visibility is Visibility.INTERNAL for d in documents),
        "ineligible_documents": len(ineligible),
        "conflicting_documents": len(contradicting),
        "instruction_bearing_documents": len(instructing),
        "citations": 0,
    }
    failures = []
    params = case.params
    if counts["context_documents"] != params.get("expect_context_documents", len(documents)):
        failures.append(f"{counts['context_documents']} documents in context")
    if (
        "expect_internal_documents" in params
        and counts["internal_documents"] != params["expect_internal_documents"]
    ):
        failures.append(f"{counts['internal_documents']} internal documents")
    if "conflicting_documents" in params and sorted(
        set(contradicting) | set(instructing)
    ) != sorted(params["conflicting_documents"]):
        failures.append("conflicting documents differ from the case")
    return _checked(counts, failures)


def _chunk_document(
    ctx: Context, case: Case, strategy: Strategy, size: int, overlap: int = 0
) -> tuple[Document, Any]:
    document = ctx.kb.catalog.document(case.params["document"])
    return document, chunk_document(document, strategy, size=size, overlap=overlap)


def _whole_blocks(document: Document, kinds: set[ChunkKind]) -> list[tuple[ChunkKind, int, int]]:
    return [b for b in block_spans(document.body) if b[0] in kinds]


def _cut(blocks: list[tuple[ChunkKind, int, int]], chunks: Any) -> dict[str, int]:
    """Per kind: how many blocks no single chunk holds whole."""
    cut: dict[str, int] = {}
    for kind, start, end in blocks:
        whole = any(c.start <= start and end <= c.end for c in chunks)
        cut[kind.value] = cut.get(kind.value, 0) + (0 if whole else 1)
    return cut


def check_chunk_fixed(ctx: Context, case: Case) -> CaseOutput:
    """Fixed windows cut at least one table or code block."""
    document, chunks = _chunk_document(
        ctx,
        case,
        Strategy.FIXED,
        int(case.params.get("size", 90)),
        int(case.params.get("overlap", 0)),
    )
    cut = _cut(_whole_blocks(document, {ChunkKind.TABLE, ChunkKind.CODE}), chunks)
    expected = case.params.get("expect_cut_any", ["table", "code"])
    failures = (
        [] if any(cut.get(kind, 0) for kind in expected) else ["no table or code block was cut"]
    )
    return _checked({"chunks": len(chunks), "blocks_cut": cut}, failures)


def check_chunk_structural(ctx: Context, case: Case) -> CaseOutput:
    """Structural chunks keep tables and code whole and keep heading paths."""
    document, chunks = _chunk_document(
        ctx, case, Strategy.STRUCTURAL, int(case.params.get("budget", 400))
    )
    cut = _cut(_whole_blocks(document, {ChunkKind.TABLE, ChunkKind.CODE}), chunks)
    failures = [f"{n} {kind} block(s) cut" for kind, n in sorted(cut.items()) if n]
    headings = {h for c in chunks for h in c.heading_path}
    failures += [
        f"heading {h!r} lost" for h in case.params.get("expect_headings", []) if h not in headings
    ]
    return _checked({"chunks": len(chunks), "blocks_cut": cut}, failures)


def check_chunk_contextual(ctx: Context, case: Case) -> CaseOutput:
    """One prefix per structural chunk; text, ids and document digest unchanged."""
    budget = int(case.params.get("budget", 400))
    document, contextual = _chunk_document(ctx, case, Strategy.CONTEXTUAL, budget)
    _, structural = _chunk_document(ctx, case, Strategy.STRUCTURAL, budget)
    failures = []
    prefixes = sum(1 for c in contextual if c.context_prefix)
    if prefixes != len(structural):
        failures.append(f"{prefixes} prefixes for {len(structural)} structural chunks")
    if [replace(c, context_prefix="") for c in contextual] != list(structural):
        failures.append("chunk text or ids changed")
    if any(c.document_digest != document.content_digest for c in contextual):
        failures.append("document digest changed")
    return _checked({"chunks": len(contextual), "prefixes": prefixes}, failures)


def check_citation_mapping(ctx: Context, case: Case) -> CaseOutput:
    """Score hand-made claim→citation maps; the metrics must give the known values."""
    document, chunks = _chunk_document(
        ctx, case, Strategy(case.params.get("chunker", "structural")), 400
    )
    by_fact = fact_chunk_map(chunks)
    citations = [
        Citation(
            i,
            document.document_id,
            document.source_id,
            document.revision,
            c.chunk_id,
            c.heading_path,
            c.start,
            c.end,
            c.content_digest,
        )
        for i, c in enumerate(chunks, start=1)
    ]
    citation_of = {c.chunk_id: c.citation_id for c in citations}
    quotes = {f.fact_id: f.quote for f in document.facts if f.stance == "supports"}
    chunk_map = {c.chunk_id: c for c in chunks}
    per_map = {}
    for mapping in case.params["maps"]:
        claims = [
            Claim(
                text=quotes[item["fact"]],
                citation_ids=(citation_of[by_fact[item["cite_fact"]][0]],),
                fact_ids=(item["fact"],),
            )
            for item in mapping["claims"]
        ]
        per_map[mapping["name"]] = citation_scores(
            claims, citations, chunk_map, case.required_fact_ids
        )
    names = ("citation_precision", "citation_recall", "supported_claim_ratio")
    metrics: dict[str, Any] = {
        name: sum(m[name] for m in per_map.values()) / len(per_map) for name in names
    }
    metrics["maps"] = per_map
    failures = []
    for name, key in (
        ("citation_precision", "expect_precision"),
        ("citation_recall", "expect_recall"),
        ("supported_claim_ratio", "expect_supported_ratio"),
    ):
        if key in case.params and abs(metrics[name] - case.params[key]) > 1e-9:
            failures.append(f"{name} {metrics[name]}, expected {case.params[key]}")
    return _checked(metrics, failures)
