"""The records that flow through veracity. All are frozen dataclasses.

Stages never mutate a record they were given; they return new ones
(``dataclasses.replace``). Field meanings follow DESIGN.md.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from .errors import ConfigError

E = TypeVar("E", bound=StrEnum)


def parse_enum(enum_type: type[E], value: object, *, what: str | None = None) -> E:
    """Parse ``value`` into ``enum_type`` or raise ``ConfigError`` listing the valid values."""
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(str(value))
    except ValueError:
        valid = ", ".join(member.value for member in enum_type)
        label = what or enum_type.__name__
        raise ConfigError(f"unknown {label} {value!r}; valid values: {valid}") from None


class Status(StrEnum):
    """Lifecycle state of a document in the catalog. Only ``active`` is ever returned."""

    ACTIVE = "active"
    RETIRED = "retired"
    WITHDRAWN = "withdrawn"


class Trust(StrEnum):
    """How far a source is trusted. ``untrusted`` text is quarantined when it gives orders."""

    OFFICIAL = "official"
    COMMUNITY = "community"
    UNTRUSTED = "untrusted"


class Visibility(StrEnum):
    """``public``: every known role may see it; ``internal``: only ``allowed_roles``."""

    PUBLIC = "public"
    INTERNAL = "internal"


class ChunkKind(StrEnum):
    """What kind of block a chunk is."""

    PARAGRAPH = "paragraph"
    TABLE = "table"
    CODE = "code"
    LIST = "list"
    MIXED = "mixed"


class ExclusionReason(StrEnum):
    """Why a document is not eligible, in the order they are checked."""

    TENANT = "tenant"
    ROLE = "role"
    VALIDITY = "validity"
    VERSION = "version"
    STATUS = "status"


class AnswerStatus(StrEnum):
    """What the engine decided to say."""

    ANSWER = "answer"
    PARTIAL = "partial"
    ABSTAIN = "abstain"


def sha256_hex(text: str) -> str:
    """Hex sha256 of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of the bytes of the file at ``path``, read a mebibyte at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def replace_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` as the file at ``path`` whole: staged beside it under this process's name,
    then renamed over it, so a reader (or another process writing the same file) sees the old
    file or the new one, never half of one. The staged file is removed if the write fails."""
    target = Path(path)
    staged = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        staged.write_bytes(data)
        os.replace(staged, target)
    finally:
        try:
            staged.unlink(missing_ok=True)  # renamed into place, or never written: nothing left
        except OSError:
            pass  # a read-only folder: nothing was written there either


@dataclass(frozen=True, slots=True)
class PageBox:
    """A rectangle on one page of a source, where a node, chunk or citation sits.

    ``page`` is 1-based. The corners are fractions of the page's width and
    height (0 to 1, origin at the top left), so one box locates text on the
    PDF page, on the scanned image and on any rendering of either, whatever
    its resolution.
    """

    page: int
    x0: float
    top: float
    x1: float
    bottom: float

    def union(self, other: PageBox) -> PageBox:
        """The smallest box on this page holding both (``other`` must be on the same page)."""
        if other.page != self.page:
            raise ValueError(f"boxes on pages {self.page} and {other.page} have no union")
        return PageBox(
            self.page,
            min(self.x0, other.x0),
            min(self.top, other.top),
            max(self.x1, other.x1),
            max(self.bottom, other.bottom),
        )

    def as_list(self) -> list[float]:
        """``[page, x0, top, x1, bottom]``, as stored and served."""
        return [self.page, self.x0, self.top, self.x1, self.bottom]

    @classmethod
    def from_list(cls, values: list[float] | tuple[float, ...]) -> PageBox:
        """Inverse of :meth:`as_list`."""
        page, x0, top, x1, bottom = values
        return cls(int(page), float(x0), float(top), float(x1), float(bottom))


@dataclass(frozen=True, slots=True)
class OcrNumber:
    """A number, version or amount read by OCR, with the confidence of the text it was read in.

    OCR confuses 0/O and 1/I and loses decimal points and percent signs, so a
    claim resting on such a number with a low ``confidence`` says so.
    """

    text: str
    confidence: float


@dataclass(frozen=True, slots=True)
class FactAnnotation:
    """A named fact and the verbatim quote in the document body that states it.

    ``stance`` is ``supports`` for a quote that states the fact and
    ``contradicts`` for one that asserts the opposite (an old rule, a wrong
    community answer); contradicting quotes are how conflicts are detected.
    """

    fact_id: str
    quote: str
    stance: str = "supports"


@dataclass(frozen=True, slots=True)
class Document:
    """One revision of one source document, with its governance metadata.

    Build through :func:`veracity.parse.documents.make_document`, which validates and
    computes ``document_id`` and ``content_digest``.

    ``extra_metadata`` holds the source's metadata keys that are not governance
    fields (``tags``, ``hide``, …) as ``(key, canonical JSON value)`` pairs
    sorted by key; they govern nothing. ``defaulted_fields`` names the
    governance fields that took a documented default because the source gave
    none (sorted; ``valid_from`` then is the file's modification time).
    """

    document_id: str
    source_id: str
    revision: str
    content_digest: str
    title: str
    source_type: str
    tenant: str
    version_min: str | None
    version_max: str | None
    valid_from: datetime
    valid_until: datetime | None
    status: Status
    visibility: Visibility
    allowed_roles: tuple[str, ...]
    trust: Trust
    facts: tuple[FactAnnotation, ...]
    body: str
    language: str = "zh"
    extra_metadata: tuple[tuple[str, str], ...] = ()
    defaulted_fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of a document body, the unit of retrieval and citation.

    ``body[start:end] == text`` always holds for the document's normalized body.
    ``context_prefix`` is kept apart from ``text`` so digests never change with it.
    ``page_start``/``page_end`` are the 1-based, inclusive pages the span covers
    in a paged source (PDF); ``None`` for formats without pages. Like the
    prefix, they are not part of ``chunk_id``, so ids stay the same whether or
    not a source's pages are known. ``boxes`` locate the span: one box per
    page, the union of the boxes of the parsed nodes it covers. A span read by
    OCR has ``ocr_confidence`` (the mean confidence of its OCR'd text) and
    ``ocr_numbers`` (the numbers, versions and amounts OCR read in it); both
    stay empty for text a file carried. None of these enters ``chunk_id``.
    """

    chunk_id: str
    document_id: str
    document_digest: str
    heading_path: tuple[str, ...]
    ordinal: int
    start: int
    end: int
    kind: ChunkKind
    text: str
    context_prefix: str = ""
    fact_ids: tuple[str, ...] = ()
    page_start: int | None = None
    page_end: int | None = None
    boxes: tuple[PageBox, ...] = ()
    ocr_confidence: float | None = None
    ocr_numbers: tuple[OcrNumber, ...] = ()

    @property
    def content_digest(self) -> str:
        """sha256 of the chunk text."""
        return sha256_hex(self.text)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking. Built by the caller from a trusted identity, never from question text."""

    tenant: str
    roles: frozenset[str]
    user_id: str | None = None

    @classmethod
    def of(cls, tenant: str, *roles: str, user_id: str | None = None) -> Principal:
        """Shorthand: ``Principal.of("starship", "public")``."""
        return cls(tenant=tenant, roles=frozenset(roles), user_id=user_id)


@dataclass(frozen=True, slots=True)
class Eligibility:
    """Whether a document may be used for a principal, version and moment, and why not."""

    eligible: bool
    reasons: tuple[ExclusionReason, ...] = ()

    @property
    def primary_reason(self) -> ExclusionReason | None:
        """The first failed check, in ``ExclusionReason`` order; ``None`` when eligible."""
        return self.reasons[0] if self.reasons else None


@dataclass(frozen=True, slots=True)
class Query:
    """A question with who asks it, for which product version and at which moment.

    ``version=None``: the question is about no particular product version
    (no version filter).
    """

    text: str
    principal: Principal
    version: str | None
    as_of: datetime
    top_k: int = 5
    candidate_k: int = 50
    required_fact_ids: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Scores:
    """Per-stage scores of one hit; a stage that did not score it leaves ``None``."""

    lexical: float | None = None
    semantic: float | None = None
    fusion: float | None = None
    rerank: float | None = None
    rerank_parts: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved chunk with its scores and rank (1-based)."""

    chunk: Chunk
    scores: Scores = field(default_factory=Scores)
    rank: int = 0


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a claim's support lives: exact chunk, revision and digest.

    ``page_start``/``page_end`` are the cited chunk's pages (1-based, inclusive)
    when its source has pages (PDF), else ``None``; ``version_min``/``version_max``
    the product versions the cited document covers (``None``: unbounded);
    ``boxes``, ``ocr_confidence`` and ``ocr_numbers`` are the cited chunk's
    (see :class:`Chunk`).
    """

    citation_id: int
    document_id: str
    source_id: str
    revision: str
    chunk_id: str
    heading_path: tuple[str, ...]
    start: int
    end: int
    chunk_digest: str
    page_start: int | None = None
    page_end: int | None = None
    version_min: str | None = None
    version_max: str | None = None
    boxes: tuple[PageBox, ...] = ()
    ocr_confidence: float | None = None
    ocr_numbers: tuple[OcrNumber, ...] = ()


@dataclass(frozen=True, slots=True)
class Claim:
    """One sentence the engine says, and the citation ids that support it."""

    text: str
    citation_ids: tuple[int, ...]
    fact_ids: tuple[str, ...] = ()
    source_trust: str | None = None
    """``None`` for a claim from an official source; else the trust of its source
    (``community``), which the answer shows with the claim."""
    subquestion: int | None = None
    """The sub-question (0-based, in question order) the claim answers; ``None`` for a claim
    made for a required fact."""
    composer: str = "extractive"
    """What wrote the claim: ``extractive`` (copied from the cited chunk) or ``llm`` (written by
    a language model and verified against the cited text)."""
    ocr_uncertain: tuple[str, ...] = ()
    """Numbers, versions or amounts the claim states that rest on text OCR read with low
    confidence (:mod:`veracity.pipeline.ocr_flags`); the answer says so next to the claim."""
