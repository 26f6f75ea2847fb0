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
- **documents** as the caller may see them (:class:`~veracity.service.core.document_reads.DocumentReads`,
  a part of the gateway; what a caller may see: :mod:`veracity.service.core.visible`);
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
from datetime import datetime
from functools import partial
from typing import Any

from ...catalog.defaults import ask_defaults
from ...catalog.postgres.connection import ENGINE_CONNECTIONS, pool_size, side_connections
from ...catalog.sources import source_path
from ...catalog.store import DatabaseStore
from ...index.embedders import make_embedder
from ...kb.backends import open_store
from ...kb.composing import LLMOptions, make_composer
from ...kb.explain import explain as explain_answer
from ...kb.keys import authenticate
from ...kb.local import LocalKnowledgeBase, Moment, open_local, parse_as_of
from ...kb.reindex import rebuild
from ...kb.search import searchable
from ...model.contracts import Citation, Principal
from ...model.errors import ForbiddenError, ValidationError
from ...pipeline.engine import answer_step
from ...pipeline.outcome import Answer
from ...pipeline.trace import Audience
from ...text.questions import check_question
from .cache import AnswerCache, CacheKey, as_of_bucket, catalog_state
from .degrade import (
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
from .document_reads import Caller, DocumentReads, request_scope
from .flight import SingleFlight
from .health import IndexHealth
from .operate import change_document, tenant_status, upload_files
from .rate_limits import RateLimiter
from .served import CitedSource, ServedAnswer, cited_url, hit_dict
from .sessions import AnswerSession, SessionPool
from .settings import GatewaySettings
from .shared import SharedAnswers, open_shared
from .streaming import answer_events
from .visible import shown_path

__all__ = ["Caller", "Gateway", "GatewaySettings", "check_ask"]


MAX_SEARCH_LIMIT = 100
"""The most hits one search returns (a larger ``limit`` is refused, as over HTTP)."""


def check_ask(question: str, version: str | None, as_of: Moment) -> None:
    """``ValidationError`` for a question, version or moment no ask can take; the catalog is not read."""
    check_question(question)
    if version is not None and not version.strip():
        raise ValidationError("the version is empty; give one such as 3.2, or 'all'", field="version")
    if isinstance(as_of, str) and as_of.strip() and as_of.strip().lower() != "now":
        parse_as_of(as_of)


class Gateway(DocumentReads):
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

    def defaults(self, caller: Caller) -> dict[str, str | None]:
        """The version and moment an ask of ``caller``'s tenant takes when it names none (the
        tenant's recorded defaults; ``None``: every version, now)."""
        with self.side.read():
            recorded = ask_defaults(self.side.connection, caller.principal.tenant)
        moment = recorded.as_of.isoformat().replace("+00:00", "Z") if recorded.as_of is not None else None
        return {"version": recorded.version, "as_of": moment}

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
        check_ask(question, version, as_of)
        principal = caller.principal
        hit = False
        with noting() as notes, request_scope(principal.tenant):
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
        check_ask(question, version, as_of)  # now, before a stream is accepted: bad input is a 4xx
        ask = partial(self.ask, caller, question, version=version, as_of=as_of, explain=explain)
        source = partial(self.cited_source, tenant=caller.principal.tenant)
        return answer_events(ask, question, source, on_answer)

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
        check_question(query, "query")
        if limit is not None and (isinstance(limit, bool) or not 1 <= limit <= MAX_SEARCH_LIMIT):
            raise ValidationError(
                f"the limit is a number of hits from 1 to {MAX_SEARCH_LIMIT}, got {limit!r}", field="limit"
            )
        top_k = min(limit or self.settings.search_limit, MAX_SEARCH_LIMIT)
        if not searchable(query):
            return {"query": query, "hits": [], "degraded": []}
        principal = caller.principal
        with noting() as notes, self.sessions.session() as session, request_scope(principal.tenant):
            moment = self._moment(principal.tenant, as_of)
            retrieval = retrieve_or_degrade(
                session.kb, session.lexical, self.embedder, principal, query, version, moment, top_k
            )
            # the packet keeps top_k per trust tier; the caller asked for top_k in all
            ranked = retrieval.packet.hits[:top_k] if retrieval else ()
            hits = [hit_dict(h, retrieval.documents) for h in ranked] if retrieval else []
        return {"query": query, "hits": hits, "degraded": [d.value for d in notes]}

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
