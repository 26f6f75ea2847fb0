"""The catalog store: the source of truth for documents, chunks and tenant roles.

``Store`` is the seam between the governance API (:mod:`veracity.catalog.catalog`) and
storage. Two implementations pass the same contract suite
(``tests/catalog/test_store_contract.py``):

- :class:`veracity.catalog.memory.InMemoryStore`: plain dicts, the test fake;
- :class:`veracity.catalog.sqlite.SQLiteStore`: the embedded default (apsw).

Every document carries a *catalog revision*, an integer that starts at 1 when
the document is stored and grows by one on every status change. Writers name
the catalog revision they read (compare-and-set); a stale one is refused with
:class:`~veracity.model.errors.StaleWriteError` and nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..model.contracts import Chunk, Document, Status
from ..model.errors import CatalogError, ValidationError

__all__ = [
    "DatabaseStore",
    "NewDocument",
    "PutError",
    "Store",
    "check_document",
    "check_new",
    "check_put",
    "check_replacement",
    "check_successor",
    "independent_runs",
    "iter_unique",
    "same_content",
]


@dataclass(frozen=True, slots=True)
class NewDocument:
    """One document for :meth:`Store.put_documents`: its chunks, and the document it replaces.

    ``replaces``: the id of an earlier revision of the same source that this one supersedes
    (``None``: a plain put).
    """

    document: Document
    chunks: Sequence[Chunk]
    replaces: str | None = None


PutError = ValidationError | CatalogError
"""What :meth:`Store.put_documents` reports for a refused put (a ``ValidationError``, or a
``NotFoundError`` for an absent replaced document)."""


@runtime_checkable
class Store(Protocol):
    """Storage of documents, their chunks and the roles each tenant defines.

    General rules, for every method:

    - Records go in and come out as immutable contracts (``Document``, ``Chunk``);
      a stored record reads back equal (``==``) to what was written, except that
      ``Document.status`` always reflects the *stored* status.
    - Unknown ids raise :class:`~veracity.model.errors.NotFoundError`; bad records raise
      :class:`~veracity.model.errors.ValidationError`; stale compare-and-set writes raise
      :class:`~veracity.model.errors.StaleWriteError`. A method that raises changes nothing.
    - Every write is atomic on its own. Inside ``with store.transaction():`` all
      calls join one transaction that commits at the end of the block or rolls
      back entirely if the block raises.
    - Listing order is deterministic: documents by ``source_id``, then by the
      order in which revisions of that source were stored (oldest first);
      chunks by ``ordinal``.
    """

    def put_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Store ``document`` with its facts, allowed roles and ``chunks``, in one transaction.

        The new document gets catalog revision 1 and the status it carries.
        Every chunk must belong to it (``chunk.document_id``/``document_digest``
        match, ``document.body[start:end] == text``), ordinals and chunk ids must
        be unique, and no chunk id may already belong to another document;
        a chunk's pages are both ``None`` or ``1 <= page_start <= page_end``;
        otherwise ``ValidationError``. Datetimes must be timezone-aware. Chunks
        come back equal to those stored, pages included.

        Idempotent: storing a document whose ``document_id`` is already present,
        with equal metadata, facts and chunks (status aside), changes nothing:
        its stored status and catalog revision are kept, so re-ingesting never
        revives a withdrawn document. The same ``document_id`` with different
        metadata or chunks raises ``ValidationError`` naming the first field that
        differs; such a change needs a new revision or a delete first.
        """
        ...

    def put_documents(self, puts: Sequence[NewDocument]) -> list[PutError | None]:
        """Store many documents in ONE transaction, each as if put one after another in order.

        A put without ``replaces`` is :meth:`put_document`; one with ``replaces`` is
        :meth:`supersede` without the compare-and-set (the write transaction holds the
        writer lock, so the replaced document is read and changed by this call alone).
        A put that is refused changes nothing, and its error (``ValidationError``;
        ``NotFoundError`` for an absent replaced document) is returned in its place
        instead of raised; the others are stored. ``None`` for a put stored, or an
        identical re-put. Any other error (the storage's) is raised and nothing is written.
        On a SQL store the puts cost a few statements per table, not per document.
        """
        ...

    def get_document(self, document_id: str) -> Document:
        """The stored document, with its current status; ``NotFoundError`` if absent."""
        ...

    def find_documents(self, tenant: str | None = None, source_id: str | None = None) -> list[Document]:
        """Every stored document matching both filters (``None`` matches all).

        Sorted by ``source_id``, then by the order revisions of that source were
        stored (oldest first). Documents of every status are returned.
        """
        ...

    def get_chunks(self, document_id: str) -> list[Chunk]:
        """The document's chunks by ``ordinal``; ``NotFoundError`` if the document is absent."""
        ...

    def get_chunk(self, chunk_id: str) -> Chunk:
        """One chunk by id; ``NotFoundError`` if absent."""
        ...

    def set_status(self, document_id: str, new_status: Status, expected_catalog_revision: int) -> int:
        """Compare-and-set the status; return the catalog revision after the call.

        If the stored catalog revision differs from ``expected_catalog_revision``,
        raise ``StaleWriteError`` and change nothing. If it matches and the status
        changes, the catalog revision grows by one and the new value is returned.
        Setting the status the document already has changes nothing and returns
        the current catalog revision. ``NotFoundError`` if absent.
        """
        ...

    def catalog_revision(self, document_id: str) -> int:
        """The document's current catalog revision; ``NotFoundError`` if absent."""
        ...

    def put_roles(self, tenant: str, roles: frozenset[str] | set[str] | Sequence[str]) -> None:
        """Replace the set of roles ``tenant`` defines (an empty set removes them all).

        Role names must be non-empty strings; ``ValidationError`` otherwise.
        """
        ...

    def roles(self, tenant: str) -> frozenset[str]:
        """The roles ``tenant`` defines; empty for a tenant that defines none."""
        ...

    def supersede(
        self,
        old_document_id: str,
        new_document: Document,
        new_chunks: Sequence[Chunk],
        expected_catalog_revision: int,
    ) -> int:
        """Replace a document by a new revision of the same source, in ONE transaction.

        Compare-and-set on the old document exactly as :meth:`set_status`; then an
        ``active`` old document becomes ``retired`` (a retired or withdrawn one
        keeps its status) and ``new_document`` is stored as by
        :meth:`put_document`. Returns the old document's catalog revision after
        the call. ``NotFoundError`` if the old document is absent;
        ``ValidationError`` if the new one has another ``source_id`` or the same
        ``document_id``. On any error neither document changes.
        """
        ...

    def delete_document(self, document_id: str) -> None:
        """Remove the document, its facts, roles and chunks; ``NotFoundError`` if absent."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """A block whose store calls commit together or not at all. Blocks nest."""
        ...

    def read(self) -> AbstractContextManager[None]:
        """A block whose reads all see one consistent state, without waiting for writers. Nests.

        Inside a ``transaction`` it reads that transaction's state.
        """
        ...

    # -- many at once (the return gate: a constant number of statements per ask) ------------

    def get_documents(self, document_ids: Sequence[str]) -> dict[str, Document]:
        """:meth:`get_document` of each of ``document_ids`` that is stored, by id; an absent id
        is left out (never an error), a repeated one read once. One read snapshot; on a SQL
        store one statement (roles and facts included), however many ids."""
        ...

    def catalog_revisions(self, document_ids: Sequence[str]) -> dict[str, int]:
        """:meth:`catalog_revision` of each of ``document_ids`` that is stored, by id; absent
        ids left out. On a SQL store one statement."""
        ...

    def get_chunks_by_id(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """:meth:`get_chunk` of each of ``chunk_ids`` that is stored, by id; absent ids left
        out. On a SQL store one statement."""
        ...


@runtime_checkable
class DatabaseStore(Store, Protocol):
    """A ``Store`` in a database that other processes share: a SQLite file or a PostgreSQL database.

    Besides the ``Store`` methods it has an apsw-like ``connection`` (``execute(sql, params)``
    with ``?`` parameters) for the knowledge base's own tables, a ``path`` to name it in
    messages, and a writer lock held across whole operations (``writer``).
    """

    path: str
    read_only: bool

    @property
    def connection(self) -> Any:
        """The connection the knowledge base's SQL runs on (see the class docstring)."""
        ...

    def writer(
        self, command: str = "write", *, wait: bool | float | None = None
    ) -> AbstractContextManager[None]:
        """Hold the writer lock for a whole operation (re-entrant within a thread)."""
        ...

    def close(self) -> None:
        """Release the store's connections."""
        ...

    def current_writer(self) -> Any:
        """Who holds the writer lock now (a ``WriterInfo``), or ``None``."""
        ...

    def check_integrity(self) -> list[str]:
        """Problems the database finds in itself (empty when sound)."""
        ...


