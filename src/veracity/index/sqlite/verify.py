"""Verifying one index version against the live catalog before it may be published.

Checks, each reported with its numbers:

- ``documents``: the version holds exactly the catalog's documents, each with
  the catalog's current governance record (status, roles, validity, ...), in
  the JSON record the pipeline reads and in the columns the SQL filter reads;
- ``chunks``: for every document, the same chunks in the same order with the
  same records (a digest over both sides); a record keeps the digest of the
  text it was indexed from, so text the catalog changed since shows here too;
- ``lexical``: per tenant, one FTS5 row per chunk and as many postings as the
  chunks' token counts add up to;
- ``vectors``: one unit-length vector per chunk, of the expected model;
- ``ann``: only where the version has approximate-index artefacts (or a
  partition large enough to have one): each artefact's files match their
  manifest (sha256, keys digest, row count, dim) and the rows it covers are
  the index's, up to :data:`veracity.index.ann.REBUILD_SHARE`
  (:mod:`veracity.index.sqlite.artefacts`); a missing one is reported, not failed;
- ``probes``: fixed queries made from a deterministic sample of chunks (the
  chunks whose id hashes lowest): the chunk's own tokens must find a chunk of
  the same text in the lexical top 10; re-embedding the chunk must give its
  stored vector back (cosine >= :data:`REEMBED_MIN_COSINE`) and find a chunk of
  the same text first in dense search.

:func:`catalog_matches` repeats the first two checks cheaply inside the
publishing transaction, so nothing can change between the last check and the
pointer switch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from ...catalog.catalog import Catalog
from ...catalog.sql import all_rows, scalar
from ...model.contracts import Document, Status, Visibility
from ...text.tokens import tokenize
from ..dense import Embedder, normalized_rows
from ..snapshot import index_text
from ..versioned import VersionedIndex
from .artefacts import ann_folder, check_version
from .fts import check_fts_name
from .records import (
    chunk_to_json,
    current_chunk_record,
    current_document_record,
    document_to_json,
    moment_text,
    version_key,
)
from .tables import IndexTables
from .vectors import fetch_vectors, load_partition

__all__ = ["PROBES", "REEMBED_MIN_COSINE", "Check", "Verification", "catalog_matches", "verify_version"]

PROBES: Final = 12
"""Chunks sampled for the fixed queries."""

REEMBED_MIN_COSINE: Final = 0.999
"""A stored vector and the same text embedded again agree at least this much (same model, same text)."""

LEXICAL_PROBE_K: Final = 10
"""Verification's lexical probe: a chunk's own words must rank it within this many hits."""
_PROBE_TOKENS: Final = 64


@dataclass(frozen=True, slots=True)
class Check:
    """One verification check: its name, whether it passed, and what it measured."""

    name: str
    passed: bool
    detail: str
    numbers: Mapping[str, int | float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Verification:
    """Every check run on one version, and the digests it computed."""

    version: int
    checks: tuple[Check, ...]
    digests: Mapping[str, str]

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(check.passed for check in self.checks)

    def failures(self) -> list[str]:
        """``name: detail`` of every failed check."""
        return [f"{c.name}: {c.detail}" for c in self.checks if not c.passed]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in the version's manifest)."""
        return {
            "version": self.version,
            "passed": self.passed,
            "checks": [
                {"name": c.name, "passed": c.passed, "detail": c.detail, "numbers": dict(c.numbers)}
                for c in self.checks
            ],
            "digests": dict(self.digests),
        }


def _digest_lines(lines: list[str]) -> str:
    state = hashlib.sha256()
    for line in lines:
        state.update(line.encode("utf-8"))
        state.update(b"\n")
    return state.hexdigest()


def _record_hash(record: str) -> str:
    return hashlib.sha256(record.encode("utf-8")).hexdigest()


def _filter_columns(document: Document) -> str:
    """The columns the SQL governance filter reads, as the index writer derives them from a document."""
    return "\x1f".join(
        str(value)
        for value in (
            document.tenant, Status(document.status).value, Visibility(document.visibility).value,
            moment_text(document.valid_from),
            moment_text(document.valid_until) if document.valid_until is not None else None,
            version_key(document.version_min), version_key(document.version_max),
            ",".join(sorted(set(document.allowed_roles))),
        )
    )  # fmt: skip


