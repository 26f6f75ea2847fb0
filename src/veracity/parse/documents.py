"""Build validated documents: identity, governance metadata, fact annotations.

``document_id`` = sha256 over tenant, source id, revision and the
whitespace-collapsed content, so whitespace-only edits keep the id, a new
revision with the same text gets a new one, and the same file stored for two
tenants is two documents (an id shared across tenants would let one tenant's
ingest collide with, and so learn of, another's document). Every rule
violation raises a ``ValidationError`` naming the document and the field.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

from ..model.contracts import Document, FactAnnotation, Status, Trust, Visibility, parse_enum, sha256_hex
from ..model.errors import ConfigError, EmptyContentError, ValidationError
from ..model.versions import check_range
from ..text.language import detect_language
from ..text.normalize import identity_text, normalize_body
from .yaml_text import written_text

STANCES = ("supports", "contradicts")
REQUIRED_FIELDS = (
    "id",
    "revision",
    "title",
    "tenant",
    "valid_from",
    "status",
    "visibility",
    "trust",
)
OPTIONAL_FIELDS = (
    "source_type",
    "version_min",
    "version_max",
    "valid_until",
    "allowed_roles",
    "facts",
    "language",
)
DERIVED_FIELDS = ("document_id", "content_digest", "defaulted_fields", "metadata")
"""Keys :func:`metadata_of` adds; as input they are recomputed (``metadata`` is unpacked)."""
KNOWN_FIELDS = frozenset(REQUIRED_FIELDS + OPTIONAL_FIELDS + DERIVED_FIELDS)
"""Metadata keys that mean something to veracity; any other key is kept as extra metadata."""


def document_identity(tenant: str, source_id: str, revision: str, body: str) -> tuple[str, str]:
    """Return ``(document_id, content_digest)`` for a body (any whitespace form) of ``tenant``."""
    collapsed = identity_text(body)
    if not collapsed:
        raise EmptyContentError(
            "content is empty or whitespace only", document=source_id, field="body"
        )
    content_digest = sha256_hex(collapsed)
    document_id = sha256_hex("\x1f".join((tenant, source_id, revision, content_digest)))
    return document_id, content_digest


def parse_moment(value: object, *, document: str, field: str) -> datetime:
    """A timezone-aware datetime from YAML (date, datetime or ISO string); dates mean 00:00 UTC."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC)
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValidationError(
                f"cannot parse {value!r} as a date or ISO datetime", document=document, field=field
            ) from None
    else:
        raise ValidationError(f"expected a date, got {value!r}", document=document, field=field)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    _check_in_utc_range(moment, document=document, field=field)
    return moment


def _check_in_utc_range(moment: datetime, *, document: str, field: str) -> None:
    # moments are stored and compared in UTC; one whose offset carries it past year 1 or 9999
    # (9999-12-31T23:00-05:00) cannot be, and must reject its own file rather than abort the batch
    try:
        moment.astimezone(UTC)
    except OverflowError:
        bound, fix = ("after 9999-12-31", "earlier") if moment.year > 1 else ("before 0001-01-01", "later")
        raise ValidationError(
            f"{moment.isoformat()} is out of the supported range: in UTC it falls {bound}; "
            f"give a {fix} moment",
            document=document,
            field=field,
        ) from None


def _enum_field(enum_type: Any, value: object, *, document: str, field: str) -> Any:
    try:
        return parse_enum(enum_type, value, what=field)
    except ConfigError as exc:
        raise ValidationError(str(exc), document=document, field=field) from None


def _facts(raw: object, body: str, *, document: str) -> tuple[FactAnnotation, ...]:
    if raw in (None, []):
        return ()
    if not isinstance(raw, list):
        raise ValidationError(
            "facts must be a list of {id, quote}", document=document, field="facts"
        )
    facts: list[FactAnnotation] = []
    seen: set[tuple[str, str]] = set()
    for item in raw:
        if not isinstance(item, Mapping) or "id" not in item or "quote" not in item:
            raise ValidationError(
                f"fact {item!r} needs 'id' and 'quote'", document=document, field="facts"
            )
        fact_id, quote = str(item["id"]), normalize_body(str(item["quote"]))
        if not quote:
            raise ValidationError(
                f"fact {fact_id!r} has an empty quote", document=document, field="facts"
            )
        if quote not in body:
            raise ValidationError(
                f"quote of fact {fact_id!r} does not occur in the content: {quote[:40]!r}",
                document=document,
                field="facts",
            )
        stance = str(item.get("stance") or "supports")
        if stance not in STANCES:
            raise ValidationError(
                f"fact {fact_id!r} has unknown stance {stance!r}; valid values: {', '.join(STANCES)}",
                document=document,
                field="facts",
            )
        if (fact_id, stance) in seen:
            raise ValidationError(
                f"fact {fact_id!r} is annotated twice", document=document, field="facts"
            )
        seen.add((fact_id, stance))
        facts.append(FactAnnotation(fact_id=fact_id, quote=quote, stance=stance))
    return tuple(facts)


