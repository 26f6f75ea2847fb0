"""Eligibility: may this document be used for this principal, version and moment?

Pure function, fail closed. Reasons are reported in the order of
``ExclusionReason``: tenant, role, validity, version, status. A principal with
no tenant, no roles or a role the tenant does not define is never eligible.
A target version of ``None`` means the question is about no particular
version: the version check is skipped (every version range passes).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from .contracts import Document, Eligibility, ExclusionReason, Principal, Status, Visibility
from .errors import ValidationError
from .versions import in_range


def require_aware(moment: datetime, *, field: str = "as_of") -> datetime:
    """Refuse naive datetimes: a moment without a zone is ambiguous for validity windows."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValidationError(
            f"{moment.isoformat()} has no time zone; give one, e.g. 'Z'", field=field
        )
    return moment


def role_allowed(document: Document, principal: Principal, known_roles: Collection[str]) -> bool:
    """Fail closed: no roles, or any role unknown to the tenant, denies."""
    if not principal.roles or any(role not in known_roles for role in principal.roles):
        return False
    if document.visibility is Visibility.PUBLIC:
        return True
    return any(role in document.allowed_roles for role in principal.roles)


def eligibility(
    document: Document,
    principal: Principal,
    target_version: str | None,
    as_of: datetime,
    known_roles: Collection[str],
) -> Eligibility:
    """Every failed check for ``document``; eligible only when none failed.

    ``target_version=None`` applies no version filter.
    """
    require_aware(as_of)
    reasons: list[ExclusionReason] = []
    if not principal.tenant or principal.tenant != document.tenant:
        reasons.append(ExclusionReason.TENANT)
    if not role_allowed(document, principal, known_roles):
        reasons.append(ExclusionReason.ROLE)
    if as_of < document.valid_from or (
        document.valid_until is not None and as_of >= document.valid_until
    ):
        reasons.append(ExclusionReason.VALIDITY)
    if target_version is not None and not in_range(
        target_version, document.version_min, document.version_max
    ):
        reasons.append(ExclusionReason.VERSION)
    if document.status is not Status.ACTIVE:
        reasons.append(ExclusionReason.STATUS)
    return Eligibility(eligible=not reasons, reasons=tuple(reasons))
