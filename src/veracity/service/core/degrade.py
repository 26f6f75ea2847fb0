"""Degradation: what answering does when a component fails, decided here and named in the answer.

- **Embedder fails** (raises, or failed less than ``retry_after_s`` ago):
  :class:`GuardedEmbedder` raises :class:`~veracity.model.errors.DenseUnavailableError`
  and the question is answered again by :func:`lexical_engine`, the same
  catalog, index and reranker with the BM25 channel alone;
  ``dense_unavailable`` is noted.
- **Reranker raises or runs past its timeout**: :class:`GuardedReranker`
  returns the candidates in fused order (ties by chunk id) and notes
  ``rerank_unavailable``. Every later gate still runs.
- **Catalog unreachable, or the return gate fails**: nothing is said.
  :func:`denied` is an abstain with the reason ``catalog_unavailable``, no
  claims and no citations, so candidates the live catalog could not check
  are never served.

Notes are collected per request through :func:`noting` (a context variable,
so concurrent requests in other threads keep their own).
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from datetime import datetime
from enum import StrEnum
from functools import partial
from typing import Final

import apsw
import numpy as np

from ...index.dense import Embedder, EmbedKind, FloatMatrix
from ...kb.local import LocalKnowledgeBase
from ...kb.local import _version as resolve_version  # the same version rule as LocalKnowledgeBase.ask
from ...model.contracts import AnswerStatus, Document, Hit, Principal, sha256_hex
from ...model.errors import CatalogError, DenseUnavailableError
from ...pipeline.engine import Engine
from ...pipeline.outcome import Answer
from ...pipeline.rerank import Reranker
from ...pipeline.retrieve import Retrieval, RetrievalSettings
from ...pipeline.trace import Trace
from ...text.questions import AnalyzedQuestion

__all__ = [
    "UNREACHABLE",
    "Degradation",
    "GuardedEmbedder",
    "GuardedReranker",
    "LexicalEmbedder",
    "answer_or_degrade",
    "denied",
    "fused_order",
    "lexical_engine",
    "note",
    "noting",
    "retrieve_or_degrade",
]

UNREACHABLE = (CatalogError, apsw.Error, OSError)
"""What a failing catalog raises: the answer is then denied, never computed without the catalog."""

DENSE_RETRY_SECONDS: Final = 30.0
"""After the embedder fails, asks go without the dense channel (said in `degraded`) for this
many seconds before it is tried again."""
RERANK_TIMEOUT_SECONDS: Final = 2.0
"""A reranker taking longer is given up for that ask: the fused order stands (said in `degraded`)."""


class Degradation(StrEnum):
    """A component that did not take part in an answer, and what stood in for it."""

    DENSE_UNAVAILABLE = "dense_unavailable"
    RERANK_UNAVAILABLE = "rerank_unavailable"
    CATALOG_UNAVAILABLE = "catalog_unavailable"


_NOTES: ContextVar[list[Degradation] | None] = ContextVar("veracity_degradations", default=None)


@contextmanager
def noting() -> Iterator[list[Degradation]]:
    """Collect the degradations of the code run inside (one request)."""
    notes: list[Degradation] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def note(kind: Degradation) -> None:
    """Record ``kind`` for the current request (once); outside :func:`noting` it is dropped."""
    notes = _NOTES.get()
    if notes is not None and kind not in notes:
        notes.append(kind)


class GuardedEmbedder:
    """An embedder that turns any failure into ``DenseUnavailableError`` and stays off for a while.

    After a failure it does not call the model again for ``retry_after_s``
    seconds (each question would otherwise wait for the same failure first).
    """

    def __init__(self, inner: Embedder, *, retry_after_s: float = DENSE_RETRY_SECONDS) -> None:
        """Guard ``inner``; its model id and dimension are this embedder's."""
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.retry_after_s = retry_after_s
        self._down_until = 0.0
        self._lock = threading.Lock()
        self.last_error: str | None = None

    @property
    def available(self) -> bool:
        """False while the last failure is more recent than ``retry_after_s``."""
        return time.monotonic() >= self._down_until

    def embed_batch(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> FloatMatrix:
        """The inner model's vectors, or ``DenseUnavailableError``."""
        if not self.available:
            raise DenseUnavailableError(f"the embedder is unavailable ({self.last_error}); retrying later")
        try:
            return self.inner.embed_batch(texts, kind=kind)
        except Exception as exc:  # any failure of the model is the same to a reader: no dense channel
            with self._lock:
                self._down_until = time.monotonic() + self.retry_after_s
                self.last_error = f"{type(exc).__name__}: {exc}"
            raise DenseUnavailableError(f"the embedder failed: {self.last_error}") from exc


class LexicalEmbedder:
    """Stands in for a failed model when answering lexically: a vector that means nothing.

    Each text gets a random unit vector seeded by its digest, so the Embedder
    contract holds (deterministic, unit norm, rows independent) while any two
    different texts are unrelated (cosine ≈ 0 ± 0.05 at 512 dimensions). The
    lexical engine runs no dense channel, so no question vector exists and
    sentence choice skips dense similarity; the retry's word-for-word
    comparisons find no near word. Its own model id keeps these vectors out of
    the real model's sentence cache.
    """

    model_id = "dense-unavailable"

    def __init__(self, dim: int) -> None:
        """Vectors of width ``dim``."""
        self.dim = dim

    def embed_batch(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> FloatMatrix:
        """One unrelated unit vector per text, shape ``(len(texts), dim)``."""
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(self.dim)
            rows[row] = vector / np.linalg.norm(vector)
        return rows


def fused_order(hits: Sequence[Hit]) -> list[Hit]:
    """The hits by fused score (ties by chunk id), ranked 1..n, rerank score = fused / best fused."""
    ordered = sorted(hits, key=lambda h: (-(h.scores.fusion or 0.0), h.chunk.chunk_id))
    best = max((h.scores.fusion or 0.0 for h in ordered), default=0.0) or 1.0
    return [
        replace(h, scores=replace(h.scores, rerank=(h.scores.fusion or 0.0) / best, rerank_parts=()), rank=i)
        for i, h in enumerate(ordered, start=1)
    ]


class GuardedReranker:
    """A reranker that falls back to fused order when the inner one raises or is too slow."""

    def __init__(self, inner: Reranker, *, timeout_s: float = RERANK_TIMEOUT_SECONDS) -> None:
        """Guard ``inner``; a call taking longer than ``timeout_s`` is abandoned (its thread runs on)."""
        self.inner = inner
        self.name = inner.name
        self.timeout_s = timeout_s
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="veracity-rerank")

    def close(self) -> None:
        """Let its threads end (a call still running finishes; no new one is taken)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def rerank(
        self,
        query: object,
        hits: Sequence[Hit],
        documents: Mapping[str, Document],
        *,
        question: AnalyzedQuestion,
    ) -> list[Hit]:
        """The inner order, or the fused order (noting ``rerank_unavailable``)."""
        if not hits:
            return []
        context = contextvars.copy_context()  # the request's context (stored verdicts) goes along
        run = partial(self.inner.rerank, query, hits, documents, question=question)  # type: ignore[arg-type]
        future = self._pool.submit(context.run, run)
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            future.cancel()
        except Exception:  # any failure: the fused order is still a sound order
            pass
        note(Degradation.RERANK_UNAVAILABLE)
        return fused_order(hits)


def lexical_engine(engine: Engine) -> Engine:
    """``engine``'s catalog, index and reranker, answering from the BM25 channel alone."""
    settings = engine.settings or RetrievalSettings()
    return Engine(
        engine.catalog,
        LexicalEmbedder(engine.embedder.dim),
        reranker=engine.reranker,
        settings=replace(settings, channels=("bm25",)),
        backend=engine.snapshot,
        composer=engine.composer,
    )


def denied(question: str, principal: Principal, version: str | None, as_of: datetime, reason: str) -> Answer:
    """An abstain that says nothing because the catalog could not check anything (``reason``)."""
    roles = tuple(sorted(principal.roles))
    digest = sha256_hex("\x1f".join((question, principal.tenant, ",".join(roles), version or "")))
    reasons = (reason,)
    trace = Trace(
        query_digest=digest,
        tenant=principal.tenant,
        roles=roles,
        target_version=version,
        as_of=as_of.isoformat(),
        status=AnswerStatus.ABSTAIN.value,
        reasons=reasons,
    )
    return Answer(question, AnswerStatus.ABSTAIN, (), (), (), (), reasons, trace)


def answer_or_degrade(
    kb: LocalKnowledgeBase,
    lexical: LocalKnowledgeBase,
    embedder: GuardedEmbedder,
    principal: Principal,
    question: str,
    version: str | None,
    moment: datetime,
) -> Answer:
    """``kb``'s answer; ``lexical``'s when the embedder is down; :func:`denied` when the catalog is."""
    roles = tuple(sorted(principal.roles))
    try:
        try:
            if not embedder.available:
                raise DenseUnavailableError("the embedder failed recently")
            return kb.ask(question, tenant=principal.tenant, roles=roles, version=version, as_of=moment)
        except DenseUnavailableError:
            note(Degradation.DENSE_UNAVAILABLE)
            return lexical.ask(question, tenant=principal.tenant, roles=roles, version=version, as_of=moment)
    except UNREACHABLE:
        note(Degradation.CATALOG_UNAVAILABLE)
        return denied(question, principal, version, moment, "catalog_unavailable")


def retrieve_or_degrade(
    kb: LocalKnowledgeBase,
    lexical: LocalKnowledgeBase,
    embedder: GuardedEmbedder,
    principal: Principal,
    query: str,
    version: str | None,
    moment: datetime,
    top_k: int,
) -> Retrieval | None:
    """The retrieval up to the evidence packet, degrading as :func:`answer_or_degrade`; ``None``: denied.

    Everything it reads is one read snapshot of the catalog (as an ask): on PostgreSQL one
    transaction, not one per statement the return gate and the index run.
    """
    try:
        with kb.engine.catalog.store.read():
            checked = kb.principal(principal.tenant, sorted(principal.roles))
            target = resolve_version(version, kb.ask_defaults(checked.tenant).version)
            try:
                if not embedder.available:
                    raise DenseUnavailableError("the embedder failed recently")
                engine = kb.engine
                return engine.retrieve(engine.query(query, checked, target, moment, top_k=top_k))
            except DenseUnavailableError:
                note(Degradation.DENSE_UNAVAILABLE)
                engine = lexical.engine
                return engine.retrieve(engine.query(query, checked, target, moment, top_k=top_k))
    except UNREACHABLE:
        note(Degradation.CATALOG_UNAVAILABLE)
        return None
