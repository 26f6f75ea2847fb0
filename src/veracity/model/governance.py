"""Eligibility: may this document be used for this principal, version and moment?

Pure function, fail closed. Reasons are reported in the order of
``ExclusionReason``: tenant, role, validity, version, status. A principal with
no tenant, no roles or a role the tenant does not define is never eligible.
A target version of ``None`` means the question is about no particular
version: the version check is skipped (every version range passes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from .contracts import Document, Eligibility, ExclusionReason, Principal, Status, Visibility
from .errors import ValidationError
from .versions import in_range

NON_OFFICIAL_MARKED: Final = "marked"
"""A non-official (community) source may answer a sub-question no official source covers; its
claim is marked as such. Untrusted sources never answer."""
NON_OFFICIAL_RELATED: Final = "related"
"""Non-official sources never answer; what they cover is only cited as related."""
NON_OFFICIAL_POLICIES: Final = (NON_OFFICIAL_MARKED, NON_OFFICIAL_RELATED)
"""The policies a tenant may choose for its non-official sources (``non_official:`` in its
``tenant.yaml``)."""

HIDDEN_REASONS = frozenset({ExclusionReason.TENANT, ExclusionReason.ROLE})
"""Reasons the trace counts without naming the document (another tenant's, a role's)."""


def require_aware(moment: datetime, *, field: str = "as_of") -> datetime:
    """Refuse naive datetimes: a moment without a zone is ambiguous for validity windows."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValidationError(
            f"{moment.isoformat()} has no time zone; give one, e.g. 'Z'", field=field
        )
    return moment


@dataclass(frozen=True, slots=True)
class EligibilityScope:
    """Everything the eligibility step reads besides the documents: who asks, for which product
    version, at what moment, and the roles the principal's tenant defines.

    ``version=None`` applies no version filter. ``as_of`` must carry a time zone (checked
    here, so every filter built on a scope gets an aware moment).
    """

    principal: Principal
    version: str | None
    as_of: datetime
    known_roles: frozenset[str]

    def __post_init__(self) -> None:
        require_aware(self.as_of)

    @property
    def roles_known(self) -> bool:
        """Fail closed: the principal has roles and its tenant defines every one of them."""
        roles = self.principal.roles
        return bool(roles) and all(role in self.known_roles for role in roles)

    @property
    def roles_pass(self) -> bool:
        """Fail closed: a principal without a tenant, without roles, or with a role its tenant
        does not define passes no role check."""
        return bool(self.principal.tenant) and self.roles_known


def role_allowed(document: Document, scope: EligibilityScope) -> bool:
    """Fail closed: no roles, or any role unknown to the tenant, denies."""
    if not scope.roles_known:
        return False
    if document.visibility is Visibility.PUBLIC:
        return True
    return any(role in document.allowed_roles for role in scope.principal.roles)


def eligibility(document: Document, scope: EligibilityScope) -> Eligibility:
    """Every failed check for ``document``; eligible only when none failed."""
    principal, as_of = scope.principal, scope.as_of
    reasons: list[ExclusionReason] = []
    if not principal.tenant or principal.tenant != document.tenant:
        reasons.append(ExclusionReason.TENANT)
    if not role_allowed(document, scope):
        reasons.append(ExclusionReason.ROLE)
    if as_of < document.valid_from or (
        document.valid_until is not None and as_of >= document.valid_until
    ):
        reasons.append(ExclusionReason.VALIDITY)
    if scope.version is not None and not in_range(
        scope.version, document.version_min, document.version_max
    ):
        reasons.append(ExclusionReason.VERSION)
    if document.status is not Status.ACTIVE:
        reasons.append(ExclusionReason.STATUS)
    return Eligibility(eligible=not reasons, reasons=tuple(reasons))


@dataclass(frozen=True, slots=True)
class EligibleDocuments:
    """The eligibility step's outcome for one principal, version and moment.

    ``document_ids``: the eligible documents of the principal's tenant.
    ``excluded``: ``(source_id, document_id, reason)`` of every other document of
    the tenant whose primary reason may be named (validity, version, status),
    sorted. ``hidden``: how many were excluded for a reason that is not named
    (tenant, role). Documents of other tenants are out of scope: neither named
    nor counted.
    """

    document_ids: frozenset[str]
    excluded: tuple[tuple[str, str, str], ...]
    hidden: int


def eligible_documents(documents: Mapping[str, Document], scope: EligibilityScope) -> EligibleDocuments:
    """:func:`eligibility` over every document of the principal's tenant (the reference filter).

    Backends may compute the same outcome another way (in SQL); they must agree with this.
    """
    eligible: set[str] = set()
    named: list[tuple[str, str, str]] = []
    hidden = 0
    for document_id, document in documents.items():
        if document.tenant != scope.principal.tenant:
            continue
        verdict = eligibility(document, scope)
        if verdict.eligible:
            eligible.add(document_id)
        elif verdict.primary_reason in HIDDEN_REASONS:
            hidden += 1
        else:
            named.append((document.source_id, document_id, str(verdict.primary_reason)))
    return EligibleDocuments(frozenset(eligible), tuple(sorted(named)), hidden)
