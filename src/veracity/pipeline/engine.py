"""The knowledge base: live catalog + derived index + the answer pipeline.

``Engine.ask`` runs: eligibility → recall → fusion → rerank → return
gate → evidence packet → policy and extractive claims (one bounded retry) →
composer (extractive by default; see :mod:`veracity.pipeline.composer`) →
claim/citation check.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ..catalog.catalog import Catalog
from ..catalog.demo import demo_catalog, load_catalog
from ..index.dense import Embedder
from ..index.snapshot import IndexSnapshot, SearchBackend
from ..model.contracts import Document, Principal, Query
from ..model.errors import IdentityError
from ..model.governance import NON_OFFICIAL_MARKED
from ..reader.choice import ChoiceModel
from ..reader.model import ReadingModel
from .answer import compose, verify_claims
from .choice import TimedChoice
from .composer import Composer, evidence_of
from .decision import AnswerInputs, AnswerModel, chooser_of, model_for_embedder
from .injection import stored_verdicts
from .ocr_flags import flag_ocr_numbers
from .outcome import Answer
from .rerank import ExplainableReranker, Reranker
from .retrieve import Retrieval, RetrievalSettings, run
from .retry import retry, settled


class Engine:
    """A catalog (the truth) and an index snapshot built from it (derived): what answers. A
    knowledge base on disk (:class:`veracity.kb.local.LocalKnowledgeBase`) wraps one."""

    def __init__(
        self,
        catalog: Catalog,
        embedder: Embedder,
        *,
        reranker: Reranker | None = None,
        settings: RetrievalSettings | None = None,
        backend: SearchBackend | None = None,
        composer: Composer | None = None,
        reader: ReadingModel | None = None,
    ) -> None:
        """Wrap ``catalog``; call :meth:`reindex` before asking.

        ``backend`` is a persistent index to search (e.g. ``SQLiteSearchIndex``);
        without one, :meth:`reindex` builds an in-memory ``IndexSnapshot``.
        ``composer`` writes the claims of each decided answer; ``None``: the
        extractive claims as decided.
        """
        self.catalog = catalog
        self.embedder = embedder
        self.reranker = reranker or ExplainableReranker()
        self.settings = settings or RetrievalSettings()
        self.snapshot: SearchBackend | None = backend
        self.composer = composer
        self.reader = reader
        """The reading model that decides answers (:mod:`veracity.pipeline.reading`); ``None``: the
        logistic answer models."""
        self.non_official_policies: dict[str, str] = {}
        """Per tenant, whether community sources may answer (see ``pipeline.decision``)."""

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[Document],
        embedder: Embedder,
        *,
        roles: dict[str, Sequence[str]],
        store_path: str = ":memory:",
        **options: object,
    ) -> Engine:
        """Load ``documents`` into a new catalog, define ``roles`` per tenant, and index."""
        catalog = load_catalog(documents, roles=roles, store_path=store_path)
        kb = cls(catalog, embedder, **options)  # type: ignore[arg-type]
        kb.reindex()
        return kb

    @classmethod
    def demo(cls, embedder: Embedder | None = None, **options: object) -> Engine:
        """The bundled Starship Workbench knowledge base, indexed."""
        if embedder is None:
            from ..index.embedders import DEFAULT_EMBEDDER, make_embedder

            embedder = make_embedder(DEFAULT_EMBEDDER)
        kb = cls(demo_catalog(), embedder, **options)  # type: ignore[arg-type]
        kb.reindex()
        return kb

    def reindex(self) -> SearchBackend:
        """Rebuild the derived index from every document in the catalog (any status).

        A backend with a ``sync(catalog, embedder)`` method (a persistent index)
        is brought up to date in place instead: only new documents are embedded.
        """
        sync = getattr(self.snapshot, "sync", None)
        if self.snapshot is not None and callable(sync):
            sync(self.catalog, self.embedder)
            return self.snapshot
        items = [(d, tuple(self.catalog.chunks(d.document_id))) for d in self.catalog.documents()]
        snapshot = IndexSnapshot.build(items, self.embedder)
        self.snapshot = snapshot
        return snapshot

    def retrieve(self, query: Query, *, remove_chunk_ids: Collection[str] = ()) -> Retrieval:
        """Run the pipeline up to the evidence packet."""
        if self.snapshot is None:
            self.reindex()
        assert self.snapshot is not None
        if not query.principal.tenant:
            raise IdentityError("the principal has no tenant; veracity never searches without one")
        if not query.principal.roles:
            raise IdentityError("the principal has no role; veracity never searches without one")
        with stored_verdicts(self.catalog.store):  # injection verdicts judged at ingest
            return run(
                query,
                self.snapshot,
                self.catalog,
                self.embedder,
                self.reranker,
                self.settings,
                remove_chunk_ids=remove_chunk_ids,
            )

    def ask(
        self,
        question: str,
        principal: Principal,
        version: str | None,
        as_of: datetime,
        *,
        required_fact_ids: Sequence[str] | None = None,
        top_k: int | None = None,
        remove_chunk_ids: Collection[str] = (),
    ) -> Answer:
        """Answer ``question`` for ``principal``; see the module docstring."""
        query = self.query(
            question, principal, version, as_of, required_fact_ids=required_fact_ids, top_k=top_k
        )
        retrieval = self.retrieve(query, remove_chunk_ids=remove_chunk_ids)
        retrievals = [retrieval]
        answer = self.answer(retrieval)
        if query.required_fact_ids or settled(answer):
            return self.write(answer, retrievals)

        retried: list[Answer] = []

        def ask_again(text: str) -> Answer:
            again = self.retrieve(replace(query, text=text), remove_chunk_ids=remove_chunk_ids)
            retrievals.append(again)
            retried.append(self.answer(again))
            return retried[-1]

        answer = retry(query, retrieval, answer, ask_again, sentence_embedding(self.embedder))
        # the retries' stages count where they ran (a stage's entries are summed, as per trust pool)
        timings = [*answer.trace.timings_ms]
        timings += [timed for again in retried for timed in again.trace.timings_ms]
        return self.write(replace(answer, trace=replace(answer.trace, timings_ms=tuple(timings))), retrievals)

    def write(self, decided: Answer, retrievals: Sequence[Retrieval]) -> Answer:
        """The answer to show for ``decided`` (decided over ``retrievals``): this knowledge base's
        composer's, checked claim by claim for citations; ``decided`` itself without a composer."""
        if self.composer is None:
            return decided
        evidence = evidence_of(retrievals, sentence_embedding(self.embedder))
        written = self.composer.compose(decided, evidence)
        verify_claims(written.claims, written.citations)
        # written claims are new records: they state numbers too, so they carry the OCR flags too
        return replace(written, claims=flag_ocr_numbers(written.claims, written.citations))

    def answer(self, retrieval: Retrieval) -> Answer:
        """Decide and compose the answer of a finished retrieval with this knowledge base's embedder."""
        policy = self.non_official_policies.get(retrieval.query.principal.tenant, NON_OFFICIAL_MARKED)
        return answer_from(retrieval, self.embedder, non_official=policy, reader=self.reader)

    def query(
        self,
        question: str,
        principal: Principal,
        version: str | None,
        as_of: datetime,
        *,
        required_fact_ids: Sequence[str] | None = None,
        top_k: int | None = None,
    ) -> Query:
        """The query record ``ask`` runs, with this knowledge base's settings."""
        return Query(
            text=question,
            principal=principal,
            version=version,
            as_of=as_of,
            top_k=top_k or self.settings.top_k,
            candidate_k=self.settings.candidate_k,
            required_fact_ids=tuple(required_fact_ids) if required_fact_ids else None,
        )