def check_document(document: Document) -> None:
    """Refuse a document the store cannot keep faithfully (naive datetimes, no id)."""
    if not document.document_id or not document.source_id:
        raise ValidationError("document_id and source_id are required", document=document.source_id)
    for name in ("valid_from", "valid_until"):
        moment: datetime | None = getattr(document, name)
        if moment is not None and (moment.tzinfo is None or moment.utcoffset() is None):
            raise ValidationError(
                f"{moment.isoformat()} has no time zone; give one, e.g. 'Z'",
                document=document.source_id,
                field=name,
            )


def check_put(document: Document, chunks: Sequence[Chunk]) -> None:
    """Validate a document and its chunks before they are written (see ``put_document``)."""
    check_document(document)
    ordinals: set[int] = set()
    chunk_ids: set[str] = set()
    for chunk in chunks:
        where = f"chunk {chunk.chunk_id!r}"
        if not chunk.chunk_id:
            raise ValidationError("a chunk has an empty chunk_id", document=document.source_id)
        if chunk.document_id != document.document_id:
            raise ValidationError(
                f"{where} belongs to document {chunk.document_id!r}, not {document.document_id!r}",
                document=document.source_id,
                field="document_id",
            )
        if chunk.document_digest != document.content_digest:
            raise ValidationError(
                f"{where} was cut from content {chunk.document_digest!r}, not {document.content_digest!r}",
                document=document.source_id,
                field="document_digest",
            )
        if not 0 <= chunk.start <= chunk.end <= len(document.body) or (
            document.body[chunk.start : chunk.end] != chunk.text
        ):
            raise ValidationError(
                f"{where}: body[{chunk.start}:{chunk.end}] is not the chunk text",
                document=document.source_id,
                field="start",
            )
        if chunk.ordinal in ordinals:
            raise ValidationError(
                f"{where}: ordinal {chunk.ordinal} is used twice",
                document=document.source_id,
                field="ordinal",
            )
        if chunk.chunk_id in chunk_ids:
            raise ValidationError(f"{where} appears twice", document=document.source_id, field="chunk_id")
        if not _valid_pages(chunk.page_start, chunk.page_end):
            raise ValidationError(
                f"{where}: pages {chunk.page_start}..{chunk.page_end} are not a 1-based range "
                "(both None, or 1 <= page_start <= page_end)",
                document=document.source_id,
                field="page_start",
            )
        ordinals.add(chunk.ordinal)
        chunk_ids.add(chunk.chunk_id)


