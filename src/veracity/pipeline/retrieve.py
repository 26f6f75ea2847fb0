"""The online pipeline: eligibility → recall → fusion → rerank → return gate → packet.

Eligibility runs first, on the index snapshot's metadata; recall only ever
sees eligible chunk ids. After reranking, every candidate's document is
resolved again in the live catalog (status, eligibility, content digest, chunk
digest) and whatever changed is dropped with its reason.

Each trust tier (official, community, untrusted) is a pool of its own: recall,
term statistics, fusion and rerank of the official tier run over official
chunks alone, so nothing a community or untrusted page says — whether the
injection detector caught it or not — changes which official evidence is
found, how it scores, or the question-term weights the decision reads. The
tiers meet again, ordered by rerank score, only in the evidence packet (which
keeps ``top_k`` per tier). The trace lists each channel's and the fused
ranking tier by tier, official first.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ..catalog.catalog import Catalog, Resolution
from ..index.dense import Embedder
from ..index.snapshot import FiltersEligibility, SearchBackend
from ..model.contracts import Chunk, Document, Hit, Query, Scores, Trust, sha256_hex
from ..model.governance import HIDDEN_REASONS, EligibilityScope, eligible_documents, require_aware
from ..text.questions import AnalyzedQuestion, analyze_question
from .candidates import TermWeights
from .evidence import EvidencePacket, build_packet
from .fusion import reciprocal_rank_fusion
from .injection import prefetch_verdicts
from .rerank import Reranker, ranked
from .trace import Trace

CHANNELS = ("bm25", "dense")


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    """Knobs of one retrieval run."""

    candidate_k: int = 30
    top_k: int = 6
    min_score: float = 0.25
    rrf_k: int = 60
    channels: tuple[str, ...] = CHANNELS


@dataclass(frozen=True, slots=True)
class Retrieval:
    """Result of the pipeline up to the evidence packet.

    ``term_weights`` holds the question terms' chunk frequencies over the
    eligible chunks only; ``query_vector`` the dense channel's question vector
    (``None`` when the dense channel did not run).
    """

    query: Query
    question: AnalyzedQuestion
    """The query's text, analysed once: every later stage reads this, never the text again."""
    packet: EvidencePacket
    documents: Mapping[str, Document]
    trace: Trace
    term_weights: TermWeights = field(default_factory=lambda: TermWeights(chunks=0, frequencies={}))
    query_vector: npt.NDArray[np.float32] | None = None


def query_digest(query: Query) -> str:
    """Digest of everything that defines a question (text, principal, version, moment)."""
    parts = (
        query.text,
        query.principal.tenant,
        ",".join(sorted(query.principal.roles)),
        query.version or "",
        query.as_of.isoformat(),
        ",".join(query.required_fact_ids or ()),
    )
    return sha256_hex("\x1f".join(parts))


