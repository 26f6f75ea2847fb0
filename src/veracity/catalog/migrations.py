"""The SQLite catalog's named, recorded schema migrations.

(:func:`connect`, re-exported here, lives in :mod:`veracity.catalog.connection`.)

Each migration has a name (``0001_documents``) and SQL. :func:`migrate` applies
the ones a database lacks, in order, each in the same transaction as the row
that records it in ``_migrations (name, applied_at)``. Applying twice is a
no-op. A database that records a migration this code does not know was written
by other (newer) code and is refused with :class:`~veracity.model.errors.NewerFormatError`.
:func:`pending_migrations` answers without any write lock, so opening an
up-to-date database never waits for a writer.

To change the schema, append a migration; never edit one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import apsw

from ..model.errors import MigrationError, NewerFormatError
from . import schema
from .connection import connect
from .sources import SOURCE_FINGERPRINTS
from .syncs import SYNC_TABLES

__all__ = [
    "LEDGER",
    "MIGRATIONS",
    "Migration",
    "applied_migrations",
    "apply_missing",
    "connect",
    "migrate",
    "missing",
    "pending_migrations",
    "refuse_unknown",
]


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: a unique, ordered name and the SQL that performs it."""

    name: str
    sql: str



def _revision_triggers(*tables: tuple[str, str]) -> str:
    """Triggers that move ``catalog_revision`` on every insert, update and delete of each
    ``(name, table)``: ``catalog_revision_<name>_added`` / ``_changed`` / ``_deleted``."""
    return "\n".join(
        f"        CREATE TRIGGER catalog_revision_{name}_{event} AFTER {verb} ON {table}\n"
        "            BEGIN UPDATE catalog_revision SET revision = revision + 1 WHERE id = 1; END;"
        for name, table in tables
        for event, verb in (("added", "INSERT"), ("changed", "UPDATE"), ("deleted", "DELETE"))
    )

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_documents",
        f"""
        CREATE TABLE documents (
            seq              INTEGER PRIMARY KEY AUTOINCREMENT,  -- order revisions were stored
{schema.DOCUMENT_COLUMNS}
            catalog_revision INTEGER NOT NULL DEFAULT 1 CHECK (catalog_revision >= 1),
            stored_at        TEXT NOT NULL,
            updated_at       TEXT NOT NULL
        );
{schema.DOCUMENT_INDEXES}
        CREATE TABLE document_roles (
{schema.DOCUMENT_ROLE_COLUMNS}
            PRIMARY KEY (document_id, ordinal)
        ) WITHOUT ROWID;
        CREATE INDEX document_roles_by_role ON document_roles (role);
        CREATE TABLE document_facts (
{schema.DOCUMENT_FACT_COLUMNS}
            PRIMARY KEY (document_id, ordinal)
        ) WITHOUT ROWID;
        CREATE INDEX document_facts_by_fact ON document_facts (fact_id);
        """,
    ),
    Migration(
        "0002_chunks",
        f"""
        CREATE TABLE chunks (
            seq             INTEGER PRIMARY KEY,   -- stable integer key for derived indexes
{schema.CHUNK_COLUMNS}
            UNIQUE (document_id, ordinal)
        );
        """,
    ),
    Migration(
        "0003_roles",
        """
        CREATE TABLE tenant_roles (
            tenant TEXT NOT NULL,
            role   TEXT NOT NULL,
            PRIMARY KEY (tenant, role)
        ) WITHOUT ROWID;
        """,
    ),
    # The derived search index (veracity.index.sqlite.search): rebuildable from the
    # catalog. Documents and chunks as they were when indexed (the index snapshot).
    Migration(
        "0004_index_documents",
        """
        CREATE TABLE index_documents (
            doc_key         INTEGER PRIMARY KEY,
            document_id     TEXT NOT NULL UNIQUE,
            tenant          TEXT NOT NULL,
            status          TEXT NOT NULL,
            visibility      TEXT NOT NULL,
            valid_from      TEXT NOT NULL,          -- ISO-8601 UTC, sorts as text
            valid_until     TEXT,
            version_min_key TEXT,                   -- veracity.index.sqlite.records.version_key
            version_max_key TEXT,
            record          TEXT NOT NULL           -- the Document as JSON, as of indexing
        );
        CREATE INDEX index_documents_by_tenant ON index_documents (tenant, status);
        CREATE TABLE index_document_roles (
            doc_key INTEGER NOT NULL REFERENCES index_documents (doc_key) ON DELETE CASCADE,
            role    TEXT NOT NULL,
            PRIMARY KEY (doc_key, role)
        ) WITHOUT ROWID;
        CREATE TABLE index_chunks (
            chunk_key  INTEGER PRIMARY KEY,         -- rowid in the FTS5 and vec0 tables
            chunk_id   TEXT NOT NULL UNIQUE,
            doc_key    INTEGER NOT NULL REFERENCES index_documents (doc_key) ON DELETE CASCADE,
            tenant_key INTEGER NOT NULL,
            ordinal    INTEGER NOT NULL,
            n_tokens   INTEGER NOT NULL,            -- BM25 document length
            record     TEXT NOT NULL                -- the Chunk as JSON
        );
        CREATE INDEX index_chunks_by_document ON index_chunks (doc_key, ordinal);
        CREATE INDEX index_chunks_by_tenant ON index_chunks (tenant_key, chunk_key);
        """,
    ),
    Migration(
        "0005_index_meta",
        """
        CREATE TABLE index_tenants (               -- one FTS5 table per tenant
            tenant_key  INTEGER PRIMARY KEY,
            tenant      TEXT NOT NULL UNIQUE,
            fts_table   TEXT NOT NULL UNIQUE
        );
        CREATE TABLE index_vector_tables (         -- one vec0 table per model
            model_id      TEXT PRIMARY KEY,
            dim           INTEGER NOT NULL,
            table_name    TEXT NOT NULL UNIQUE,
            normalization TEXT NOT NULL,
            distance      TEXT NOT NULL,
            created_at    TEXT NOT NULL
        );
        CREATE TABLE index_meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO index_meta (key, value) VALUES ('generation', '0');
        """,
    ),
    Migration(
        "0006_index_filter_cover",
        """
        -- the governance filter (veracity.index.sqlite.filter) reads only this index:
        -- 20 ms -> 4 ms CPU for ~5k documents of a tenant (records stay unread)
        CREATE INDEX index_documents_filter ON index_documents (
            tenant, status, valid_from, valid_until, version_min_key, version_max_key,
            visibility, document_id
        );
        """,
    ),
    Migration(
        "0007_ingestion_ledger",
        f"""
        -- every step of every ingested file (veracity.ingest.ledger); append-only
        CREATE TABLE ingestion_steps (
            seq          INTEGER PRIMARY KEY AUTOINCREMENT,
{schema.LEDGER_STEP_COLUMNS}
            state        TEXT NOT NULL CHECK (state IN
                ('discovered', 'parsed', 'chunked', 'embedded', 'indexed', 'active', 'unchanged', 'failed')),
            reason       TEXT,
            at           TEXT NOT NULL
        );
        CREATE INDEX ingestion_steps_source ON ingestion_steps (source, seq);
        CREATE TABLE quarantine (
{schema.QUARANTINE_COLUMNS}
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        "0008_chunk_pages",
        """
        -- 1-based, inclusive pages a chunk covers in a paged source (PDF); NULL for
        -- other formats and for chunks stored before pages were recorded
        ALTER TABLE chunks ADD COLUMN page_start INTEGER CHECK (page_start >= 1);
        ALTER TABLE chunks ADD COLUMN page_end INTEGER CHECK (page_end >= page_start);
        """,
    ),
    # Index versions (veracity.index.sqlite.versions): the one index so far becomes
    # version 1 (its tables renamed to the ix1_ names veracity.index.sqlite.tables
    # gives every version), published; readers follow index_pointer.
    Migration(
        "0009_index_versions",
        f"""
        ALTER TABLE index_documents RENAME TO ix1_documents;
        ALTER TABLE index_document_roles RENAME TO ix1_document_roles;
        ALTER TABLE index_chunks RENAME TO ix1_chunks;
        ALTER TABLE index_tenants RENAME TO ix1_tenants;
        ALTER TABLE index_vector_tables RENAME TO ix1_vector_tables;
        ALTER TABLE index_meta RENAME TO ix1_meta;
        DROP INDEX index_documents_by_tenant;
        DROP INDEX index_documents_filter;
        DROP INDEX index_chunks_by_document;
        DROP INDEX index_chunks_by_tenant;
        CREATE INDEX ix1_documents_by_tenant ON ix1_documents (tenant, status);
        CREATE INDEX ix1_documents_filter ON ix1_documents (
            tenant, status, valid_from, valid_until, version_min_key, version_max_key,
            visibility, document_id
        );
        CREATE INDEX ix1_chunks_by_document ON ix1_chunks (doc_key, ordinal);
        CREATE INDEX ix1_chunks_by_tenant ON ix1_chunks (tenant_key, chunk_key);
        CREATE TABLE index_versions (
{schema.INDEX_VERSION_COLUMNS}
        );
        INSERT INTO index_versions (version, state, created_at, published_at)
            VALUES (1, 'published', strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'));
        CREATE TABLE index_pointer (            -- the version readers use; one row
            id         INTEGER PRIMARY KEY CHECK (id = 1),
            current    INTEGER NOT NULL REFERENCES index_versions (version),
            generation INTEGER NOT NULL         -- bumped by every index write, publish and rollback
        );
        INSERT INTO index_pointer (id, current, generation)
            SELECT 1, 1, CAST(value AS INTEGER) FROM ix1_meta WHERE key = 'generation';
        DELETE FROM ix1_meta WHERE key = 'generation';
        """,
    ),
    Migration(
        "0010_document_extra_metadata",
        """
        -- metadata keys that are not governance fields (JSON object), and the governance
        -- fields that took a documented default because the source gave none (JSON array)
        ALTER TABLE documents ADD COLUMN extra_metadata TEXT NOT NULL DEFAULT '{}';
        ALTER TABLE documents ADD COLUMN defaulted_fields TEXT NOT NULL DEFAULT '[]';
        """,
    ),
    # What a knowledge base remembers beyond documents (veracity.kb): its settings
    # (default tenant, ask defaults), where each source came from (for --prune and
    # explanations), and tombstones of deleted sources (a later ingest skips them).
    Migration(
        "0011_knowledge_base",
        """
        CREATE TABLE kb_settings (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL                 -- JSON
        ) WITHOUT ROWID;
        CREATE TABLE source_files (
            tenant     TEXT NOT NULL,
            source_id  TEXT NOT NULL,
            root       TEXT NOT NULL,           -- the folder given to ingest (absolute), or '' for a file
            path       TEXT NOT NULL,           -- relative to root (POSIX), or the file's absolute path
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant, source_id)
        ) WITHOUT ROWID;
        CREATE INDEX source_files_by_root ON source_files (root, path);
        CREATE TABLE tombstones (               -- no ids in clear: a deleted document leaves no name
            source_key     TEXT PRIMARY KEY,     -- sha256 of tenant and source id
            content_digest TEXT NOT NULL,        -- of the revision that was deleted
            deleted_at     TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        "0012_ledger_lifecycle_states",
        f"""
        -- the ledger also records files skipped on purpose and documents withdrawn or
        -- deleted after ingest, so a file's latest state is its real one
        CREATE TABLE ingestion_steps_new (
            seq          INTEGER PRIMARY KEY AUTOINCREMENT,
{schema.LEDGER_STEP_COLUMNS}
{schema.LEDGER_STATE_COLUMNS}
        );
        INSERT INTO ingestion_steps_new (seq, run_id, source, source_id, document_id, state, reason, at)
            SELECT seq, run_id, source, source_id, document_id, state, reason, at FROM ingestion_steps;
        DROP TABLE ingestion_steps;
        ALTER TABLE ingestion_steps_new RENAME TO ingestion_steps;
        CREATE INDEX ingestion_steps_source ON ingestion_steps (source, seq);
        CREATE INDEX ingestion_steps_source_id ON ingestion_steps (source_id, seq);
        """,
    ),
    # API keys of the HTTP service (veracity.kb.keys): the principal comes from the key alone.
    # Only a salted digest of the secret part is kept; the key is shown once, at creation.
    Migration(
        "0013_api_keys",
        """
        CREATE TABLE api_keys (
            key_id     TEXT PRIMARY KEY,            -- the public part of 'vk_<key_id>_<secret>'
            name       TEXT NOT NULL,
            tenant     TEXT NOT NULL,
            roles      TEXT NOT NULL,               -- JSON array, sorted
            operator   INTEGER NOT NULL CHECK (operator IN (0, 1)),
            salt       TEXT NOT NULL,               -- hex, per key
            digest     TEXT NOT NULL,               -- hex sha256 of salt and secret
            created_at TEXT NOT NULL,
            revoked_at TEXT
        ) WITHOUT ROWID;
        CREATE INDEX api_keys_by_tenant ON api_keys (tenant, name);
        """,
    ),
    # One number that moves with every change that can change an answer: documents (added,
    # withdrawn, retired, deleted, re-governed), the roles tenants define, the knowledge base's
    # settings (ask defaults). Answer caches key on it, so no cached answer outlives a change,
    # whichever process made it.
    Migration(
        "0014_catalog_revision",
        f"""
        CREATE TABLE catalog_revision (
            id       INTEGER PRIMARY KEY CHECK (id = 1),
            revision INTEGER NOT NULL
        );
        INSERT INTO catalog_revision (id, revision) VALUES (1, 1);
{_revision_triggers(("document", "documents"), ("roles", "tenant_roles"), ("settings", "kb_settings"))}
        """,
    ),
    # Layout and OCR on chunks (veracity.parse.pages), and what parsing each file found
    # (veracity.parse.diagnostics) on its ledger step. NULL for chunks and steps stored before.
    Migration(
        "0015_chunk_layout",
        """
        ALTER TABLE chunks ADD COLUMN boxes TEXT;           -- JSON [[page, x0, top, x1, bottom], ...]
        ALTER TABLE chunks ADD COLUMN ocr_confidence REAL CHECK (ocr_confidence BETWEEN 0 AND 1);
        ALTER TABLE chunks ADD COLUMN ocr_numbers TEXT;     -- JSON [[text, confidence], ...]
        ALTER TABLE ingestion_steps ADD COLUMN diagnostics TEXT;  -- JSON object, on parsed/failed steps
        """,
    ),
    # The injection detector's verdicts, judged at ingest (veracity.pipeline.injection.verdict_key:
    # a digest of the detector's version, the headings and the text; never the text itself).
    Migration(
        "0016_injection_verdicts",
        """
        CREATE TABLE injection_verdicts (
            key     TEXT PRIMARY KEY,
            signals TEXT NOT NULL           -- JSON list of signal names; [] for text that gives no orders
        ) WITHOUT ROWID;
        """,
    ),
    # The sources a knowledge base is kept in step with (veracity.sync, veracity.catalog.syncs).
    Migration("0017_sync_sources", SYNC_TABLES),
    # What each source's file was when last ingested (veracity.ingest.fingerprints): a file whose
    # bytes and ingest options are the same again is not parsed again.
    Migration("0018_source_fingerprints", SOURCE_FINGERPRINTS),
)