def _valid_pages(first: int | None, last: int | None) -> bool:
    if first is None or last is None:
        return first is None and last is None
    return 1 <= first <= last


_COMPARED = (
    "source_id", "revision", "content_digest", "title", "source_type", "tenant",
    "version_min", "version_max", "valid_from", "valid_until", "visibility",
    "allowed_roles", "trust", "facts", "body", "language", "extra_metadata", "defaulted_fields",
)  # fmt: skip


def same_content(
    stored: Document,
    stored_chunks: Sequence[Chunk],
    document: Document,
    chunks: Sequence[Chunk],
) -> None:
    """Raise ``ValidationError`` naming the first difference between a stored and a new put.

    Status is not compared: the catalog owns it once a document is stored.
    """
    for name in _COMPARED:
        if getattr(stored, name) != getattr(document, name):
            raise ValidationError(
                f"document {document.document_id} is already stored with another {name}; "
                "store a new revision, or delete the old one first",
                document=document.source_id,
                field=name,
            )
    if sorted(stored_chunks, key=_ordinal) != sorted(chunks, key=_ordinal):
        raise ValidationError(
            f"document {document.document_id} is already stored with other chunks; "
            "delete it first to re-chunk",
            document=document.source_id,
            field="chunks",
        )


def check_new(
    document: Document,
    chunks: Sequence[Chunk],
    stored: Callable[[], tuple[Document, Sequence[Chunk]] | None],
    owner: Callable[[Sequence[str]], tuple[str, str] | None],
) -> bool:
    """Validate a put; ``False`` when it is an identical re-put (nothing to do), as every store decides.

    ``stored()``: the stored document of the same id with its chunks, or ``None``;
    ``owner(chunk_ids)``: a ``(chunk_id, document_id)`` already stored among ``chunk_ids``, or
    ``None``. Both are called only when needed, so a store reads only what the decision needs.
    """
    check_put(document, chunks)
    found = stored()
    if found is not None:
        same_content(found[0], found[1], document, chunks)
        return False
    taken = owner([chunk.chunk_id for chunk in chunks]) if chunks else None
    if taken is not None:
        raise ValidationError(
            f"chunk {taken[0]!r} already belongs to document {taken[1]!r}",
            document=document.source_id,
            field="chunk_id",
        )
    return True


