"""The catalog: governance operations over a :class:`~veracity.catalog.store.Store`.

Adding a document, a new revision of a source, withdrawing and retiring go
through here; so does every eligibility decision. ``eligible_documents`` runs
the pure :func:`veracity.model.governance.eligibility` predicate over the catalog
*before* any index or scorer sees a document, and ``resolve`` re-checks one
document against the live catalog (the return gate). Both fail closed: a
principal without a tenant, without roles, or with a role its tenant does not
define gets nothing; a document that no longer exists is never eligible.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model.contracts import Chunk, Document, ExclusionReason, Principal, Status
from ..model.errors import NotFoundError, ValidationError
from ..model.governance import EligibilityScope, eligibility, require_aware
from ..model.versions import parse_version
from .store import Store

__all__ = ["Catalog", "Resolution"]

_DOCUMENT_ID = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Resolution:
    """One document checked against the live catalog for a principal, version and moment.

    For a document that no longer exists, ``eligible`` is ``False``, ``reasons``
    is ``(STATUS,)`` and ``content_digest``, ``catalog_revision`` and ``status``
    are ``None``.
    """

    document_id: str
    eligible: bool
    reasons: tuple[ExclusionReason, ...]
    content_digest: str | None
    catalog_revision: int | None
    status: Status | None

    @property
    def primary_reason(self) -> ExclusionReason | None:
        """The first failed check; ``None`` when eligible."""
        return self.reasons[0] if self.reasons else None

    @property
    def exists(self) -> bool:
        """Whether the document is still in the catalog."""
        return self.status is not None


class Catalog:
    """The governance API: lifecycle changes and eligibility over one ``Store``."""

    def __init__(self, store: Store) -> None:
        """Govern the documents held by ``store``."""
        self._store = store

    @property
    def store(self) -> Store:
        """The underlying store."""
        return self._store

    # -- lifecycle -----------------------------------------------------------

    def add(self, document: Document, chunks: Sequence[Chunk]) -> Document:
        """Store a document with its chunks; return it as stored (idempotent, see ``put_document``).

        Re-adding an identical document keeps its stored status, so a withdrawn
        document stays withdrawn when its source is ingested again.
        """
        self._store.put_document(document, chunks)
        return self._store.get_document(document.document_id)

    def withdraw(self, document_id: str, expected_revision: int | None = None) -> int:
        """Withdraw a document (pulled: wrong or unsafe); return its new catalog revision.

        With ``expected_revision=None`` the current catalog revision is read first;
        either way the write is a compare-and-set (``StaleWriteError`` if stale).
        """
        return self._set_status(document_id, Status.WITHDRAWN, expected_revision)

    def retire(self, document_id: str, expected_revision: int | None = None) -> int:
        """Retire a document (replaced or obsolete); return its new catalog revision.

        Compare-and-set exactly as :meth:`withdraw`.
        """
        return self._set_status(document_id, Status.RETIRED, expected_revision)

    def new_revision(
        self,
        old_document_id: str,
        document: Document,
        chunks: Sequence[Chunk],
        expected_revision: int | None = None,
    ) -> Document:
        """Store ``document`` as the next revision of the old one's source and retire the old one.

        One transaction; compare-and-set on the old document (its current catalog
        revision is read first when ``expected_revision`` is ``None``). Returns the
        new document as stored.
        """
        if expected_revision is None:
            expected_revision = self._store.catalog_revision(old_document_id)
        self._store.supersede(old_document_id, document, chunks, expected_revision)
        return self._store.get_document(document.document_id)

    def define_roles(self, tenant: str, roles: Collection[str]) -> None:
        """Replace the roles ``tenant`` defines. A principal's unknown role denies everything."""
        self._store.put_roles(tenant, frozenset(roles))

    def roles(self, tenant: str) -> frozenset[str]:
        """The roles ``tenant`` defines."""
        return self._store.roles(tenant)

    # -- reading -------------------------------------------------------------

    def documents(self, tenant: str | None = None) -> list[Document]:
        """Every document (of ``tenant`` if given), any status, by source id then revision order."""
        return self._store.find_documents(tenant=tenant)

    def document(self, id_or_source_id: str, tenant: str | None = None) -> Document:
        """A document by its 64-hex ``document_id``, or by ``source_id`` (within ``tenant``).

        For a source id: its latest active revision, else its latest revision
        (latest = most recently stored). ``NotFoundError`` if neither matches (or the
        document is another tenant's); source ids are per tenant, so one that several tenants
        hold is refused without ``tenant`` (``ValidationError`` naming them) rather than one
        tenant's document being taken for another's.
        """
        key = id_or_source_id.strip()
        where = f" in tenant {tenant!r}" if tenant is not None else " in the catalog"
        if _DOCUMENT_ID.fullmatch(key):
            try:
                found = self._store.get_document(key)
            except NotFoundError:
                pass  # a source id may look like a hash too
            else:
                if tenant is None or found.tenant == tenant:
                    return found
        revisions = self._store.find_documents(tenant=tenant, source_id=key)
        if not revisions:
            raise NotFoundError(f"no document or source {id_or_source_id!r}{where}")
        tenants = sorted({doc.tenant for doc in revisions})
        if len(tenants) > 1:
            raise ValidationError(
                f"source {key!r} is in {len(tenants)} tenants ({', '.join(tenants)}); name one "
                "(--tenant) or give the 64-hex document id",
                field="tenant",
            )
        active = [doc for doc in revisions if doc.status is Status.ACTIVE]
        return (active or revisions)[-1]

    def chunks(self, document_id: str) -> list[Chunk]:
        """The document's chunks in order; ``NotFoundError`` if the document is absent."""
        return self._store.get_chunks(document_id)

    # -- eligibility ---------------------------------------------------------

    def resolve(
        self, document_id: str, principal: Principal, version: str | None, as_of: datetime
    ) -> Resolution:
        """Check one document against the live catalog (status, validity, version, tenant, role).

        Reads the document and its catalog revision in one read snapshot (never
        the write lock, so a writer never makes it wait). A document that no
        longer exists resolves as not eligible with reason ``STATUS``.
        """
        return self.resolve_many([document_id], principal, version, as_of)[document_id]

    def resolve_many(
        self,
        document_ids: Sequence[str],
        principal: Principal,
        version: str | None,
        as_of: datetime,
    ) -> dict[str, Resolution]:
        """:meth:`resolve` of each of ``document_ids`` (by id, each once), all in one read snapshot.

        The documents, their catalog revisions and the tenant's roles are read once for them all
        (:meth:`~veracity.catalog.store.Store.get_documents`, ``catalog_revisions``, ``roles``):
        on a SQL store three statements, however many documents. Nothing is read for no ids.
        """
        _check_query(version, as_of)
        ids = list(dict.fromkeys(document_ids))
        if not ids:
            return {}
        with self._store.read():
            documents = self._store.get_documents(ids)
            revisions = self._store.catalog_revisions(list(documents))
            scope = self._scope(principal, version, as_of)
        resolved: dict[str, Resolution] = {}
        for document_id in ids:
            document = documents.get(document_id)
            revision = revisions.get(document_id)
            if document is None or revision is None:
                resolved[document_id] = Resolution(
                    document_id, False, (ExclusionReason.STATUS,), None, None, None
                )
                continue
            verdict = eligibility(document, scope)
            resolved[document_id] = Resolution(
                document_id=document_id,
                eligible=verdict.eligible,
                reasons=verdict.reasons,
                content_digest=document.content_digest,
                catalog_revision=revision,
                status=document.status,
            )
        return resolved

    def eligible_documents(
        self, principal: Principal, version: str | None, as_of: datetime
    ) -> tuple[list[Document], list[tuple[str, ExclusionReason]]]:
        """Split the whole catalog into eligible documents and ``(document_id, primary reason)``.

        Fail closed: a principal without a tenant gets every document excluded
        with ``TENANT``; one without roles, or with a role its tenant does not
        define, gets every document of its tenant excluded with ``ROLE``. Both
        lists follow ``documents()`` order. A naive ``as_of`` or malformed
        ``version`` raises before anything is read; ``None`` applies no
        version filter.
        """
        _check_query(version, as_of)
        with self._store.read():
            documents = self._store.find_documents()
            scope = self._scope(principal, version, as_of)
        eligible: list[Document] = []
        excluded: list[tuple[str, ExclusionReason]] = []
        for document in documents:
            verdict = eligibility(document, scope)
            if verdict.eligible:
                eligible.append(document)
            else:
                excluded.append((document.document_id, verdict.reasons[0]))
        return eligible, excluded

    # -- internals -----------------------------------------------------------

    def _scope(self, principal: Principal, version: str | None, as_of: datetime) -> EligibilityScope:
        known = self._store.roles(principal.tenant) if principal.tenant else frozenset()
        return EligibilityScope(principal, version, as_of, known)

    def _set_status(self, document_id: str, status: Status, expected: int | None) -> int:
        if expected is None:
            expected = self._store.catalog_revision(document_id)
        return self._store.set_status(document_id, status, expected)


def _check_query(version: str | None, as_of: datetime) -> None:
    """Refuse a naive moment or malformed version up front, even over an empty catalog."""
    require_aware(as_of)
    if version is not None:
        parse_version(version, field="target_version")
