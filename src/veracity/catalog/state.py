"""Reads of the catalog as a whole: every document's state, counts, the tenants in use, its revision.

The manifest digests the documents' states, ``status`` counts them by tenant and
status, a knowledge base lists its tenants without reading every document, the
answer cache keys answers by the catalog revision. The SQL is portable (SQLite
and PostgreSQL alike).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "catalog_revision",
    "chunk_count",
    "document_states",
    "document_statuses",
    "source_count",
    "status_counts",
    "tenants_in_use",
]


def document_states(connection: Any) -> list[tuple[str, str, int, str]]:
    """``(document_id, status, catalog_revision, tenant)`` of every document, by id."""
    rows = connection.execute(
        "SELECT document_id, status, catalog_revision, tenant FROM documents ORDER BY document_id"
    ).fetchall()
    return [(str(d), str(s), int(r), str(t)) for d, s, r, t in rows]


def document_statuses(connection: Any) -> dict[str, str]:
    """Every document's id → its status."""
    rows = connection.execute("SELECT document_id, status FROM documents")
    return {str(document_id): str(status) for document_id, status in rows}


def source_count(connection: Any) -> int:
    """How many sources the documents come from (revisions of one source count once)."""
    row = connection.execute("SELECT count(DISTINCT source_id) FROM documents").fetchone()
    return int(row[0])


def catalog_revision(connection: Any) -> int:
    """The catalog's revision: a counter every change of the catalog moves (migration 0014)."""
    row = connection.execute("SELECT revision FROM catalog_revision WHERE id = 1").fetchone()
    return int(row[0])


def chunk_count(connection: Any) -> int:
    """How many chunks the catalog holds."""
    row = connection.execute("SELECT count(*) FROM chunks").fetchone()
    return int(row[0])


def status_counts(connection: Any) -> dict[str, dict[str, int]]:
    """Tenant → status → how many documents."""
    counts: dict[str, dict[str, int]] = {}
    rows = connection.execute("SELECT tenant, status, count(*) FROM documents GROUP BY tenant, status")
    for tenant, status, number in rows:
        counts.setdefault(str(tenant), {})[str(status)] = int(number)
    return counts


def tenants_in_use(connection: Any) -> tuple[set[str], set[str]]:
    """The tenants that have documents, and those that define roles."""
    with_documents = {str(row[0]) for row in connection.execute("SELECT DISTINCT tenant FROM documents")}
    with_roles = {str(row[0]) for row in connection.execute("SELECT DISTINCT tenant FROM tenant_roles")}
    return with_documents, with_roles