def _ordinal(chunk: Chunk) -> int:
    return chunk.ordinal


def iter_unique(roles: frozenset[str] | set[str] | Sequence[str], *, tenant: str) -> Iterator[str]:
    """Yield each role name once, sorted; refuse empty names or a non-string collection."""
    if not isinstance(tenant, str) or not tenant.strip():
        raise ValidationError(f"roles need a tenant, got {tenant!r}", field="tenant")
    if isinstance(roles, str):
        raise ValidationError(f"roles must be a collection of names, got the string {roles!r}", field="roles")
    names = set()
    for role in roles:
        if not isinstance(role, str) or not role.strip():
            raise ValidationError(f"tenant {tenant!r}: bad role name {role!r}", field="roles")
        names.add(role)
    yield from sorted(names)


def check_successor(old: Document, new: Document) -> None:
    """A superseding document must be another revision of the same source."""
    check_replacement(old.document_id, old.source_id, new)


def check_replacement(old_document_id: str, old_source_id: str, new: Document) -> None:
    """:func:`check_successor` given the old document's id and source id."""
    if new.source_id != old_source_id:
        raise ValidationError(
            f"a new revision must keep source_id {old_source_id!r}, got {new.source_id!r}",
            document=new.source_id,
            field="source_id",
        )
    if new.document_id == old_document_id:
        raise ValidationError(
            f"document {old_document_id!r} cannot supersede itself; change the revision or content",
            document=new.source_id,
            field="document_id",
        )


def independent_runs(puts: Sequence[NewDocument]) -> Iterator[list[tuple[int, NewDocument]]]:
    """``puts`` (with their places) in consecutive runs in which no document id is named twice,
    as a new document or as a replaced one: within a run every put can be checked against what
    was stored before the run (and the run's earlier chunks), so a run is read and written in
    one statement per table, and the runs one after another keep the order's meaning."""
    run: list[tuple[int, NewDocument]] = []
    named: set[str] = set()
    for place, put in enumerate(puts):
        ids = {put.document.document_id, *((put.replaces,) if put.replaces is not None else ())}
        if named & ids:
            yield run
            run, named = [], set()
        run.append((place, put))
        named |= ids
    if run:
        yield run