def _catalog_side(catalog: Catalog) -> tuple[dict[str, str], list[str]]:
    documents = {
        d.document_id: document_to_json(d) + "\x1e" + _filter_columns(d) for d in catalog.documents()
    }
    chunk_lines = [
        f"{document_id}\x1f{chunk.chunk_id}\x1f{_record_hash(chunk_to_json(chunk))}"
        for document_id in sorted(documents)
        for chunk in catalog.chunks(document_id)
    ]
    return documents, chunk_lines


def _postgres(index: VersionedIndex) -> Any:
    """The PostgreSQL side of the checks, or ``None`` for a SQLite index."""
    if getattr(index.store.connection, "dialect", "sqlite") != "postgresql":
        return None
    from ..postgres import verify as postgres

    return postgres


_ROLES_SQL = (
    "(SELECT coalesce(group_concat(role, ','), '') FROM "
    "(SELECT role FROM {roles} AS r WHERE r.doc_key = d.doc_key ORDER BY role))"
)


def _index_side(index: VersionedIndex, tables: IndexTables) -> tuple[dict[str, str], list[str]]:
    connection = index.store.connection
    postgres = _postgres(index)
    roles = (postgres.ROLES_SQL if postgres else _ROLES_SQL).format(roles=tables.document_roles)
    documents = {
        str(document_id): "\x1f".join(
            str(value) for value in (current_document_record(str(record)), *columns)
        ).replace("\x1f", "\x1e", 1)
        for document_id, record, *columns in all_rows(
            connection,
            f"SELECT d.document_id, d.record, d.tenant, d.status, d.visibility, d.valid_from, d.valid_until, "
            f"d.version_min_key, d.version_max_key, {roles} FROM {tables.documents} AS d",
        )
    }
    rows = all_rows(
        connection,
        f"SELECT d.document_id, c.chunk_id, c.record FROM {tables.chunks} AS c "
        f"JOIN {tables.documents} AS d USING (doc_key) ORDER BY d.document_id, c.ordinal",
    )
    return documents, [
        f"{document_id}\x1f{chunk_id}\x1f{_record_hash(current_chunk_record(str(record)))}"
        for document_id, chunk_id, record in rows
    ]


def _compare(
    index: VersionedIndex, tables: IndexTables, catalog: Catalog
) -> tuple[Check, Check, dict[str, str]]:
    expected_docs, expected_chunks = _catalog_side(catalog)
    found_docs, found_chunks = _index_side(index, tables)
    missing = sorted(set(expected_docs) - set(found_docs))
    extra = sorted(set(found_docs) - set(expected_docs))
    stale = sorted(i for i in set(expected_docs) & set(found_docs) if expected_docs[i] != found_docs[i])
    documents = Check(
        "documents",
        not (missing or extra or stale),
        f"{len(found_docs)} indexed, {len(expected_docs)} in the catalog: "
        f"{len(missing)} missing, {len(extra)} not in the catalog, {len(stale)} with an old record",
        {"indexed": len(found_docs), "catalog": len(expected_docs), "missing": len(missing),
         "extra": len(extra), "stale": len(stale)},
    )  # fmt: skip
    digests = {
        "documents": _digest_lines([f"{i}\x1f{_record_hash(found_docs[i])}" for i in sorted(found_docs)]),
        "chunks": _digest_lines(found_chunks),
        "catalog_chunks": _digest_lines(expected_chunks),
    }
    differing = len(set(expected_chunks) ^ set(found_chunks))
    chunks = Check(
        "chunks",
        digests["chunks"] == digests["catalog_chunks"],
        f"{len(found_chunks)} indexed, {len(expected_chunks)} in the catalog, {differing} differing",
        {"indexed": len(found_chunks), "catalog": len(expected_chunks), "differing": differing},
    )
    return documents, chunks, digests


def catalog_matches(index: VersionedIndex, tables: IndexTables, catalog: Catalog) -> bool:
    """True when the version holds exactly the catalog's documents and chunks (run it in a transaction)."""
    documents, chunks, _ = _compare(index, tables, catalog)
    return documents.passed and chunks.passed


