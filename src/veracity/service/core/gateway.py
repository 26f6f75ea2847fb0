"""A knowledge base serving many users: the one object a service's routes call.

:class:`Gateway` wraps a :class:`~veracity.kb.local.LocalKnowledgeBase` with
what serving needs, and every HTTP route is one call to it:

- **identity**: :meth:`Gateway.admit` turns a presented API key into a
  :class:`Caller` (tenant, roles and operator flag from the stored key only;
  :mod:`veracity.kb.keys`) and spends one request of the key's rate limit;
  operator-only methods raise ``ForbiddenError`` for other keys;
- **answers**: :meth:`Gateway.ask` looks the question up in the scoped answer
  cache (:mod:`veracity.service.core.cache`) and otherwise asks, degrading as
  :mod:`veracity.service.core.degrade` says (dense down → lexical, reranker down →
  fused order, catalog down → deny); :meth:`Gateway.search` returns the
  ranked permitted chunks;
- **documents** as the caller may see them (:mod:`veracity.service.core.visible`);
  operator actions on the caller's tenant (:mod:`veracity.service.core.operate`);
- **health**: :meth:`Gateway.readiness` (:mod:`veracity.service.core.health`).

Every read for a caller runs inside :func:`~veracity.catalog.scope.acting_for`
the key's tenant: on PostgreSQL with a reader role (``VERACITY_READER_URL``)
the database itself then returns that tenant's rows only (row-level security).
Each request is one :func:`~veracity.catalog.postgres.replay.replay_fence`: on a
read replica its reads wait once for the primary's position, not once each; a
replica that cannot be reached denies the request
(:class:`~veracity.model.errors.ReplicaUnavailableError`, a catalog that is
unavailable: an ask abstains, any other route answers 503).

Answers and searches run on a pool of engines (:mod:`veracity.service.core.sessions`,
``answer_sessions`` of them, each its own connection), so different
questions are answered at the same time; concurrent misses for one cache key
compute once (:mod:`veracity.service.core.flight`). Reading documents and every write
go through the gateway's own engine under one lock. The light reads of every
request (the key, the catalog state for the cache key, the tenant's ask
defaults, citation titles, readiness) go through another connection
(``side``, WAL: readers never wait for the writer), so a cache hit never waits
for an answer being computed. Workers (processes) each open their own gateway
on the same knowledge base and share the answer cache and the rate-limit
buckets (:mod:`veracity.service.core.shared`: a directory's side file, or a database's
own tables, on any number of machines); the catalog revision in the cache key
keeps every worker's answers honest. On PostgreSQL every store's pools are
sized by ``answer_sessions`` (:func:`~veracity.catalog.postgres.connection.worker_connections`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from ...catalog.catalog import Resolution
from ...catalog.defaults import ask_defaults
from ...catalog.postgres.connection import ENGINE_CONNECTIONS, pool_size, side_connections
from ...catalog.postgres.replay import replay_fence
from ...catalog.scope import acting_for
from ...catalog.sources import source_file, source_path
from ...catalog.store import DatabaseStore
from ...index.embedders import make_embedder
from ...kb.backends import open_store, uploads_folder
from ...kb.composing import LLMOptions, make_composer
from ...kb.explain import explain as explain_answer
from ...kb.keys import ApiKey, authenticate
from ...kb.local import LocalKnowledgeBase, Moment, open_local, parse_as_of
from ...kb.reindex import rebuild
from ...model.contracts import Citation, Principal
from ...model.errors import ForbiddenError, NotFoundError, ValidationError
from ...pipeline.engine import answer_step
from ...pipeline.outcome import Answer
from ...pipeline.trace import Audience
from .cache import DEFAULT_ENTRIES, AnswerCache, CacheKey, as_of_bucket, catalog_state
from .degrade import (
    DENSE_RETRY_SECONDS,
    RERANK_TIMEOUT_SECONDS,
    UNREACHABLE,
    Degradation,
    GuardedEmbedder,
    GuardedReranker,
    answer_or_degrade,
    denied,
    lexical_engine,
    note,
    noting,
    retrieve_or_degrade,
)
from .flight import SingleFlight
from .health import IndexHealth
from .operate import change_document, tenant_status, upload_files
from .page_images import page_png
from .rate_limits import RateLimit, RateLimiter
from .served import CitedSource, ServedAnswer, cited_url, hit_dict
from .sessions import AnswerSession, SessionPool
from .shared import SharedAnswers, open_shared
from .streaming import answer_events
from .visible import chunk_context, document_view, served_paths, shown_path, visible_documents

__all__ = ["Caller", "Gateway", "GatewaySettings"]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request comes from: a stored API key (never anything the request says)."""

    key: ApiKey

    @property
    def principal(self) -> Principal:
        """The tenant and roles of the key."""
        return self.key.principal

    @property
    def operator(self) -> bool:
        """Whether the key may use operator actions."""
        return self.key.operator


