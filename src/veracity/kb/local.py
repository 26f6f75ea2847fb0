"""A knowledge base as people use it: opened by path, asked with keyword options, fed with folders.

:func:`open_local` (``veracity.open``) opens a knowledge-base directory, or
creates it when it holds none. :class:`LocalKnowledgeBase` wraps the engine
(:class:`~veracity.pipeline.engine.Engine`, whose positional ``ask``
stays as it is) with the knowledge base's own defaults:

- ``tenant=None``: its default tenant (:mod:`veracity.catalog.defaults`);
- ``roles``: ``("public",)`` unless given;
- ``version=None``: no version filter (every product version), unless the
  tenant recorded a default version (the bundled demo does); ``"all"``: no
  version filter in any case;
- ``as_of=None`` or ``"now"``: now; a date (``"2026-08-27"``) means the end of
  that day (UTC), so a document valid from that day counts.

The caller holds the knowledge base file, so it is its operator: a tenant or
role the knowledge base does not define is an ``IdentityError`` that names the
ones it does, and an empty tenant or role is refused. (The engine below still
fails closed without saying anything, for callers who are not operators.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, overload

from ..catalog.defaults import DEFAULT_ROLES, AskDefaults, ask_defaults, default_tenant
from ..catalog.lock import OnWait, Wait
from ..catalog.scope import acting_for
from ..catalog.sources import source_paths
from ..catalog.state import tenants_in_use
from ..catalog.store import DatabaseStore
from ..index.dense import Embedder
from ..ingest.writing import writing
from ..model.contracts import Chunk, Document, Principal
from ..model.errors import IdentityError, ValidationError
from ..parse.limits import DEFAULT_LIMITS, InputLimits
from ..pipeline.engine import Engine
from ..pipeline.outcome import Answer
from ..pipeline.retrieve import RetrievalSettings
from ..text.questions import check_question
from .backends import describe, location_of
from .browse import document_rows, show_document
from .composing import store_llm, stored_llm
from .directory import open_or_create_kb, write_manifest
from .explain import Explanation, explain
from .moments import Moment, parse_as_of
from .overrides import apply_overrides, checked_value, store_override, stored_overrides
from .search import SearchHit, search_hits, searchable

if TYPE_CHECKING:  # the ingest machinery (parsers, markdown, yaml) loads when ingesting, not to ask
    from ..ingest.run import IngestReport, Progress

__all__ = ["LocalKnowledgeBase", "Moment", "open_local", "parse_as_of"]

def _version(given: str | None, recorded: str | None) -> str | None:
    """The target version: ``given``; ``"all"`` for none; ``None`` for the recorded default (else none)."""
    if given is None:
        return recorded
    if not given.strip():
        raise ValidationError("the version is empty; give one such as 3.2, or 'all'", field="version")
    return None if given.strip().lower() == "all" else given.strip()


class LocalKnowledgeBase:
    """A knowledge base with its defaults (see the module docstring); close it, or use ``with``."""

    def __init__(
        self,
        engine: Engine,
        path: str | os.PathLike[str] | None = None,
        *,
        default_tenant: str | None = None,
        defaults: dict[str, AskDefaults] | None = None,
    ) -> None:
        """Wrap ``engine``; ``path`` is its directory (``None`` for an in-memory one such as the demo).

        ``default_tenant`` and ``defaults`` override what the directory records.
        """
        self.engine = engine
        self.path = location_of(path) if path is not None else None
        self._default_tenant = default_tenant
        self._defaults = defaults or {}

    # -- identity ---------------------------------------------------------------

    def _connection(self) -> Any:
        store = self.engine.catalog.store
        return store.connection if isinstance(store, DatabaseStore) and self.path is not None else None

    @property
    def default_tenant(self) -> str:
        """The tenant of questions and documents that name none."""
        if self._default_tenant is not None:
            return self._default_tenant
        connection = self._connection()
        return default_tenant(connection) if connection is not None else "default"

    def llm_setting(self) -> dict[str, Any]:
        """The language model this knowledge base's answers are written with, as stored
        (``veracity composer``); empty when none is (:mod:`veracity.kb.composing`)."""
        return stored_llm(self._connection())

    def set_llm(self, values: dict[str, Any] | None) -> dict[str, Any]:
        """Store (``None``: forget) the language model this knowledge base's answers are written
        with; returns what is stored. Never the key: that stays in the environment."""
        connection = self._connection()
        if connection is None:
            raise ValidationError("only a knowledge base on disk stores an LLM setting", field="llm")
        with writing(self.engine, "composer"), self.engine.catalog.store.transaction():
            return store_llm(connection, values)

    def overrides(self) -> dict[str, int | float]:
        """The settings this knowledge base overrides (:mod:`veracity.kb.overrides`), by name."""
        return stored_overrides(self._connection())

    def set_override(self, name: str, value: object) -> dict[str, int | float]:
        """Store (``None``: forget) this knowledge base's value of the setting ``name`` and apply
        it to this engine; returns every override now stored. Checked first (its range, and
        candidates never fewer than the hits an answer reads)."""
        connection = self._connection()
        if connection is None:
            raise ValidationError("only a knowledge base on disk stores settings", field="settings")
        with writing(self.engine, "settings"), self.engine.catalog.store.transaction():
            wanted = stored_overrides(connection)
            if value is None:
                wanted.pop(name, None)
            else:
                wanted[name] = checked_value(name, value)
            settings = apply_overrides(RetrievalSettings(), wanted)
            store_override(connection, name, None if value is None else wanted[name])
        self.engine.settings = settings
        return wanted

    def ask_defaults(self, tenant: str) -> AskDefaults:
        """What ``ask`` uses for ``tenant`` when the caller gives nothing."""
        if tenant in self._defaults:
            return self._defaults[tenant]
        connection = self._connection()
        return ask_defaults(connection, tenant) if connection is not None else AskDefaults()

    def tenants(self) -> dict[str, tuple[str, ...]]:
        """Every tenant with documents or roles, and the roles it defines."""
        catalog = self.engine.catalog
        connection = self._connection()
        if connection is not None:  # without reading every document
            with_documents, with_roles = tenants_in_use(connection)
        else:
            with_documents = {d.tenant for d in catalog.documents()}
            with_roles = {self.default_tenant} if catalog.roles(self.default_tenant) else set()
        found = {name: tuple(sorted(catalog.roles(name))) for name in sorted(with_documents | with_roles)}
        return {name: roles for name, roles in found.items() if roles or name in with_documents}

    def principal(self, tenant: str | None = None, roles: Iterable[str] | None = None) -> Principal:
        """The asker: checked against the tenants and roles this knowledge base defines."""
        if tenant is not None and not tenant.strip():
            raise IdentityError("the tenant is empty; name one, or leave it out for the default tenant")
        name = tenant if tenant is not None else self.default_tenant
        known = self.tenants()
        if name not in known:
            listed = ", ".join(known) or "none yet (ingest documents first)"
            raise IdentityError(f"unknown tenant {name!r}; this knowledge base has: {listed}")
        if isinstance(roles, str):  # "staff" is one role, not five letters ("a,b" two, as --role reads it)
            roles = [role.strip() for role in roles.split(",")]
        chosen = tuple(roles) if roles is not None else self.ask_defaults(name).roles
        if not chosen or any(not role.strip() for role in chosen):
            listed = ", ".join(known[name])
            raise IdentityError(f"a role is empty; name one of tenant {name!r}'s roles: {listed}")
        unknown = sorted(set(chosen) - set(known[name]))
        if unknown:
            raise IdentityError(
                f"tenant {name!r} defines no role {', '.join(map(repr, unknown))}; "
                f"its roles: {', '.join(known[name]) or 'none'} (define more with 'ingest --roles')"
            )
        return Principal(tenant=name, roles=frozenset(chosen))

    # -- asking -----------------------------------------------------------------

    @overload
    def ask(
        self,
        question: str,
        *,
        tenant: str | None = None,
        roles: Sequence[str] = DEFAULT_ROLES,
        version: str | None = None,
        as_of: Moment = None,
        explain: Literal[False] = False,
        required_fact_ids: Sequence[str] | None = None,
    ) -> Answer: ...

    @overload
    def ask(
        self,
        question: str,
        *,
        tenant: str | None = None,
        roles: Sequence[str] = DEFAULT_ROLES,
        version: str | None = None,
        as_of: Moment = None,
        explain: Literal[True],
        required_fact_ids: Sequence[str] | None = None,
    ) -> Explanation: ...

    def ask(
        self,
        question: str,
        *,
        tenant: str | None = None,
        roles: Sequence[str] = DEFAULT_ROLES,
        version: str | None = None,
        as_of: Moment = None,
        explain: bool = False,
        required_fact_ids: Sequence[str] | None = None,
    ) -> Answer | Explanation:
        """Answer ``question``; with ``explain=True`` return the :class:`Explanation` (it holds the answer).

        See the module docstring for the defaults. The whole ask, the return
        gate and the explanation included, reads one snapshot of the knowledge
        base (a WAL read transaction): it never waits for a writer and never
        mixes the states before and after a write that commits meanwhile.
        """
        with self._scoped_read(tenant):
            principal = self.principal(tenant, roles)
            check_question(question)
            target, moment = self._target(principal.tenant, version, as_of)
            answer = self.engine.ask(question, principal, target, moment, required_fact_ids=required_fact_ids)
            return self.explain(answer) if explain else answer

    def search(
        self,
        query: str,
        *,
        tenant: str | None = None,
        roles: Sequence[str] = DEFAULT_ROLES,
        version: str | None = None,
        as_of: Moment = None,
        limit: int = 10,
    ) -> list[SearchHit]:
        """The ``limit`` best chunks the principal may use for ``query``, after every gate
        (see :mod:`veracity.kb.search`); the same defaults and one read snapshot as :meth:`ask`."""
        check_question(query, "query")
        if limit < 1:
            raise ValidationError(f"limit must be at least 1, got {limit}", field="limit")
        if not searchable(query):
            return []
        with self._scoped_read(tenant):
            principal = self.principal(tenant, roles)
            target, moment = self._target(principal.tenant, version, as_of)
            record = self.engine.query(query, principal, target, moment, top_k=limit)
            retrieval = self.engine.retrieve(record)
            return search_hits(retrieval.packet.hits[:limit], retrieval.documents, self._paths())

    def _target(self, tenant: str, version: str | None, as_of: Moment) -> tuple[str | None, datetime]:
        """The version and moment an ask or a search of ``tenant`` reads: those given, else the
        tenant's recorded defaults (see the module docstring)."""
        recorded = self.ask_defaults(tenant)
        moment = parse_as_of(as_of) if as_of is not None else (recorded.as_of or parse_as_of(None))
        return _version(version, recorded.version), moment

    @contextmanager
    def _scoped_read(self, tenant: str | None) -> Iterator[None]:
        """One read snapshot acting for the asker's tenant: on PostgreSQL with a reader URL
        (``--read-url``) it is read there as that tenant, on a replica once it has caught up."""
        scope = tenant if tenant is not None else self.default_tenant
        with acting_for(scope), self.engine.catalog.store.read():
            yield

    def explain(self, answer: Answer, *, limit: int | None = None) -> Explanation:
        """The candidates of ``answer`` located (path, heading, page) and its decision spelled out."""
        return explain(answer, self.engine.catalog, self._paths(), limit=limit)

    # -- documents --------------------------------------------------------------

    def _paths(self) -> dict[tuple[str, str], str]:
        connection = self._connection()
        return source_paths(connection) if connection is not None else {}

    def documents(self, tenant: str | None = None) -> list[dict[str, Any]]:
        """One row per document (of ``tenant``): id, title, path, status, governance, chunk count."""
        return document_rows(self.engine.catalog, tenant, self._paths())

    def document(self, id_or_source_id: str, tenant: str | None = None) -> tuple[Document, list[Chunk]]:
        """A document (by source id or document id, in ``tenant`` if given) and its chunks."""
        document, chunks, _ = show_document(self.engine.catalog, id_or_source_id, tenant, self._paths())
        return document, chunks

    def ingest(
        self,
        paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
        *,
        tenant: str | None = None,
        roles: Sequence[str] = (),
        strict: bool = False,
        restore: bool = False,
        prune: bool = False,
        delete_pruned: bool = False,
        metadata_file: str | os.PathLike[str] | None = None,
        progress: Progress | None = None,
        limits: InputLimits = DEFAULT_LIMITS,
        follow_symlinks: bool = False,
        jobs: int | None = None,
    ) -> IngestReport:
        """Ingest files and folders (see :func:`veracity.ingest.run.ingest_paths`); rewrites the manifest."""
        if self.path is None:
            raise ValidationError("this knowledge base lives in memory; open a directory to ingest into")
        from ..ingest.run import ingest_paths

        listed = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
        with writing(self.engine, "ingest"):
            report = ingest_paths(
                self.engine, listed, tenant=tenant, roles=roles, strict=strict, restore=restore, prune=prune,
                delete_pruned=delete_pruned, metadata_file=metadata_file, progress=progress, limits=limits,
                follow_symlinks=follow_symlinks, jobs=jobs,
            )  # fmt: skip
            write_manifest(self.path, self.engine)
        return report

    # -- lifetime ---------------------------------------------------------------

    def close(self) -> None:
        """Close the catalog file."""
        store = self.engine.catalog.store
        if isinstance(store, DatabaseStore) and self.path is not None:
            store.close()

    def __enter__(self) -> LocalKnowledgeBase:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        where = describe(self.path) if self.path is not None else "in memory"
        return f"<LocalKnowledgeBase {where}: default tenant {self.default_tenant!r}>"


def open_local(
    path: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    create: bool = True,
    writer_wait: Wait = True,
    on_wait: OnWait | None = None,
) -> LocalKnowledgeBase:
    """Open the knowledge base in ``path`` (created empty when it holds none and ``create``).

    ``writer_wait`` and ``on_wait``: how its writes wait for another writer
    (:mod:`veracity.catalog.lock`); asking never waits.
    """
    from .directory import open_kb

    waiting: dict[str, Any] = {"writer_wait": writer_wait, "on_wait": on_wait}
    engine = open_or_create_kb(path, embedder, **waiting) if create else open_kb(path, embedder, **waiting)
    return LocalKnowledgeBase(engine, path)
