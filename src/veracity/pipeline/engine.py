"""The knowledge base: live catalog + derived index + the answer pipeline.

``KnowledgeBase.ask`` runs: eligibility → recall → fusion → rerank → return
gate → evidence packet → policy and extractive composer → claim/citation check.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from ..catalog.catalog import Catalog
from ..catalog.sqlite import SQLiteStore
from ..fixtures import STARSHIP, fixture_documents, tenant_config
from ..index.dense import Embedder
from ..index.snapshot import IndexSnapshot, SearchBackend
from ..ingest.chunking import chunk_for_index
from ..model.contracts import AnswerStatus, Citation, Claim, Document, Principal, Query
from ..model.errors import IdentityError
from .answer import compose, verify_claims
from .rerank import ExplainableReranker, Reranker
from .retrieve import Retrieval, RetrievalSettings, run
from .trace import Trace


@dataclass(frozen=True, slots=True)
class Answer:
    """What veracity says: status, claims with citation ids, what is missing, and the trace."""

    question: str
    status: AnswerStatus
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    missing_fact_ids: tuple[str, ...]
    uncovered_subquestions: tuple[str, ...]
    reasons: tuple[str, ...]
    trace: Trace


def load_catalog(
    documents: Iterable[Document], *, roles: dict[str, Sequence[str]], store_path: str = ":memory:"
) -> Catalog:
    """A catalog holding ``documents`` (chunked for the index) and the tenants' roles."""
    catalog = Catalog(SQLiteStore(store_path))
    for tenant, tenant_roles in roles.items():
        catalog.define_roles(tenant, tenant_roles)
    for document in documents:
        catalog.add(document, chunk_for_index(document))
    return catalog


def demo_catalog() -> Catalog:
    """A fresh in-memory catalog of the bundled Starship Workbench fixture."""
    config = tenant_config(STARSHIP)
    return load_catalog(fixture_documents(STARSHIP), roles={config.tenant: config.roles})


class KnowledgeBase:
    """A catalog (the truth) and an index snapshot built from it (derived)."""

    def __init__(
        self,
        catalog: Catalog,
        embedder: Embedder,
        *,
        reranker: Reranker | None = None,
        settings: RetrievalSettings | None = None,
        backend: SearchBackend | None = None,
    ) -> None:
        """Wrap ``catalog``; call :meth:`reindex` before asking.

        ``backend`` is a persistent index to search (e.g. ``SQLiteSearchIndex``);
        without one, :meth:`reindex` builds an in-memory ``IndexSnapshot``.
        """
        self.catalog = catalog
        self.embedder = embedder
        self.reranker = reranker or ExplainableReranker()
        self.settings = settings or RetrievalSettings()
        self.snapshot: SearchBackend | None = backend

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[Document],
        embedder: Embedder,
        *,
        roles: dict[str, Sequence[str]],
        store_path: str = ":memory:",
        **options: object,
    ) -> KnowledgeBase:
        """Load ``documents`` into a new catalog, define ``roles`` per tenant, and index."""
        catalog = load_catalog(documents, roles=roles, store_path=store_path)
        kb = cls(catalog, embedder, **options)  # type: ignore[arg-type]
        kb.reindex()
        return kb

    @classmethod
    def demo(cls, embedder: Embedder | None = None, **options: object) -> KnowledgeBase:
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
        target_version: str | None,
        as_of: datetime,
        *,
        required_fact_ids: Sequence[str] | None = None,
        top_k: int | None = None,
        remove_chunk_ids: Collection[str] = (),
    ) -> Answer:
        """Answer ``question`` for ``principal``; see the module docstring."""
        query = Query(
            text=question,
            principal=principal,
            target_version=target_version,
            as_of=as_of,
            top_k=top_k or self.settings.top_k,
            candidate_k=self.settings.candidate_k,
            required_fact_ids=tuple(required_fact_ids) if required_fact_ids else None,
        )
        retrieval = self.retrieve(query, remove_chunk_ids=remove_chunk_ids)
        return answer_from(retrieval)


def answer_from(retrieval: Retrieval) -> Answer:
    """Compose, verify and package the answer for a finished retrieval."""
    query = retrieval.query
    composition = compose(query.text, retrieval.packet, retrieval.documents, query.required_fact_ids)
    verify_claims(composition.claims, composition.citations)
    trace = _with_decision(retrieval.trace, composition.status, composition.reasons)
    return Answer(
        question=query.text,
        status=composition.status,
        claims=composition.claims,
        citations=composition.citations,
        missing_fact_ids=composition.missing_fact_ids,
        uncovered_subquestions=composition.uncovered_subquestions,
        reasons=composition.reasons,
        trace=trace,
    )


def _with_decision(trace: Trace, status: AnswerStatus, reasons: tuple[str, ...]) -> Trace:
    from dataclasses import replace

    return replace(trace, status=status.value, reasons=reasons)


@lru_cache(maxsize=1)
def demo_knowledge_base() -> KnowledgeBase:
    """The demo knowledge base, built once per process."""
    return KnowledgeBase.demo()
