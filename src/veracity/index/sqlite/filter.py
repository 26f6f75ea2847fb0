"""The governance filter in SQL, over the search index's document snapshot.

Same predicate as :func:`veracity.model.governance.eligibility`, written as one query
over one index version's ``documents`` table (the governance metadata *as of indexing*, as the
pipeline's eligibility step uses it):

- tenant equal (a principal without a tenant gets nothing);
- role: every role of the principal is known to the tenant (checked before the
  query; otherwise nothing), and the document is public or allows one of them;
- validity: ``valid_from <= as_of < valid_until`` (ISO UTC text compares as time);
- version: ``substr(target_key, 1, length(bound_key))`` against each bound key,
  which compares on the bound's own precision (see
  :func:`veracity.index.sqlite.records.version_key`); no target version
  (``None``) passes every range;
- status ``active``.

:func:`eligible_sql` returns the SQL and its parameters apart from running it,
so callers can print or ``EXPLAIN`` the plan.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime
from typing import Any

import apsw

from ...model.contracts import Principal
from ...model.governance import require_aware
from .records import moment_text, version_key
from .tables import IndexTables

__all__ = ["ELIGIBLE_SQL", "REASONS_SQL", "eligible_keys", "eligible_sql", "reason_rows"]

ELIGIBLE_SQL = """
SELECT d.doc_key, d.document_id
FROM {documents} AS d
WHERE d.tenant = :tenant
  AND d.status = 'active'
  AND d.valid_from <= :as_of
  AND (d.valid_until IS NULL OR :as_of < d.valid_until)
  AND (:version_key IS NULL OR d.version_min_key IS NULL
       OR substr(:version_key, 1, length(d.version_min_key)) >= d.version_min_key)
  AND (:version_key IS NULL OR d.version_max_key IS NULL
       OR substr(:version_key, 1, length(d.version_max_key)) <= d.version_max_key)
  AND (d.visibility = 'public'
       OR EXISTS (SELECT 1 FROM {document_roles} AS r
                  WHERE r.doc_key = d.doc_key
                    AND r.role IN (SELECT value FROM json_each(:roles))))
"""
"""Eligible ``(doc_key, document_id)`` rows for one principal, version and moment (table names to fill)."""


REASONS_SQL = """
SELECT d.doc_key, d.document_id,
  CASE
    WHEN NOT (d.visibility = 'public'
              OR EXISTS (SELECT 1 FROM {document_roles} AS r
                         WHERE r.doc_key = d.doc_key
                           AND r.role IN (SELECT value FROM json_each(:roles)))) THEN 'role'
    WHEN NOT (d.valid_from <= :as_of AND (d.valid_until IS NULL OR :as_of < d.valid_until)) THEN 'validity'
    WHEN NOT ((:version_key IS NULL OR d.version_min_key IS NULL
               OR substr(:version_key, 1, length(d.version_min_key)) >= d.version_min_key)
          AND (:version_key IS NULL OR d.version_max_key IS NULL
               OR substr(:version_key, 1, length(d.version_max_key)) <= d.version_max_key)) THEN 'version'
    WHEN d.status <> 'active' THEN 'status'
  END AS reason
FROM {documents} AS d
WHERE d.tenant = :tenant
"""
"""Every document of one tenant with the *first* failed check (``ExclusionReason`` order after
the tenant: role, validity, version, status), ``NULL`` when eligible: the same primary reason
:func:`veracity.model.governance.eligibility` gives."""

COUNT_SQL = "SELECT count(*) FROM {documents} WHERE tenant = :tenant"


def eligible_sql(
    tables: IndexTables,
    principal: Principal,
    target_version: str | None,
    as_of: datetime,
    known_roles: Collection[str],
) -> tuple[str, dict[str, Any]] | None:
    """The filter query and its parameters; ``None`` when nothing can be eligible (fail closed)."""
    require_aware(as_of)
    key = version_key(target_version)  # raises VersionRangeError on a malformed version
    if not principal.tenant or not principal.roles:
        return None
    if any(role not in known_roles for role in principal.roles):
        return None
    params = {
        "tenant": principal.tenant,
        "as_of": moment_text(as_of),
        "version_key": key,
        "roles": json.dumps(sorted(principal.roles), ensure_ascii=False),
    }
    return ELIGIBLE_SQL.format(documents=tables.documents, document_roles=tables.document_roles), params


def eligible_keys(
    connection: apsw.Connection,
    tables: IndexTables,
    principal: Principal,
    target_version: str | None,
    as_of: datetime,
    known_roles: Collection[str],
) -> list[tuple[int, str]]:
    """Run the filter: eligible ``(doc_key, document_id)`` pairs (in no particular order)."""
    query = eligible_sql(tables, principal, target_version, as_of, known_roles)
    if query is None:
        return []
    sql, params = query
    return [(int(key), str(document_id)) for key, document_id in connection.execute(sql, params)]


def reason_rows(
    connection: apsw.Connection,
    tables: IndexTables,
    principal: Principal,
    target_version: str | None,
    as_of: datetime,
    known_roles: Collection[str],
) -> tuple[list[tuple[int, str, str | None]], int]:
    """``(doc_key, document_id, primary reason or None)`` of the tenant's documents, and a count.

    When the principal cannot pass the role check at all (no tenant, no roles, a role the
    tenant does not define), no row is read: the count is the tenant's documents, all
    excluded for ``role``. Otherwise the count is 0 and every document comes with its reason.
    """
    require_aware(as_of)
    key = version_key(target_version)  # raises VersionRangeError on a malformed version
    names = {"documents": tables.documents, "document_roles": tables.document_roles}
    if not principal.tenant or not principal.roles or any(r not in known_roles for r in principal.roles):
        count = connection.execute(COUNT_SQL.format(**names), {"tenant": principal.tenant}).fetchone()
        return [], int(count[0]) if count else 0
    params = {
        "tenant": principal.tenant,
        "as_of": moment_text(as_of),
        "version_key": key,
        "roles": json.dumps(sorted(principal.roles), ensure_ascii=False),
    }
    rows = connection.execute(REASONS_SQL.format(**names), params)
    return [(int(doc_key), str(document_id), reason) for doc_key, document_id, reason in rows], 0