@contextmanager
def _request(tenant: str) -> Iterator[None]:
    """One request's reads: acting for ``tenant``, and on a read replica waiting for the primary's
    position once for them all (:func:`~veracity.catalog.postgres.replay.replay_fence`)."""
    with acting_for(tenant), replay_fence():
        yield


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    """Limits and fallbacks of a gateway."""

    cache_entries: int = DEFAULT_ENTRIES
    rate_limit: RateLimit = field(default_factory=RateLimit)
    rerank_timeout_s: float = RERANK_TIMEOUT_SECONDS
    dense_retry_s: float = DENSE_RETRY_SECONDS
    search_limit: int = 20
    page_images: bool = True
    """Serve cited PDF pages and images as pictures (``serve --no-page-images`` turns it off)."""
    answer_sessions: int = 2
    """Engines answering at the same time in one process (each holds its own index state)."""
    shared: bool = True
    """Share the answer cache and rate limits with the other workers of the knowledge base."""


class Gateway:
    """See the module docstring."""

    def __init__(self, kb: LocalKnowledgeBase, settings: GatewaySettings | None = None) -> None:
        """Serve ``kb`` (on disk); the answering engines' embedder and reranker are wrapped in guards."""
        if kb.path is None or not isinstance(kb.engine.catalog.store, DatabaseStore):
            raise ValidationError("a service needs an on-disk knowledge base (veracity.open(DIR))")
        self.kb = kb
        self.settings = settings or GatewaySettings()
        engine = kb.engine
        self.embedder = GuardedEmbedder(engine.embedder, retry_after_s=self.settings.dense_retry_s)
        engine.embedder = self.embedder
        if engine.composer is None:  # the knowledge base's stored LLM setting (veracity composer)
            engine.composer = make_composer(LLMOptions(), kb.llm_setting())
        with pool_size(side_connections(self.settings.answer_sessions)):
            self.side = open_store(kb.path)
        serving = open_shared(kb.path, self.side) if self.settings.shared else None
        self._serving = serving
        self.cache = AnswerCache(
            self.settings.cache_entries,
            second=SharedAnswers(serving, self.settings.cache_entries) if serving else None,
        )
        self.limiter = RateLimiter(self.settings.rate_limit, buckets=serving)
        self._lock = threading.RLock()
        self._flight: SingleFlight[tuple[Answer, tuple[Degradation, ...]]] = SingleFlight()
        self.sessions = SessionPool(self._open_session, max(1, self.settings.answer_sessions))
        self.health = IndexHealth(kb, self.side, self.embedder, self._lock)

    def _open_session(self) -> AnswerSession:
        """Another engine on the same knowledge base, with this gateway's embedder and composer."""
        assert self.kb.path is not None
        with pool_size(ENGINE_CONNECTIONS):  # one thread at a time reads an engine
            kb = open_local(self.kb.path, embedder=self.embedder, create=False)
        engine = kb.engine
        engine.reranker = GuardedReranker(engine.reranker, timeout_s=self.settings.rerank_timeout_s)
        engine.composer = self.kb.engine.composer
        return AnswerSession(kb, LocalKnowledgeBase(lexical_engine(engine), kb.path))

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        embedder: str | None = None,
        settings: GatewaySettings | None = None,
    ) -> Gateway:
        """Open the knowledge base in ``path`` (it must exist) and check its published index."""
        with pool_size(ENGINE_CONNECTIONS):  # the gateway's own engine: one thread at a time, under its lock
            kb = open_local(path, embedder=make_embedder(embedder) if embedder else None, create=False)
        gateway = cls(kb, settings)
        gateway.check_index()
        # the answer model and its sentence reader now (about 0.6 s, once a process), so that the
        # first question a server answers does not wait for them
        answer_step(kb.engine.embedder)
        return gateway

    def close(self) -> None:
        """Close the knowledge base, its answering sessions and the shared tables."""
        with self._lock:
            self.sessions.close()
            self.kb.close()
            if self._serving is not None:
                self._serving.close()
            self.side.close()

    @property
    def store(self) -> DatabaseStore:
        """The catalog store (checked at construction)."""
        store = self.kb.engine.catalog.store
        assert isinstance(store, DatabaseStore)
        return store

    # -- identity -----------------------------------------------------------------

    def admit(self, presented: str | None) -> Caller:
        """The caller a key stands for, after spending one request of its rate limit."""
        key = authenticate(self.side, presented)
        self.limiter.take(key.key_id)
        return Caller(key)

    @property
    def lock(self) -> threading.RLock:
        """Held by every use of the gateway's own knowledge base (operator actions, views)."""
        return self._lock

    @staticmethod
    def require_operator(caller: Caller) -> None:
        """``ForbiddenError`` unless ``caller`` holds an operator key."""
        if not caller.operator:
            raise ForbiddenError("this needs an operator key ('veracity keys create --operator')")

    def _moment(self, tenant: str, as_of: Moment) -> datetime:
        """``as_of`` resolved: the tenant's recorded moment or now (to the minute) when not given."""
        if isinstance(as_of, str) and not as_of.strip():
            as_of = None
        if as_of is None:
            with self.side.read():
                recorded = ask_defaults(self.side.connection, tenant).as_of
            return recorded or as_of_bucket()
        if isinstance(as_of, str) and as_of.strip().lower() == "now":
            return as_of_bucket()
        return parse_as_of(as_of)

    # -- answers ------------------------------------------------------------------

    def ask(
        self,
        caller: Caller,
        question: str,
        *,
        version: str | None = None,
        as_of: Moment = None,
        explain: bool = False,
    ) -> ServedAnswer:
        """Answer for ``caller``: from the cache when the same scope asked it in the same state."""
        start = time.perf_counter()
        if not question or not question.strip():
            raise ValidationError("the question is empty; ask something", field="question")
        if version is not None and not version.strip():
            raise ValidationError("the version is empty; give one such as 3.2, or 'all'", field="version")
        principal = caller.principal
        hit = False
        with noting() as notes, _request(principal.tenant):
            try:
                moment = self._moment(principal.tenant, as_of)
                key = CacheKey.of(
                    tenant=principal.tenant, roles=sorted(principal.roles), version=version,
                    as_of=moment, question=question, state=catalog_state(self.side),
                )  # fmt: skip
            except UNREACHABLE:
                note(Degradation.CATALOG_UNAVAILABLE)
                answer = denied(question, principal, version, as_of_bucket(), "catalog_unavailable")
            else:
                found = self.cache.get(key)
                if found is None:  # requests for the same key wait for the first one's answer
                    (found, degraded), hit = self._flight.run(
                        key, lambda: self._answer(key, principal, question, version, moment)
                    )
                    for kind in degraded:
                        note(kind)
                else:
                    hit = True
                answer = found
            explanation = None
            if explain and caller.operator and Degradation.CATALOG_UNAVAILABLE not in notes:
                with self._lock:  # the tenant's paths, uploads by name (never the server's folder)
                    paths = self._paths(principal.tenant)
                    explanation = explain_answer(answer, self.kb.engine.catalog, paths)
            sources = self._sources(answer, principal.tenant) if answer.citations else ()
        seconds = time.perf_counter() - start
        self.cache.record(hit=hit, seconds=seconds)
        return ServedAnswer(
            answer=answer,
            cache="hit" if hit else "miss",
            degraded=tuple(notes),
            sources=sources,
            audience=Audience.OPERATOR if caller.operator else Audience.ASKER,
            explain=explain,
            explanation=explanation,
            seconds=seconds,
        )

    def ask_events(
        self, caller: Caller, question: str, *, version: str | None = None, as_of: Moment = None,
        explain: bool = False, on_answer: Callable[[ServedAnswer], None] | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:  # fmt: skip
        """The answer as server-sent events, each written claim as soon as it is verified
        (:func:`veracity.service.core.streaming.answer_events`); ``on_answer`` gets the finished answer."""
        ask = partial(self.ask, caller, question, version=version, as_of=as_of, explain=explain)
        source = partial(self.cited_source, tenant=caller.principal.tenant)
        yield from answer_events(ask, question, source, on_answer)

    def _answer(
        self, key: CacheKey, principal: Principal, question: str, version: str | None, moment: datetime
    ) -> tuple[Answer, tuple[Degradation, ...]]:
        """Compute an answer on a free session, degrading instead of failing (see
        :mod:`veracity.service.core.degrade`); cache it when nothing degraded. With the degradations."""
        with noting() as notes, self.sessions.session() as session:
            answer = answer_or_degrade(
                session.kb, session.lexical, self.embedder, principal, question, version, moment
            )
        if not notes:
            self.cache.put(key, answer)
        return answer, tuple(notes)

    def _sources(self, answer: Answer, tenant: str) -> tuple[CitedSource, ...]:
        return tuple(self.cited_source(citation, tenant) for citation in answer.citations)

    def cited_source(self, citation: Citation, tenant: str) -> CitedSource:
        """What a reader needs beside ``citation``: its document's title, shown path and web address."""
        with self.side.read():
            document = self.side.get_document(citation.document_id)
            path = source_path(self.side.connection, tenant, citation.source_id)
        url = cited_url(document, citation.heading_path)
        return CitedSource(citation.citation_id, document.title, shown_path(path or ""), url)

    def search(
        self, caller: Caller, query: str, *, version: str | None = None, as_of: Moment = None,
        limit: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The ranked chunks ``caller`` may use for ``query``, after every gate, with text and scores."""
        if not query or not query.strip():
            raise ValidationError("the query is empty", field="query")
        top_k = max(1, min(int(limit or self.settings.search_limit), 100))
        principal = caller.principal
        with noting() as notes, self.sessions.session() as session, _request(principal.tenant):
            moment = self._moment(principal.tenant, as_of)
            retrieval = retrieve_or_degrade(
                session.kb, session.lexical, self.embedder, principal, query, version, moment, top_k
            )
            # the packet keeps top_k per trust tier; the caller asked for top_k in all
            ranked = retrieval.packet.hits[:top_k] if retrieval else ()
            hits = [hit_dict(h, retrieval.documents) for h in ranked] if retrieval else []
        return {"query": query, "hits": hits, "degraded": [d.value for d in notes]}

    # -- documents ----------------------------------------------------------------

    def _paths(self, tenant: str) -> dict[tuple[str, str], str]:
        """The tenant's source paths, uploads by the name they were uploaded under."""
        from ...catalog.sources import source_paths

        assert self.kb.path is not None
        uploads = uploads_folder(self.kb.path).resolve()
        return served_paths(source_paths(self.store.connection, tenant), uploads)

    def documents(self, caller: Caller, *, as_of: Moment = None) -> list[dict[str, Any]]:
        """The documents ``caller`` may see (an operator: every one of its tenant)."""
        principal = caller.principal
        with self._lock, _request(principal.tenant):
            moment = self._moment(principal.tenant, as_of)
            return visible_documents(
                self.kb.engine.catalog,
                principal,
                moment,
                self._paths(principal.tenant),
                operator=caller.operator,
            )

    def document(self, caller: Caller, id_or_source_id: str, *, as_of: Moment = None) -> dict[str, Any]:
        """One visible document with its chunks; ``NotFoundError`` for any other."""
        principal = caller.principal
        with self._lock, _request(principal.tenant):
            moment = self._moment(principal.tenant, as_of)
            return document_view(
                self.kb.engine.catalog, id_or_source_id, principal, moment, self._paths(principal.tenant),
                operator=caller.operator,
            )  # fmt: skip

    def uncitable(self, caller: Caller, document_ids: Sequence[str], version: str | None) -> list[Resolution]:
        """Of ``document_ids`` cited earlier, those an answer for ``caller`` could not cite now
        (withdrawn, retired, deleted, no longer permitted), as the live catalog resolves them."""
        principal = caller.principal
        with self._lock, _request(principal.tenant):
            moment = self._moment(principal.tenant, None)
            found = self.kb.engine.catalog.resolve_many(list(document_ids), principal, version, moment)
        return [resolution for resolution in found.values() if not resolution.eligible]

    def page_image(
        self, caller: Caller, id_or_source_id: str, page: int, *, width: int = 1000, as_of: Moment = None
    ) -> bytes:
        """A page of a visible document's original file as PNG (see :mod:`.page_images`)."""
        if not self.settings.page_images:
            raise NotFoundError("page images are turned off on this server")
        principal = caller.principal

        def original(tenant: str, source_id: str) -> Path | None:
            with self.side.read():
                found = source_file(self.side.connection, tenant, source_id)
            return Path(found) if found else None

        with self._lock, _request(principal.tenant):
            moment = self._moment(principal.tenant, as_of)
            return page_png(self.kb.engine.catalog, id_or_source_id, page, principal, moment, original,
                            operator=caller.operator, width_px=width)  # fmt: skip

    def chunk_context(
        self, caller: Caller, id_or_source_id: str, chunk_id: str, *, quote: str | None = None,
        around: int = 1, as_of: Moment = None,
    ) -> dict[str, Any]:  # fmt: skip
        """A cited chunk in its visible document, the quote highlighted; ``NotFoundError`` otherwise."""
        principal = caller.principal
        with self._lock, _request(principal.tenant):
            moment = self._moment(principal.tenant, as_of)
            return chunk_context(
                self.kb.engine.catalog, id_or_source_id, chunk_id, principal, moment,
                self._paths(principal.tenant), operator=caller.operator, quote=quote, around=around,
            )  # fmt: skip

    # -- operator actions ---------------------------------------------------------

    def upload(
        self, caller: Caller, files: Sequence[tuple[str, bytes]], metadata: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Ingest uploaded files for the operator's tenant (the CLI's ingest path and rejections)."""
        self.require_operator(caller)
        with self._lock:
            return upload_files(self.kb, caller.principal.tenant, files, metadata)

    def change(self, caller: Caller, id_or_source_id: str, action: str) -> dict[str, Any]:
        """Withdraw, retire or delete a document of the operator's tenant."""
        self.require_operator(caller)
        with self._lock:
            return change_document(self.kb, caller.principal.tenant, id_or_source_id, action)

    def status(self, caller: Caller) -> dict[str, Any]:
        """The operator's tenant, the index, the answer cache and the components' state."""
        self.require_operator(caller)
        with self._lock:
            report = tenant_status(self.kb, caller.principal.tenant)
            report["catalog_revision"] = catalog_state(self.store).catalog_revision
        report["cache"] = self.cache.stats().as_dict()  # this process's: each worker keeps its own
        report["process"] = os.getpid()
        report["components"] = {
            "dense": "available" if self.embedder.available else f"unavailable ({self.embedder.last_error})",
        }
        report["readiness"] = self.readiness()
        return report

    def reindex(self, caller: Caller) -> dict[str, Any]:
        """Build, verify and publish a new index version (any operator: it changes no content)."""
        self.require_operator(caller)
        assert self.kb.path is not None
        with self._lock:
            report = rebuild(self.kb.engine, self.kb.path, embedder=self.embedder.inner)
            self.health.record(report.version, report.verification.passed, "verified by reindex")
        return {
            "version": report.version,
            "published": report.published,
            "replaced": report.replaced,
            "verification_passed": report.verification.passed,
            "seconds": round(report.seconds, 3),
        }

    # -- health -------------------------------------------------------------------

    def check_index(self, *, verify: bool = True) -> tuple[bool, str]:
        """Whether the published index version passed verification (:meth:`IndexHealth.check_index`)."""
        return self.health.check_index(verify=verify)

    def readiness(self, *, detail: bool = True) -> dict[str, Any]:
        """Whether this service is ready to answer (:meth:`IndexHealth.readiness`)."""
        return self.health.readiness(detail=detail)