def _lexical(index: VersionedIndex, tables: IndexTables) -> Check:
    connection = index.store.connection
    postgres = _postgres(index)
    if postgres is not None:
        chunks, entries, problems = postgres.lexical_counts(connection, tables)
        detail = "; ".join(problems) or f"{chunks} chunks, {entries} postings, all tenants consistent"
        numbers = {"rows": chunks, "postings": entries, "tenants_bad": len(problems)}
        return Check("lexical", not problems, detail, numbers)
    bad: list[str] = []
    rows = postings = 0
    for tenant_key, tenant, fts_table in all_rows(
        connection, f"SELECT tenant_key, tenant, fts_table FROM {tables.tenants}"
    ):
        table = check_fts_name(str(fts_table))
        sql = f"SELECT count(*), coalesce(sum(n_tokens), 0) FROM {tables.chunks} WHERE tenant_key = ?"
        chunks, tokens = all_rows(connection, sql, (int(tenant_key),))[0]
        fts_rows = int(scalar(connection, f"SELECT count(*) FROM {table}"))
        instances = int(scalar(connection, f"SELECT count(*) FROM {table}_instances"))
        rows, postings = rows + fts_rows, postings + instances
        if fts_rows != int(chunks) or instances != int(tokens):
            bad.append(f"{tenant}: {fts_rows} rows / {chunks} chunks, {instances} postings / {tokens} tokens")
    detail = "; ".join(bad) if bad else f"{rows} rows, {postings} postings, all tenants consistent"
    return Check("lexical", not bad, detail, {"rows": rows, "postings": postings, "tenants_bad": len(bad)})


def _vectors(index: VersionedIndex, tables: IndexTables, embedder: Embedder | None) -> Check:
    connection = index.store.connection
    model = index.vector_model()
    chunks = int(scalar(connection, f"SELECT count(*) FROM {tables.chunks}"))
    if model is None:
        passed = embedder is None or chunks == 0
        return Check("vectors", passed, "no vectors (lexical-only version)", {"vectors": 0, "chunks": chunks})
    if embedder is not None and (model.model_id != embedder.model_id or model.dim != embedder.dim):
        return Check("vectors", False, f"vectors of {model.model_id!r}, expected {embedder.model_id!r}")
    vectors = int(scalar(connection, f"SELECT count(*) FROM {model.table}"))
    worst = 0.0
    postgres = _postgres(index)
    if postgres is not None:
        worst = postgres.max_norm_error(connection, model)
    for (tenant,) in [] if postgres else all_rows(connection, f"SELECT tenant FROM {tables.tenants}"):
        loaded = load_partition(connection, model.table, str(tenant), model.dim)
        if loaded is not None and loaded[1].size:
            worst = max(worst, float(np.abs(np.linalg.norm(loaded[1], axis=1) - 1.0).max()))
    passed = vectors == chunks and worst < 1e-3
    detail = f"{vectors} vectors of {model.model_id!r} for {chunks} chunks, max |norm - 1| {worst:.2e}"
    return Check("vectors", passed, detail, {"vectors": vectors, "chunks": chunks, "max_norm_error": worst})


def _ann(index: VersionedIndex, tables: IndexTables) -> Check | None:
    """The ``ann`` check, or ``None`` where there is nothing to check (no artefact, none due)."""
    folder = ann_folder(index.store)
    model = index.vector_model()
    minimum = getattr(index, "ann_min_rows", None)
    if folder is None or model is None or minimum is None or _postgres(index) is not None:
        return None
    problems, counts = check_version(index.store.connection, tables, model, folder, minimum)
    if not counts["artefacts"] and not counts["missing"]:
        return None
    detail = "; ".join(problems[:3]) or (
        f"{counts['artefacts']} approximate index(es) of {counts['rows']} rows match their manifests"
        + (f"; {counts['missing']} partition(s) without one (exact search)" if counts["missing"] else "")
    )
    return Check("ann", not problems, detail, {**counts, "problems": len(problems)})


def _sample(index: VersionedIndex, tables: IndexTables, probes: int) -> list[tuple[str, str]]:
    rows = all_rows(
        index.store.connection,
        f"SELECT c.chunk_id, d.tenant FROM {tables.chunks} AS c JOIN {tables.documents} AS d USING (doc_key)",
    )
    ranked = sorted(rows, key=lambda r: (hashlib.sha256(str(r[0]).encode()).hexdigest(), str(r[0])))
    return [(str(chunk_id), str(tenant)) for chunk_id, tenant in ranked[:probes]]


