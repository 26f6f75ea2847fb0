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
from typing import Any, Final

import apsw
import numpy as np
import numpy.typing as npt

from ...model.contracts import ExclusionReason
from ...model.governance import EligibilityScope
from .records import moment_text, version_key
from .tables import IndexTables

__all__ = ["ELIGIBLE_SQL", "REASONS_SQL", "REASON_CODES", "eligible_keys", "eligible_sql", "reason_rows"]

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
SELECT reason, group_concat(doc_key) FROM (
  SELECT d.doc_key,
    CASE
      WHEN NOT (d.visibility = 'public'
                OR EXISTS (SELECT 1 FROM {document_roles} AS r
                           WHERE r.doc_key = d.doc_key AND r.role IN ({roles}))) THEN 1
      WHEN NOT (d.valid_from <= :as_of AND (d.valid_until IS NULL OR :as_of < d.valid_until)) THEN 2
      WHEN NOT ((:version_key IS NULL OR d.version_min_key IS NULL
                 OR substr(:version_key, 1, length(d.version_min_key)) >= d.version_min_key)
            AND (:version_key IS NULL OR d.version_max_key IS NULL
                 OR substr(:version_key, 1, length(d.version_max_key)) <= d.version_max_key)) THEN 3
      WHEN d.status <> 'active' THEN 4
      ELSE 0
    END AS reason
  FROM {documents} AS d
  WHERE d.tenant = :tenant
) GROUP BY reason
"""
"""The tenant's document keys grouped by their *first* failed check (``ExclusionReason`` order
after the tenant: 1 role, 2 validity, 3 version, 4 status; 0 eligible), each group's keys as one
comma-separated text: the same primary reason :func:`veracity.model.governance.eligibility`
gives. ``{roles}`` is a list of named parameters (``:role0, :role1, …``): an ``IN`` over bound
values is several times cheaper per row than one over ``json_each``. Returning keys in one text
per group rather than a row per document matters as much (measured at 5k documents a tenant:
≈ 4 ms against ≈ 9 ms for rows of ``(doc_key, document_id, reason)``)."""

REASON_CODES: Final = {
    0: None,
    1: ExclusionReason.ROLE,
    2: ExclusionReason.VALIDITY,
    3: ExclusionReason.VERSION,
    4: ExclusionReason.STATUS,
}
"""``REASONS_SQL``'s codes."""

COUNT_SQL = "SELECT count(*) FROM {documents} WHERE tenant = :tenant"


def eligible_sql(tables: IndexTables, scope: EligibilityScope) -> tuple[str, dict[str, Any]] | None:
    """The filter query and its parameters; ``None`` when nothing can be eligible (fail closed)."""
    key = version_key(scope.version)  # raises VersionRangeError on a malformed version
    if not scope.roles_pass:
        return None
    principal = scope.principal
    params = {
        "tenant": principal.tenant,
        "as_of": moment_text(scope.as_of),
        "version_key": key,
        "roles": json.dumps(sorted(principal.roles), ensure_ascii=False),
    }
    return ELIGIBLE_SQL.format(documents=tables.documents, document_roles=tables.document_roles), params


def eligible_keys(
    connection: apsw.Connection, tables: IndexTables, scope: EligibilityScope
) -> list[tuple[int, str]]:
    """Run the filter: eligible ``(doc_key, document_id)`` pairs (in no particular order)."""
    query = eligible_sql(tables, scope)
    if query is None:
        return []
    sql, params = query
    return [(int(key), str(document_id)) for key, document_id in connection.execute(sql, params)]


def reason_rows(
    connection: apsw.Connection, tables: IndexTables, scope: EligibilityScope
) -> tuple[dict[ExclusionReason | None, npt.NDArray[np.int64]], int]:
    """The tenant's document keys by primary reason (``None``: eligible), and a count.

    When the principal cannot pass the role check at all (no tenant, no roles, a role the
    tenant does not define), no row is read: the count is the tenant's documents, all
    excluded for ``role``. Otherwise the count is 0 and every document is in one group.
    Keys, not id strings: reading the ids costs more than the predicate (see
    :mod:`veracity.index.sqlite.eligibility`, which maps keys to ids).
    """
    key = version_key(scope.version)  # raises VersionRangeError on a malformed version
    principal = scope.principal
    if not scope.roles_pass:
        count = connection.execute(
            COUNT_SQL.format(documents=tables.documents), {"tenant": principal.tenant}
        ).fetchone()
        return {}, int(count[0]) if count else 0
    roles = sorted(principal.roles)
    params: dict[str, Any] = {
        "tenant": principal.tenant,
        "as_of": moment_text(scope.as_of),
        "version_key": key,
    }
    params.update((f"role{i}", role) for i, role in enumerate(roles))
    sql = REASONS_SQL.format(
        documents=tables.documents,
        document_roles=tables.document_roles,
        roles=", ".join(f":role{i}" for i in range(len(roles))),
    )
    groups: dict[ExclusionReason | None, npt.NDArray[np.int64]] = {}
    for code, keys in connection.execute(sql, params):
        groups[REASON_CODES[int(code)]] = np.array(str(keys).split(","), dtype=np.int64)
    return groups, 0