def canonical_value(value: object) -> str:
    """A metadata value as canonical JSON text (dates and other scalars YAML makes become strings)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=_plain)


def _plain(value: object) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value)


def extra_metadata_of(metadata: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The keys of ``metadata`` that are not :data:`KNOWN_FIELDS`, as sorted ``(key, JSON)`` pairs.

    A ``metadata`` mapping (as :func:`metadata_of` writes it) contributes its items too.
    """
    extra = {str(key): value for key, value in metadata.items() if str(key) not in KNOWN_FIELDS}
    nested = metadata.get("metadata")
    if isinstance(nested, Mapping):
        extra = {**{str(key): value for key, value in nested.items()}, **extra}
    return tuple(sorted((key, canonical_value(value)) for key, value in extra.items()))


def make_document(
    metadata: Mapping[str, Any], body: str, *, defaulted: Collection[str] = ()
) -> Document:
    """Validate governance metadata and content; return the immutable ``Document``.

    ``metadata`` keys: id, revision, title, tenant, valid_from, status,
    visibility, trust (required); source_type, version_min, version_max,
    valid_until, allowed_roles, facts, language (optional). Any other key is
    kept as ``extra_metadata``. ``defaulted`` names the fields whose values
    are documented defaults rather than the source's own (recorded as
    ``defaulted_fields``).
    """
    raw_id = metadata.get("id")
    source_id = (str(raw_id or "").strip() if _is_scalar(raw_id) else "") or "<no id>"
    check_field_types(metadata, document=source_id)
    for name in REQUIRED_FIELDS:
        if metadata.get(name) in (None, ""):
            raise ValidationError("required field is missing", document=source_id, field=name)
    revision = written_text(metadata["revision"])  # "1.10" as written, not the float 1.1
    tenant = str(metadata["tenant"]).strip()
    normalized = normalize_body(body)
    document_id, content_digest = document_identity(tenant, source_id, revision, normalized)

    valid_from = parse_moment(metadata["valid_from"], document=source_id, field="valid_from")
    valid_until = (
        parse_moment(metadata["valid_until"], document=source_id, field="valid_until")
        if metadata.get("valid_until") not in (None, "")
        else None
    )
    if valid_until is not None and valid_until <= valid_from:
        raise ValidationError(
            f"validity window is reversed: valid_until {valid_until.isoformat()} "
            f"is not after valid_from {valid_from.isoformat()}",
            document=source_id,
            field="valid_until",
        )
    version_min = _version_text(metadata.get("version_min"))
    version_max = _version_text(metadata.get("version_max"))
    check_range(version_min, version_max, document=source_id)

    status = _enum_field(Status, metadata["status"], document=source_id, field="status")
    visibility = _enum_field(
        Visibility, metadata["visibility"], document=source_id, field="visibility"
    )
    trust = _enum_field(Trust, metadata["trust"], document=source_id, field="trust")
    roles = _roles(metadata.get("allowed_roles"), document=source_id)
    if visibility is Visibility.INTERNAL and not roles:
        raise ValidationError(
            "internal visibility needs at least one allowed role",
            document=source_id,
            field="allowed_roles",
        )
    return Document(
        document_id=document_id,
        source_id=source_id,
        revision=revision,
        content_digest=content_digest,
        title=str(metadata["title"]).strip(),
        source_type=str(metadata.get("source_type") or "document"),
        tenant=tenant,
        version_min=version_min,
        version_max=version_max,
        valid_from=valid_from,
        valid_until=valid_until,
        status=status,
        visibility=visibility,
        allowed_roles=roles,
        trust=trust,
        facts=_facts(metadata.get("facts"), normalized, document=source_id),
        body=normalized,
        language=str(metadata.get("language") or detect_language(normalized)),
        extra_metadata=extra_metadata_of(metadata),
        defaulted_fields=tuple(sorted(set(defaulted))),
    )


_SCALARS = (str, int, float, bool, date, datetime)
_SINGLE_VALUED = tuple(
    name for name in (*REQUIRED_FIELDS, *OPTIONAL_FIELDS) if name not in ("allowed_roles", "facts")
)


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, _SCALARS)