def _lexical_probe(index: VersionedIndex, chunk_id: str, tenant: str, eligible: set[str]) -> bool:
    """The chunk's own tokens rank it in the top ``LEXICAL_PROBE_K`` (ties with the last one count)."""
    chunk = index.chunks[chunk_id]
    tokens = list(dict.fromkeys(tokenize(index_text(chunk))))[:_PROBE_TOKENS]
    hits = index.lexical_search(tenant, tokens, k=LEXICAL_PROBE_K, eligible_document_ids=eligible)
    if any(c == chunk_id or index.chunks[c].content_digest == chunk.content_digest for c, _ in hits):
        return True
    own = index.lexical_search(tenant, tokens, k=10_000, eligible_document_ids={chunk.document_id})
    score = next((s for c, s in own if c == chunk_id), None)
    return score is not None and len(hits) == LEXICAL_PROBE_K and score >= hits[-1][1] - 1e-9


def _dense_probe(
    index: VersionedIndex, tables: IndexTables, embedder: Embedder, chunk_id: str, tenant: str,
    eligible: set[str],
) -> tuple[float, bool]:  # fmt: skip
    """``(cosine of the re-embedded text with the stored vector, nothing else scores higher)``."""
    model = index.vector_model()
    assert model is not None
    fresh = normalized_rows(
        np.asarray(embedder.embed_batch([index_text(index.chunks[chunk_id])], kind="passage")), what="probe"
    )[0]
    sql = f"SELECT chunk_key FROM {tables.chunks} WHERE chunk_id = ?"
    key = int(scalar(index.store.connection, sql, (chunk_id,)))
    postgres = _postgres(index)
    if postgres is not None:
        stored = postgres.stored_vector(index.store.connection, model, key)
    else:
        _, stored = fetch_vectors(index.store.connection, model.table, [key], model.dim)
    cosine = float(stored[0] @ fresh) if stored.shape[0] else -1.0
    top = index.dense_search(tenant, fresh, k=1, eligible_document_ids=eligible, model_id=embedder.model_id)
    return cosine, bool(top) and (top[0][0] == chunk_id or top[0][1] <= cosine + 1e-6)


def _probes(index: VersionedIndex, tables: IndexTables, embedder: Embedder | None, probes: int) -> Check:
    sample = _sample(index, tables, probes)
    by_tenant: dict[str, set[str]] = {}
    for document in index.documents.values():
        by_tenant.setdefault(document.tenant, set()).add(document.document_id)
    dense = embedder is not None and index.vector_model() is not None
    lexical_found = dense_found = reembedded = 0
    worst_cosine = 1.0
    failures: list[str] = []
    for chunk_id, tenant in sample:
        if _lexical_probe(index, chunk_id, tenant, by_tenant[tenant]):
            lexical_found += 1
        else:
            failures.append(f"lexical probe: {chunk_id} not in the top {LEXICAL_PROBE_K} for its own tokens")
        if not dense or embedder is None:
            continue
        cosine, first = _dense_probe(index, tables, embedder, chunk_id, tenant, by_tenant[tenant])
        worst_cosine = min(worst_cosine, cosine)
        reembedded += cosine >= REEMBED_MIN_COSINE
        dense_found += first
        if cosine < REEMBED_MIN_COSINE:
            failures.append(f"re-embedded {chunk_id} has cosine {cosine:.4f} with its stored vector")
        elif not first:
            failures.append(f"dense probe: another chunk outranks {chunk_id} for its own vector")
    numbers: dict[str, int | float] = {
        "probes": len(sample), "lexical_found": lexical_found, "dense_found": dense_found,
        "reembedded": reembedded, "worst_cosine": round(worst_cosine, 6),
    }  # fmt: skip
    detail = "; ".join(failures[:3]) if failures else (
        f"{len(sample)} fixed queries: lexical {lexical_found}/{len(sample)}, dense {dense_found}, "
        f"re-embedded {reembedded} (worst cosine {worst_cosine:.4f})"
    )  # fmt: skip
    return Check("probes", not failures, detail, numbers)


def verify_version(
    index: VersionedIndex, catalog: Catalog, embedder: Embedder | None, *, probes: int = PROBES
) -> Verification:
    """Run every check on the version ``index`` reads (pin it with ``version=N``)."""
    tables = IndexTables(index.version)
    documents, chunks, digests = _compare(index, tables, catalog)
    checks = [documents, chunks, _lexical(index, tables), _vectors(index, tables, embedder)]
    ann = _ann(index, tables)
    checks += [ann] if ann is not None else []
    if all(check.passed for check in checks):  # probes query the index: only a sound one
        checks.append(_probes(index, tables, embedder, probes))
    return Verification(tables.version, tuple(checks), digests)