def answer_step(embedder: Embedder | None) -> tuple[AnswerModel, ChoiceModel | None]:
    """The answer model for the embedder that built the index, and the sentence reader of its
    choice stage (``None`` without one); each is loaded once a process."""
    model = model_for_embedder(embedder.model_id if embedder is not None else None)
    return model, (chooser_of(model) if model.choice is not None else None)


def answer_from(
    retrieval: Retrieval,
    embedder: Embedder | None = None,
    *,
    non_official: str = NON_OFFICIAL_MARKED,
    reader: ReadingModel | None = None,
) -> Answer:
    """Compose, verify and package the answer for a finished retrieval.

    ``embedder`` (the index's) lets sentence choice compare each evidence
    sentence with the question; without it that feature is 0.
    """
    query = retrieval.query
    model, chooser = answer_step(embedder)
    timed = TimedChoice(chooser) if chooser is not None else None
    inputs = AnswerInputs(
        weights=retrieval.term_weights,
        question_vector=retrieval.query_vector,
        embed=sentence_embedding(embedder) if embedder is not None else None,
        model=model,
        version=query.version,
        non_official=non_official,
        reader=reader,
        chooser=timed,
    )
    composition = compose(
        retrieval.question, retrieval.packet, retrieval.documents, query.required_fact_ids, inputs=inputs
    )
    verify_claims(composition.claims, composition.citations)
    claims = flag_ocr_numbers(composition.claims, composition.citations)
    read_ms = (("sentence_reader", timed.ms),) if timed is not None and timed.ms else ()
    trace = replace(
        retrieval.trace,
        timings_ms=(*retrieval.trace.timings_ms, *read_ms),
        status=composition.status.value,
        reasons=composition.reasons,
        decisions=tuple(
            (d.index, d.score, d.answered, d.features, d.missing_terms, d.threshold, d.tier)
            for d in composition.decisions
        ),
    )
    return Answer(
        question=query.text,
        status=composition.status,
        claims=claims,
        citations=composition.citations,
        missing_fact_ids=composition.missing_fact_ids,
        uncovered_subquestions=composition.uncovered_subquestions,
        reasons=composition.reasons,
        trace=trace,
    )


SENTENCE_CACHE_SIZE = 50_000
"""Sentence vectors kept per embedder (evidence sentences repeat across questions)."""


def sentence_embedding(embedder: Embedder) -> Callable[[Sequence[str]], npt.NDArray[np.float32]]:
    """``embed(texts)`` through a per-embedder cache of sentence vectors (passage side)."""
    cache = _SENTENCE_CACHES.setdefault(embedder.model_id, {})

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        if missing:
            if len(cache) + len(missing) > SENTENCE_CACHE_SIZE:
                cache.clear()
            for text, vector in zip(missing, embedder.embed_batch(missing, kind="passage"), strict=True):
                cache[text] = vector
        return np.vstack([cache[t] for t in texts]).astype(np.float32)

    return embed


_SENTENCE_CACHES: dict[str, dict[str, npt.NDArray[np.float32]]] = {}


KnowledgeBase = Engine
"""The engine's former name (``veracity.KnowledgeBase``), kept for code written against it."""


@lru_cache(maxsize=1)
def demo_knowledge_base() -> Engine:
    """The demo knowledge base, built once per process."""
    return Engine.demo()