LEDGER: Final = """
CREATE TABLE IF NOT EXISTS _migrations (
    name       TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
)
"""
"""The table that records applied migrations (the same on SQLite and PostgreSQL)."""


def applied_migrations(connection: apsw.Connection) -> list[str]:
    """Names recorded in ``_migrations``, oldest first; empty for a fresh database."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
    ).fetchone()
    if not exists:
        return []
    rows = connection.execute("SELECT name FROM _migrations ORDER BY applied_at, name").fetchall()
    return [str(row[0]) for row in rows]


def refuse_unknown(recorded: Sequence[str], migrations: Sequence[Migration]) -> None:
    """``NewerFormatError`` when the database records a migration ``migrations`` does not name."""
    names = {migration.name for migration in migrations}
    unknown = [name for name in recorded if name not in names]
    if unknown:
        raise NewerFormatError(
            f"the database records migrations this code does not know: {unknown}; "
            "it was written by a newer veracity; upgrade veracity to open it"
        )


def missing(recorded: Sequence[str], migrations: Sequence[Migration]) -> list[str]:
    """Names of ``migrations`` not in ``recorded``, in order (after :func:`refuse_unknown`)."""
    refuse_unknown(recorded, migrations)
    return [migration.name for migration in migrations if migration.name not in recorded]


def apply_missing(
    run: Callable[[str, tuple[Any, ...]], object],
    recorded: Sequence[str],
    migrations: Sequence[Migration],
    failure: type[Exception],
) -> list[str]:
    """Run each of ``migrations`` not in ``recorded``, in order, each with the row recording it.

    ``run(sql, params)`` executes on the migrating transaction's connection (``?`` parameters;
    a migration's own SQL is run with none). A ``failure`` (the driver's error) becomes a
    ``MigrationError`` naming the step. Returns the names applied now.
    """
    refuse_unknown(recorded, migrations)
    done: list[str] = []
    for migration in migrations:
        if migration.name in recorded:
            continue
        try:
            run(migration.sql, ())
        except failure as exc:
            raise MigrationError(f"migration {migration.name!r} failed: {exc}") from exc
        run(
            "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
            (migration.name, datetime.now(UTC).isoformat(timespec="microseconds")),
        )
        done.append(migration.name)
    return done


def pending_migrations(
    connection: apsw.Connection, migrations: Sequence[Migration] = MIGRATIONS
) -> list[str]:
    """Names of the migrations the database lacks, read without taking any write lock.

    Raises ``NewerFormatError`` when the database records a migration this code
    does not know. Opening an up-to-date database for reading therefore never
    waits for a writer.
    """
    return missing(applied_migrations(connection), migrations)


def migrate(connection: apsw.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations the database lacks, in order; return the names applied now.

    Runs under one immediate (write-locked) transaction so two processes opening
    the same file cannot both apply a step. Raises ``MigrationError`` when the
    database records a migration not in ``migrations`` (``NewerFormatError``), or when a step fails
    (the database is then left as it was).
    """
    names = [migration.name for migration in migrations]
    if len(set(names)) != len(names):
        raise MigrationError(f"migration names must be unique, got {names}")
    if connection.in_transaction:
        raise MigrationError("migrate() must run outside a transaction")
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(LEDGER)
        done = apply_missing(connection.execute, applied_migrations(connection), migrations, apsw.Error)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:  # SQLite may have rolled back already
            connection.execute("ROLLBACK")
        raise
    return done