class _Clock:
    def __init__(self) -> None:
        self.stages: list[tuple[str, float]] = []

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage; a stage run again (once per trust tier) adds to its first entry."""
        start = time.perf_counter()
        yield
        spent = (time.perf_counter() - start) * 1000.0
        for i, (seen, total) in enumerate(self.stages):
            if seen == name:
                self.stages[i] = (name, total + spent)
                return
        self.stages.append((name, spent))


def trust_pools(document_ids: Collection[str], by_trust: Mapping[Trust, frozenset[str]]) -> list[set[str]]:
    """``document_ids`` split by their source's trust (``by_trust``: every indexed document's id by
    trust), official first; empty tiers left out."""
    ids = document_ids if isinstance(document_ids, (set, frozenset)) else set(document_ids)
    # set intersections: a million-chunk tenant's tens of thousands of eligible documents are split
    # in C (a lookup per document took 26 ms of an ask)
    pools = [set(ids & by_trust.get(trust, frozenset())) for trust in Trust]
    return [pool for pool in pools if pool]


def eligible_set(query: Query, snapshot: SearchBackend, known_roles: frozenset[str]) -> tuple[
    set[str], list[tuple[str, str, str]], int
]:
    """Eligible document ids, named exclusions, and the count of hidden ones.

    A backend that filters itself (:class:`FiltersEligibility`, e.g. in SQL) is
    asked; any other gets the Python reference filter over its ``documents``.
    Documents of other tenants are out of scope: neither named nor counted.
    """
    scope = EligibilityScope(query.principal, query.version, query.as_of, known_roles)
    if isinstance(snapshot, FiltersEligibility):
        outcome = snapshot.eligible_documents(scope)
    else:
        outcome = eligible_documents(snapshot.documents, scope)
    return set(outcome.document_ids), list(outcome.excluded), outcome.hidden


def run(
    query: Query,
    snapshot: SearchBackend,
    catalog: Catalog,
    embedder: Embedder,
    reranker: Reranker,
    settings: RetrievalSettings | None = None,
    *,
    remove_chunk_ids: Collection[str] = (),
) -> Retrieval:
    """Run the pipeline for ``query``. ``remove_chunk_ids`` drops chunks from evidence
    (an evaluation hook: 'what if this chunk were missing'); the trace records it."""
    settings = settings or RetrievalSettings()
    require_aware(query.as_of)
    clock = _Clock()
    digest = query_digest(query)
    with clock.stage("question"):  # read once here; every later stage takes the analysis
        question = analyze_question(query.text)
    with clock.stage("eligibility"):
        known_roles = (
            catalog.roles(query.principal.tenant) if query.principal.tenant else frozenset()
        )
        eligible_docs, excluded, hidden = eligible_set(query, snapshot, known_roles)
        by_document = snapshot.chunks_by_document  # once: a backend's property may cost a query
        eligible_chunks = sum(map(len, map(by_document.__getitem__, eligible_docs)))
        pools = trust_pools(eligible_docs, snapshot.document_ids_by_trust)
    documents, chunks = snapshot.documents, snapshot.chunks  # once each, for the same reason
    vector: npt.NDArray[np.float32] | None = None
    if pools and "dense" in settings.channels:
        with clock.stage("embed_query"):
            vector = embedder.embed_batch([query.text], kind="query")[0]
    channel_results: dict[str, list[tuple[str, float]]] = {}
    fused: list[tuple[str, float]] = []
    reranked: list[Hit] = []
    for pool in pools:
        found = _recall(query, question, snapshot, embedder, settings, pool, vector, clock)
        for name, pairs in found.items():
            channel_results.setdefault(name, []).extend(pairs)
        with clock.stage("fusion"):
            pool_fused = _fuse(found, settings.rrf_k)
            fused.extend(pool_fused)
            lexical, semantic = dict(found.get("bm25", ())), dict(found.get("dense", ()))
            hits = [
                Hit(
                    chunk=chunks[cid],
                    scores=Scores(
                        lexical=lexical.get(cid),
                        semantic=semantic.get(cid),
                        fusion=score,
                    ),
                    rank=rank,
                )
                for rank, (cid, score) in enumerate(pool_fused, start=1)
            ]
        with clock.stage("rerank"):
            prefetch_verdicts(  # the reranker may run on a helper thread: it reads what is read here
                (h.chunk.text, h.chunk.heading_path)
                for h in hits
                if documents[h.chunk.document_id].trust is not Trust.OFFICIAL
            )
            reranked.extend(reranker.rerank(query, hits, documents, question=question))
    reranked = ranked(reranked)
    with clock.stage("term_statistics"):
        # the most trusted pool's statistics: what other tiers contain never reweighs the question
        terms = list(question.terms)
        chunk_count, frequencies = (
            snapshot.document_frequencies(query.principal.tenant, terms, eligible_document_ids=pools[0])
            if pools and terms
            else (0, {})
        )
    with clock.stage("return_gate"):
        kept, rejections, gate_hidden = _return_gate(reranked, query, catalog)
        removed = tuple(h.chunk.chunk_id for h in kept if h.chunk.chunk_id in remove_chunk_ids)
        kept = [h for h in kept if h.chunk.chunk_id not in remove_chunk_ids]
    with clock.stage("evidence"):
        packet = build_packet(
            digest,
            kept,
            documents,
            query.required_fact_ids,
            top_k=query.top_k or settings.top_k,
            min_score=settings.min_score,
            version=query.version,
        )
    trace = Trace(
        query_digest=digest,
        tenant=query.principal.tenant,
        roles=tuple(sorted(query.principal.roles)),
        target_version=query.version,
        as_of=query.as_of.isoformat(),
        eligible_documents=len(eligible_docs),
        eligible_chunks=eligible_chunks,
        excluded=tuple(excluded),
        excluded_hidden=hidden,
        channels=tuple((name, tuple(pairs)) for name, pairs in sorted(channel_results.items())),
        fused=tuple(fused),
        reranked=tuple(
            (h.chunk.chunk_id, h.scores.rerank or 0.0, h.scores.rerank_parts) for h in reranked
        ),
        gate_rejections=tuple(rejections),
        gate_hidden=gate_hidden,
        removed_by_caller=removed,
        quarantined=packet.quarantined,
        duplicates=packet.duplicate_chunk_ids,
        final=tuple(c.chunk_id for c in packet.citations),
        conflicts=tuple((c.fact_id, c.resolved_by, c.winner) for c in packet.conflicts),
        present_fact_ids=packet.present_fact_ids,
        missing_fact_ids=packet.missing_fact_ids,
        packet_digest=packet.packet_digest,
        timings_ms=tuple(clock.stages),
    )
    return Retrieval(
        query=query,
        question=question,
        packet=packet,
        documents=documents,  # the index's read-only mapping: copying it cost milliseconds at 1M chunks
        trace=trace,
        term_weights=TermWeights(chunks=chunk_count, frequencies=frequencies),
        query_vector=vector,
    )


def _recall(
    query: Query,
    question: AnalyzedQuestion,
    snapshot: SearchBackend,
    embedder: Embedder,
    settings: RetrievalSettings,
    pool: set[str],
    vector: npt.NDArray[np.float32] | None,
    clock: _Clock,
) -> dict[str, list[tuple[str, float]]]:
    """Each channel's candidates among the documents of one trust pool (statistics over it alone)."""
    found: dict[str, list[tuple[str, float]]] = {}
    tenant = query.principal.tenant
    if "bm25" in settings.channels:
        with clock.stage("bm25"):
            found["bm25"] = snapshot.lexical_search(
                tenant, question.tokens, k=settings.candidate_k, eligible_document_ids=pool
            )
    if vector is not None:
        with clock.stage("dense"):
            found["dense"] = snapshot.dense_search(
                tenant, vector, k=settings.candidate_k, eligible_document_ids=pool, model_id=embedder.model_id
            )
    return found