def _kind(value: object) -> str:
    return "mapping" if isinstance(value, Mapping) else type(value).__name__


def check_field_types(metadata: Mapping[str, Any], *, document: str) -> None:
    """``ValidationError`` naming the field unless every governance field has its shape.

    Single-valued fields hold one text, number or date; ``allowed_roles`` a
    list of names or one text of comma-separated names; ``facts`` a list of mappings of single values.
    Checked before any value is converted, so a nested structure is refused
    by name instead of being turned into text.
    """
    for name in _SINGLE_VALUED:
        if not _is_scalar(metadata.get(name)):
            raise ValidationError(
                f"must be a single value (text, number or date), not a {_kind(metadata[name])}",
                document=document,
                field=name,
            )
    roles = metadata.get("allowed_roles")
    if not _is_scalar(roles) and not (isinstance(roles, list | tuple) and all(map(_is_scalar, roles))):
        raise ValidationError(
            "must be a role name or a list of role names", document=document, field="allowed_roles"
        )
    facts = metadata.get("facts")
    if facts is None:
        return
    if not isinstance(facts, list) or not all(
        isinstance(fact, Mapping) and all(map(_is_scalar, fact.values())) for fact in facts
    ):
        raise ValidationError(
            "must be a list of {id, quote, stance} mappings with one value each",
            document=document,
            field="facts",
        )


def _version_text(value: object) -> str | None:
    if value in (None, ""):
        return None
    return written_text(value).strip()  # an unquoted 3.10 is version 3.10, not the float 3.1


def _roles(raw: object, *, document: str) -> tuple[str, ...]:
    if raw in (None, ""):
        return ()
    # one text is split at commas, as the HTML meta tag and --roles are: "support, public" is two roles
    items: Iterable[object] = raw.split(",") if isinstance(raw, str) else raw  # type: ignore[assignment]
    if not isinstance(items, list | tuple | set | frozenset | str) and not isinstance(raw, str):
        raise ValidationError(
            "allowed_roles must be a list of role names", document=document, field="allowed_roles"
        )
    return tuple(sorted({str(role).strip() for role in items if str(role).strip()}))


def metadata_of(document: Document) -> dict[str, Any]:
    """The governance metadata of ``document`` as plain JSON-able values (no body)."""
    return {
        "id": document.source_id,
        "document_id": document.document_id,
        "revision": document.revision,
        "title": document.title,
        "source_type": document.source_type,
        "tenant": document.tenant,
        "version_min": document.version_min,
        "version_max": document.version_max,
        "valid_from": document.valid_from.isoformat(),
        "valid_until": document.valid_until.isoformat() if document.valid_until else None,
        "status": document.status.value,
        "visibility": document.visibility.value,
        "allowed_roles": list(document.allowed_roles),
        "trust": document.trust.value,
        "facts": [{"id": f.fact_id, "quote": f.quote, "stance": f.stance} for f in document.facts],
        "content_digest": document.content_digest,
        "language": document.language,
        "metadata": {key: json.loads(value) for key, value in document.extra_metadata},
        "defaulted_fields": list(document.defaulted_fields),
    }


def with_revision(document: Document, revision: str) -> Document:
    """``document`` as revision ``revision`` of its source (the document id follows the revision)."""
    document_id, _ = document_identity(document.tenant, document.source_id, revision, document.body)
    return replace(document, revision=revision, document_id=document_id)


_REVISION_BLIND = ("document_id", "revision")


def same_but_revision(stored: Document, document: Document) -> bool:
    """Whether ``document`` says what ``stored`` says: content and metadata, revision aside.

    Status is the catalog's and is not compared. A ``valid_from`` that both took
    from the file's modification time is not compared either: touching a file
    does not make a new revision. Nor are ``defaulted_fields``: where a value
    came from (the default tenant, or the same tenant given with ``--tenant``)
    is not what the document says, so only a changed value makes a revision.
    """
    ignored = set(_REVISION_BLIND) | {"status", "defaulted_fields"}
    if "valid_from" in stored.defaulted_fields and "valid_from" in document.defaulted_fields:
        ignored.add("valid_from")
    return all(
        getattr(stored, name) == getattr(document, name)
        for name in Document.__dataclass_fields__
        if name not in ignored
    )


def next_revision(revisions: Iterable[Document]) -> str:
    """The number after the highest numeric revision among ``revisions`` (``"1"`` for none)."""
    numbers = [int(d.revision) for d in revisions if d.revision.isdigit()]
    return str(max(numbers, default=0) + 1)
