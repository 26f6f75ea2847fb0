"""The catalog: lifecycle changes and fail-closed eligibility over a store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from veracity.catalog.catalog import Catalog, Resolution
from veracity.catalog.memory import InMemoryStore
from veracity.catalog.sqlite import SQLiteStore
from veracity.model.contracts import Chunk, ChunkKind, Document, ExclusionReason, Principal, Status
from veracity.model.errors import NotFoundError, StaleWriteError, ValidationError, VersionRangeError
from veracity.parse.documents import make_document

R = ExclusionReason
NOW = datetime(2025, 3, 1, tzinfo=UTC)
BODY = "# 超时\n\n星舰 3.2 的默认超时为 30 秒。"


def doc(source_id: str, revision: str = "1", body: str = BODY, **metadata: Any) -> Document:
    """A valid public, active, official document of tenant ``starship``."""
    fields: dict[str, Any] = {
        "id": source_id,
        "revision": revision,
        "title": source_id,
        "tenant": "starship",
        "valid_from": "2024-01-01",
        "status": "active",
        "visibility": "public",
        "trust": "official",
        "version_min": "3.0",
    }
    fields.update(metadata)
    return make_document(fields, body)


def chunks(document: Document) -> list[Chunk]:
    """The whole body as one chunk."""
    return [
        Chunk(
            chunk_id=f"{document.document_id[:16]}0",
            document_id=document.document_id,
            document_digest=document.content_digest,
            heading_path=(),
            ordinal=0,
            start=0,
            end=len(document.body),
            kind=ChunkKind.PARAGRAPH,
            text=document.body,
        )
    ]


@pytest.fixture(params=["memory", "sqlite"])
def catalog(request: pytest.FixtureRequest) -> Iterator[Catalog]:
    store = InMemoryStore() if request.param == "memory" else SQLiteStore(":memory:")
    catalog = Catalog(store)
    catalog.define_roles("starship", {"public", "support"})
    catalog.define_roles("acme", {"public"})
    yield catalog
    if isinstance(store, SQLiteStore):
        store.close()


def add(catalog: Catalog, document: Document) -> Document:
    return catalog.add(document, chunks(document))


PUBLIC = Principal.of("starship", "public")
SUPPORT = Principal.of("starship", "support")


# -- resolve -------------------------------------------------------------------


def test_resolve_eligible(catalog: Catalog) -> None:
    document = add(catalog, doc("timeout"))
    resolution = catalog.resolve(document.document_id, PUBLIC, "3.2", NOW)
    assert resolution == Resolution(
        document_id=document.document_id,
        eligible=True,
        reasons=(),
        content_digest=document.content_digest,
        catalog_revision=1,
        status=Status.ACTIVE,
    )
    assert resolution.primary_reason is None and resolution.exists


@pytest.mark.parametrize(
    ("metadata", "principal", "version", "reasons"),
    [
        ({"status": "retired"}, PUBLIC, "3.2", (R.STATUS,)),
        ({"status": "withdrawn"}, PUBLIC, "3.2", (R.STATUS,)),
        ({"valid_from": "2025-06-01"}, PUBLIC, "3.2", (R.VALIDITY,)),
        ({"valid_until": "2025-03-01"}, PUBLIC, "3.2", (R.VALIDITY,)),
        ({"version_max": "3.1"}, PUBLIC, "3.2", (R.VERSION,)),
        ({}, PUBLIC, "2.9", (R.VERSION,)),
        ({"tenant": "acme"}, PUBLIC, "3.2", (R.TENANT,)),
        ({"visibility": "internal", "allowed_roles": ["support"]}, PUBLIC, "3.2", (R.ROLE,)),
        ({"visibility": "internal", "allowed_roles": ["support"]}, SUPPORT, "3.2", ()),
        ({}, Principal.of("starship", "intruder"), "3.2", (R.ROLE,)),
        ({}, Principal.of("starship"), "3.2", (R.ROLE,)),
        ({}, Principal.of("", "public"), "3.2", (R.TENANT, R.ROLE)),
        (
            {"status": "retired", "version_max": "3.1", "visibility": "internal",
             "allowed_roles": ["support"]},
            PUBLIC, "3.2", (R.ROLE, R.VERSION, R.STATUS),
        ),
    ],
)  # fmt: skip
def test_resolve_reasons(
    catalog: Catalog,
    metadata: dict[str, Any],
    principal: Principal,
    version: str,
    reasons: tuple[ExclusionReason, ...],
) -> None:
    document = add(catalog, doc("timeout", **metadata))
    resolution = catalog.resolve(document.document_id, principal, version, NOW)
    assert resolution.reasons == reasons
    assert resolution.eligible is (not reasons)


def test_withdraw_then_resolve_says_status(catalog: Catalog) -> None:
    document = add(catalog, doc("timeout"))
    assert catalog.withdraw(document.document_id) == 2
    resolution = catalog.resolve(document.document_id, PUBLIC, "3.2", NOW)
    assert not resolution.eligible
    assert resolution.reasons == (R.STATUS,)
    assert resolution.status is Status.WITHDRAWN
    assert resolution.catalog_revision == 2
    assert resolution.content_digest == document.content_digest


def test_missing_document_resolves_as_status(catalog: Catalog) -> None:
    document = add(catalog, doc("timeout"))
    catalog.store.delete_document(document.document_id)
    resolution = catalog.resolve(document.document_id, PUBLIC, "3.2", NOW)
    assert resolution == Resolution(document.document_id, False, (R.STATUS,), None, None, None)
    assert not resolution.exists


def test_resolve_refuses_a_naive_moment(catalog: Catalog) -> None:
    document = add(catalog, doc("timeout"))
    with pytest.raises(ValidationError, match="time zone"):
        catalog.resolve(document.document_id, PUBLIC, "3.2", datetime(2025, 3, 1))


# -- lifecycle -------------------------------------------------------------------


def test_withdraw_and_retire_compare_and_set(catalog: Catalog) -> None:
    document = add(catalog, doc("timeout"))
    assert catalog.retire(document.document_id, expected_revision=1) == 2
    with pytest.raises(StaleWriteError):
        catalog.withdraw(document.document_id, expected_revision=1)
    assert catalog.document(document.document_id).status is Status.RETIRED
    assert catalog.withdraw(document.document_id) == 3
    assert catalog.document(document.document_id).status is Status.WITHDRAWN


def test_readding_a_withdrawn_document_keeps_it_withdrawn(catalog: Catalog) -> None:
    document = add(catalog, doc("timeout"))
    catalog.withdraw(document.document_id)
    assert add(catalog, document).status is Status.WITHDRAWN


def test_new_revision(catalog: Catalog) -> None:
    old = add(catalog, doc("timeout", "1"))
    new = catalog.new_revision(
        old.document_id, doc("timeout", "2", "# 超时\n\n默认超时为 60 秒。"), []
    )
    assert new.revision == "2" and new.status is Status.ACTIVE
    assert catalog.document(old.document_id).status is Status.RETIRED
    assert catalog.document("timeout") == new
    assert catalog.resolve(old.document_id, PUBLIC, "3.2", NOW).reasons == (R.STATUS,)
    third = doc("timeout", "3", "# 超时\n\n默认超时为 90 秒。")
    with pytest.raises(StaleWriteError):
        catalog.new_revision(old.document_id, third, chunks(third), expected_revision=1)
    with pytest.raises(NotFoundError):
        catalog.document(third.document_id)


# -- reading ---------------------------------------------------------------------


def test_document_by_id_or_source(catalog: Catalog) -> None:
    first = add(catalog, doc("timeout", "1"))
    second = add(catalog, doc("timeout", "2", "# 超时\n\n默认超时为 60 秒。"))
    assert catalog.document(first.document_id) == first
    assert catalog.document("timeout") == second  # latest active
    catalog.withdraw(second.document_id)
    assert catalog.document("timeout") == first  # latest active
    catalog.retire(first.document_id)
    assert catalog.document("timeout").document_id == second.document_id  # latest of all
    with pytest.raises(NotFoundError, match="nothing"):
        catalog.document("nothing")
    with pytest.raises(NotFoundError):
        catalog.document("0" * 64)


def test_documents_and_chunks(catalog: Catalog) -> None:
    a = add(catalog, doc("a"))
    b = add(catalog, doc("b", tenant="acme"))
    assert catalog.documents() == [a, b]
    assert catalog.documents("acme") == [b]
    assert catalog.chunks(a.document_id) == chunks(a)
    assert catalog.roles("starship") == frozenset({"public", "support"})


# -- eligible_documents ------------------------------------------------------------


@pytest.fixture
def corpus(catalog: Catalog) -> dict[str, Document]:
    documents = {
        "public": doc("public"),
        "internal": doc("internal", visibility="internal", allowed_roles=["support"]),
        "old": doc("old", valid_until="2024-06-01"),
        "v2": doc("v2", version_min="2.0", version_max="2.9"),
        "retired": doc("retired", status="retired"),
        "acme": doc("acme", tenant="acme"),
    }
    for document in documents.values():
        add(catalog, document)
    return documents


def test_eligible_documents_split(catalog: Catalog, corpus: dict[str, Document]) -> None:
    eligible, excluded = catalog.eligible_documents(PUBLIC, "3.2", NOW)
    assert [d.source_id for d in eligible] == ["public"]
    assert dict(excluded) == {
        corpus["acme"].document_id: R.TENANT,
        corpus["internal"].document_id: R.ROLE,
        corpus["old"].document_id: R.VALIDITY,
        corpus["retired"].document_id: R.STATUS,
        corpus["v2"].document_id: R.VERSION,
    }
    assert [doc_id for doc_id, _ in excluded] == [
        d.document_id for d in catalog.documents() if d.source_id != "public"
    ]
    eligible, _ = catalog.eligible_documents(SUPPORT, "3.2", NOW)
    assert [d.source_id for d in eligible] == ["internal", "public"]


def test_no_target_version_applies_no_version_filter(
    catalog: Catalog, corpus: dict[str, Document]
) -> None:
    eligible, excluded = catalog.eligible_documents(PUBLIC, None, NOW)
    assert [d.source_id for d in eligible] == ["public", "v2"]
    assert R.VERSION not in {reason for _, reason in excluded}
    assert catalog.resolve(corpus["v2"].document_id, PUBLIC, None, NOW).eligible
    assert not catalog.resolve(corpus["v2"].document_id, PUBLIC, "3.2", NOW).eligible


def test_principal_without_tenant_gets_nothing(
    catalog: Catalog, corpus: dict[str, Document]
) -> None:
    eligible, excluded = catalog.eligible_documents(Principal.of("", "public"), "3.2", NOW)
    assert eligible == []
    assert len(excluded) == len(corpus)
    assert {reason for _, reason in excluded} == {R.TENANT}


@pytest.mark.parametrize(
    "principal",
    [
        Principal.of("starship", "intruder"),
        Principal.of("starship", "public", "intruder"),
        Principal.of("starship"),
        Principal.of("nowhere", "public"),
    ],
)
def test_unknown_or_missing_role_gets_nothing(
    catalog: Catalog, corpus: dict[str, Document], principal: Principal
) -> None:
    eligible, excluded = catalog.eligible_documents(principal, "3.2", NOW)
    assert eligible == []
    assert len(excluded) == len(corpus)
    for doc_id, reason in excluded:
        own = catalog.document(doc_id).tenant == principal.tenant
        assert reason is (R.ROLE if own else R.TENANT)


def test_eligible_documents_refuses_bad_input_even_when_empty() -> None:
    catalog = Catalog(InMemoryStore())
    with pytest.raises(ValidationError, match="time zone"):
        catalog.eligible_documents(PUBLIC, "3.2", datetime(2025, 3, 1))
    with pytest.raises(VersionRangeError, match="target_version"):
        catalog.eligible_documents(PUBLIC, "latest", NOW)
    assert catalog.eligible_documents(PUBLIC, "3.2", NOW) == ([], [])