def _fuse(found: Mapping[str, list[tuple[str, float]]], rrf_k: int) -> list[tuple[str, float]]:
    rankings = {name: [cid for cid, _ in pairs] for name, pairs in found.items()}
    return reciprocal_rank_fusion(rankings, k=rrf_k) if rankings else []


def _return_gate(
    hits: list[Hit], query: Query, catalog: Catalog
) -> tuple[list[Hit], list[tuple[str, str]], int]:
    """Re-check every candidate against the live catalog, in one read snapshot and a constant
    number of statements (not a few per candidate): the candidates' documents, their catalog
    revisions and the tenant's roles at once (:meth:`Catalog.resolve_many`), then the chunks of
    the candidates whose document passed, at once (a chunk whose document failed is not even
    read). Each candidate's outcome is what checking it alone gives: its document's first
    failed check (status, tenant, role, validity, version), else ``digest`` when the document
    changed since indexing, else ``chunk`` when the chunk is gone or changed."""
    if not hits:
        return [], [], 0
    with catalog.store.read():
        resolved = catalog.resolve_many(
            [hit.chunk.document_id for hit in hits], query.principal, query.version, query.as_of
        )
        reasons = [_document_reason(resolved[hit.chunk.document_id], hit.chunk) for hit in hits]
        live = catalog.store.get_chunks_by_id(
            [hit.chunk.chunk_id for hit, reason in zip(hits, reasons, strict=True) if reason is None]
        )
    kept: list[Hit] = []
    rejections: list[tuple[str, str]] = []
    hidden = 0
    for hit, reason in zip(hits, reasons, strict=True):
        chunk = hit.chunk
        if reason is None:
            found = live.get(chunk.chunk_id)
            if found is None or found.content_digest != chunk.content_digest:
                reason = "chunk"
        if reason is None:
            kept.append(replace(hit, rank=len(kept) + 1))
        elif reason in HIDDEN_REASONS:
            hidden += 1
        else:
            rejections.append((chunk.chunk_id, reason))
    return kept, rejections, hidden


def _document_reason(live: Resolution, chunk: Chunk) -> str | None:
    """Why ``chunk`` fails its document's live check: the first failed eligibility check, or
    ``digest`` when the document changed since the chunk was indexed; ``None`` when it passes."""
    if not live.eligible:
        return str(live.primary_reason)
    if live.content_digest != chunk.document_digest:
        return "digest"
    return None
