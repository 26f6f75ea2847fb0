"""PostgreSQL's named, recorded schema migrations (the SQLite ones are :mod:`veracity.catalog.migrations`).

The tables and columns are those the SQLite catalog has after its last
migration (documents, chunks, roles, the ingestion ledger, settings, source
files, tombstones, API keys, the catalog revision, the index registry, the
injection verdicts), so the SQL shared by both backends reads and writes
either. Datetimes stay ISO-8601 UTC text, as in SQLite, so they compare the
same way. What PostgreSQL adds:

- a ``tenant`` column on the injection verdicts (SQLite's serve every tenant);
- a ``doc_tenant`` column on chunks, document roles and facts, so every
  tenant-scoped row can be checked on its own: the writer fills it with the row,
  and a foreign key on ``(document_id, doc_tenant)`` holds it equal to the
  document's tenant (pg0010; a row-level trigger looked it up before);
- **row-level security**: each tenant-scoped table (and, as they are created,
  each index version's tables, :mod:`veracity.index.postgres.tables`) has a
  policy that shows only the rows of ``current_setting('veracity.tenant')``.
  The tables' owner (the writer) is not subject to it; the role
  :data:`READER_ROLE` (no ``BYPASSRLS``) may only ``SELECT`` what an answer
  reads, and sees nothing while no tenant is set;
- ``writer_holder``: who holds the writer lock (an advisory lock), for the
  "waiting for another writer" message.

:func:`migrate` applies what a database lacks, each step with the row that
records it, under a transaction-scoped advisory lock so two processes never
apply a step twice. A database recording a migration this code does not know
is refused with :class:`~veracity.model.errors.NewerFormatError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .. import schema
from ..migrations import LEDGER, Migration, apply_missing, missing
from ..schema import CONVERSATION_TABLES
from ..sources import SOURCE_FINGERPRINTS
from ..syncs import SYNC_TABLES
from .index_layouts import index_layout, postings_segments

__all__ = [
    "MIGRATIONS",
    "OWNED_TABLES",
    "READER_ROLE",
    "TENANT_SETTING",
    "applied_migrations",
    "migrate",
    "pending_migrations",
]

READER_ROLE: Final = "veracity_reader"
"""The role answers read as: ``SELECT`` on what an ask reads, row-level security applies."""

TENANT_SETTING: Final = "veracity.tenant"
"""The setting every row-level security policy compares ``tenant`` with (set per transaction)."""

MIGRATION_LOCK: Final = 7_303_011_001
"""Advisory lock key held while migrating (any number unique to veracity)."""

_TENANT_COLUMNS = {
    "documents": "tenant", "tenant_roles": "tenant", "source_files": "tenant",
    # rows owned by a document name its tenant apart ("tenant" alone would clash in joins)
    "chunks": "doc_tenant", "document_roles": "doc_tenant", "document_facts": "doc_tenant",
}  # fmt: skip
_TENANT_TABLES = tuple(_TENANT_COLUMNS)
_READ_TABLES = (*_TENANT_TABLES, "kb_settings", "catalog_revision", "index_versions", "index_pointer")


def _policies() -> str:
    parts = [
        f"""
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
                CREATE ROLE {READER_ROLE} NOLOGIN NOBYPASSRLS;
            END IF;
        END $$;
        GRANT USAGE ON SCHEMA public TO {READER_ROLE};
        """
    ]
    for table in _TENANT_TABLES:
        parts.append(
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;\n"
            f"CREATE POLICY tenant_rows ON {table} "
            f"USING ({_TENANT_COLUMNS[table]} = current_setting('{TENANT_SETTING}', true));"
        )
    parts.append(f"GRANT SELECT ON {', '.join(_READ_TABLES)} TO {READER_ROLE};")
    return "\n".join(parts)


OWNED_TABLES: Final = ("chunks", "document_roles", "document_facts")
"""The rows a document owns, each carrying the document's tenant as ``doc_tenant``."""


def _document_tenant_keys() -> str:
    """pg0010: ``doc_tenant`` written with each row a document owns, held by a foreign key.

    pg0001's trigger ran a query for every chunk, role and fact inserted to copy the
    document's tenant into it. Now the writer supplies it (:func:`veracity.catalog.rows.insert_documents`)
    and the foreign key ``(document_id, doc_tenant) → documents (document_id, tenant)``,
    cascading deletes and updates as the one on ``document_id`` it replaces did, refuses a
    row whose tenant is not its document's; the column has no default, so a writer that
    leaves it out is refused too. Rows the trigger filled already agree; any that do not
    are set to their document's tenant first.
    """
    parts = ["ALTER TABLE documents ADD CONSTRAINT documents_document_tenant UNIQUE (document_id, tenant);"]
    for table in OWNED_TABLES:
        parts.append(
            f"""
            DROP TRIGGER {table}_tenant ON {table};
            UPDATE {table} AS r SET doc_tenant = d.tenant FROM documents AS d
                WHERE d.document_id = r.document_id AND r.doc_tenant <> d.tenant;
            ALTER TABLE {table} DROP CONSTRAINT {table}_document_id_fkey,
                ALTER COLUMN doc_tenant DROP DEFAULT,
                ADD CONSTRAINT {table}_document_tenant_fkey FOREIGN KEY (document_id, doc_tenant)
                    REFERENCES documents (document_id, tenant) ON DELETE CASCADE ON UPDATE CASCADE;
            """
        )
    parts.append("DROP FUNCTION veracity_document_tenant();")
    return "\n".join(parts)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "pg0001_catalog",
        f"""
        CREATE TABLE documents (
            seq              BIGSERIAL PRIMARY KEY,
{schema.DOCUMENT_COLUMNS}
            catalog_revision BIGINT NOT NULL DEFAULT 1 CHECK (catalog_revision >= 1),
            stored_at        TEXT NOT NULL,
            updated_at       TEXT NOT NULL,
            extra_metadata   TEXT NOT NULL DEFAULT '{{}}',
            defaulted_fields TEXT NOT NULL DEFAULT '[]'
        );
{schema.DOCUMENT_INDEXES}
        CREATE TABLE document_roles (
{schema.DOCUMENT_ROLE_COLUMNS}
            doc_tenant  TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (document_id, ordinal)
        );
        CREATE TABLE document_facts (
{schema.DOCUMENT_FACT_COLUMNS}
            doc_tenant  TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (document_id, ordinal)
        );
        CREATE INDEX document_facts_by_fact ON document_facts (fact_id);
        CREATE TABLE chunks (
            seq             BIGSERIAL PRIMARY KEY,
{schema.CHUNK_COLUMNS}
            page_start      INTEGER CHECK (page_start >= 1),
            page_end        INTEGER CHECK (page_end >= page_start),
            doc_tenant      TEXT NOT NULL DEFAULT '',
            UNIQUE (document_id, ordinal)
        );
        -- rows owned by a document carry its tenant, so row-level security checks each row alone
        CREATE FUNCTION veracity_document_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.doc_tenant := (SELECT tenant FROM documents WHERE document_id = NEW.document_id);
            RETURN NEW;
        END $$;
        CREATE TRIGGER chunks_tenant BEFORE INSERT ON chunks
            FOR EACH ROW EXECUTE FUNCTION veracity_document_tenant();
        CREATE TRIGGER document_roles_tenant BEFORE INSERT ON document_roles
            FOR EACH ROW EXECUTE FUNCTION veracity_document_tenant();
        CREATE TRIGGER document_facts_tenant BEFORE INSERT ON document_facts
            FOR EACH ROW EXECUTE FUNCTION veracity_document_tenant();
        CREATE TABLE tenant_roles (
            tenant TEXT NOT NULL,
            role   TEXT NOT NULL,
            PRIMARY KEY (tenant, role)
        );
        """,
    ),
    Migration(
        "pg0002_knowledge_base",
        f"""
        CREATE TABLE ingestion_steps (
            seq          BIGSERIAL PRIMARY KEY,
{schema.LEDGER_STEP_COLUMNS}
{schema.LEDGER_STATE_COLUMNS}
        );
        CREATE INDEX ingestion_steps_source ON ingestion_steps (source, seq);
        CREATE INDEX ingestion_steps_source_id ON ingestion_steps (source_id, seq);
        CREATE TABLE quarantine (
{schema.QUARANTINE_COLUMNS}
        );
        CREATE TABLE kb_settings (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE source_files (
            tenant     TEXT NOT NULL,
            source_id  TEXT NOT NULL,
            root       TEXT NOT NULL,
            path       TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant, source_id)
        );
        CREATE INDEX source_files_by_root ON source_files (root, path);
        CREATE TABLE tombstones (
            source_key     TEXT PRIMARY KEY,
            content_digest TEXT NOT NULL,
            deleted_at     TEXT NOT NULL
        );
        CREATE TABLE api_keys (
            key_id     TEXT PRIMARY KEY,
            name       TEXT NOT NULL,
            tenant     TEXT NOT NULL,
            roles      TEXT NOT NULL,
            operator   INTEGER NOT NULL CHECK (operator IN (0, 1)),
            salt       TEXT NOT NULL,
            digest     TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        );
        CREATE INDEX api_keys_by_tenant ON api_keys (tenant, name);
        -- moves with every change that can change an answer (answer caches key on it)
        CREATE TABLE catalog_revision (
            id       INTEGER PRIMARY KEY CHECK (id = 1),
            revision BIGINT NOT NULL
        );
        INSERT INTO catalog_revision (id, revision) VALUES (1, 1);
        CREATE FUNCTION veracity_bump_catalog_revision() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE catalog_revision SET revision = revision + 1 WHERE id = 1;
            RETURN NULL;
        END $$;
        CREATE TRIGGER catalog_revision_documents AFTER INSERT OR UPDATE OR DELETE ON documents
            FOR EACH STATEMENT EXECUTE FUNCTION veracity_bump_catalog_revision();
        CREATE TRIGGER catalog_revision_roles AFTER INSERT OR UPDATE OR DELETE ON tenant_roles
            FOR EACH STATEMENT EXECUTE FUNCTION veracity_bump_catalog_revision();
        CREATE TRIGGER catalog_revision_settings AFTER INSERT OR UPDATE OR DELETE ON kb_settings
            FOR EACH STATEMENT EXECUTE FUNCTION veracity_bump_catalog_revision();
        CREATE TABLE writer_holder (           -- who holds the writer lock now (see PostgresStore.writer)
            id      INTEGER PRIMARY KEY CHECK (id = 1),
            pid     INTEGER NOT NULL,
            host    TEXT NOT NULL,
            command TEXT NOT NULL,
            since   TEXT NOT NULL
        );
        """,
    ),
    Migration(
        "pg0003_index_registry",
        f"""
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE index_versions (
{schema.INDEX_VERSION_COLUMNS}
        );
        INSERT INTO index_versions (version, state, created_at, published_at)
            VALUES (1, 'published', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                    to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'));
        CREATE TABLE index_pointer (
            id         INTEGER PRIMARY KEY CHECK (id = 1),
            current    INTEGER NOT NULL REFERENCES index_versions (version),
            generation BIGINT NOT NULL
        );
        INSERT INTO index_pointer (id, current, generation) VALUES (1, 1, 0);
        -- manifest.json of a directory knowledge base lives here for a database one
        CREATE TABLE kb_manifest (
            id       INTEGER PRIMARY KEY CHECK (id = 1),
            manifest TEXT NOT NULL
        );
        """,
    ),
    Migration("pg0004_row_level_security", _policies()),
    # as SQLite's 0015_chunk_layout: layout and OCR on chunks, parse diagnostics on ledger steps
    Migration(
        "pg0005_chunk_layout",
        """
        ALTER TABLE chunks ADD COLUMN boxes TEXT;
        ALTER TABLE chunks ADD COLUMN ocr_confidence DOUBLE PRECISION CHECK (ocr_confidence BETWEEN 0 AND 1);
        ALTER TABLE chunks ADD COLUMN ocr_numbers TEXT;
        ALTER TABLE ingestion_steps ADD COLUMN diagnostics TEXT;
        """,
    ),
    # the service workers' shared answer cache and rate-limit buckets (veracity.catalog.serving).
    # Answers are logged, so a streaming replica has them for the reader role to read (unlogged
    # tables cannot be read during recovery); buckets are written on every request and only by
    # the owner on the primary, so they skip the WAL (a crash refills them).
    Migration(
        "pg0006_serving",
        f"""
        CREATE TABLE serving_answers (
            key              TEXT PRIMARY KEY,
            tenant           TEXT NOT NULL,
            index_generation BIGINT NOT NULL,
            catalog_revision BIGINT NOT NULL,
            written          DOUBLE PRECISION NOT NULL,
            body             TEXT NOT NULL
        );
        CREATE INDEX serving_answers_written ON serving_answers (written);
        ALTER TABLE serving_answers ENABLE ROW LEVEL SECURITY;
        CREATE POLICY tenant_rows ON serving_answers
            USING (tenant = current_setting('{TENANT_SETTING}', true));
        GRANT SELECT ON serving_answers TO {READER_ROLE};
        CREATE UNLOGGED TABLE serving_buckets (
            key_id TEXT PRIMARY KEY,
            tokens DOUBLE PRECISION NOT NULL,
            at     DOUBLE PRECISION NOT NULL
        );
        """,
    ),
    # the index layout of veracity.index.postgres.tables: BM25 reads only the query terms'
    # postings of eligible documents, dense search ranks stored sign bits first (issue #36)
    Migration("pg0007_index_layout", index_layout(READER_ROLE, TENANT_SETTING)),
    # postings in segments (veracity.index.postgres.segments): a term's chunks are read from a
    # few array rows by the primary key instead of one row per chunk (issue #36)
    Migration("pg0008_postings_segments", postings_segments(READER_ROLE, TENANT_SETTING)),
    # as SQLite's 0016_injection_verdicts (veracity.catalog.verdicts), each row naming the tenant
    # of the text it judged: an ask reading as the reader role sees its tenant's verdicts only
    Migration(
        "pg0009_injection_verdicts",
        f"""
        CREATE TABLE injection_verdicts (
            key     TEXT NOT NULL,          -- veracity.pipeline.injection.verdict_key: never the text
            tenant  TEXT NOT NULL,
            signals TEXT NOT NULL,          -- JSON list of signal names; [] for text that gives no orders
            PRIMARY KEY (key, tenant)
        );
        ALTER TABLE injection_verdicts ENABLE ROW LEVEL SECURITY;
        CREATE POLICY tenant_rows ON injection_verdicts
            USING (tenant = current_setting('{TENANT_SETTING}', true));
        GRANT SELECT ON injection_verdicts TO {READER_ROLE};
        """,
    ),
    # a document's rows carry its tenant as they are written (no trigger looking it up per row)
    Migration("pg0010_document_tenant_keys", _document_tenant_keys()),
    # as SQLite's 0017_sync_sources: the same portable tables (veracity.catalog.syncs)
    Migration("pg0011_sync_sources", SYNC_TABLES),
    # the HTTP service's conversations (veracity.catalog.conversations; a directory keeps them in
    # a side file): owned by one API key each, read and written by the owner's pool only
    Migration("pg0012_conversations", CONVERSATION_TABLES),
    # as SQLite's 0018_source_fingerprints (veracity.catalog.sources)
    Migration("pg0013_source_fingerprints", SOURCE_FINGERPRINTS),
)


def applied_migrations(connection: Any) -> list[str]:
    """Names recorded in ``_migrations``, oldest first; empty for a fresh database."""
    if connection.execute("SELECT to_regclass('_migrations')").fetchone()[0] is None:
        return []
    rows = connection.execute("SELECT name FROM _migrations ORDER BY applied_at, name").fetchall()
    return [str(row[0]) for row in rows]


def pending_migrations(connection: Any, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Names of the migrations the database lacks (``NewerFormatError`` for unknown recorded ones)."""
    return missing(applied_migrations(connection), migrations)


def migrate(raw: Any, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply what the database lacks, in one transaction on the psycopg connection ``raw``.

    Returns the names applied now; ``MigrationError`` (nothing applied) when a step fails.
    """
    import psycopg

    from .connection import to_pyformat

    def run(sql: str, params: tuple[Any, ...]) -> object:
        # a migration's own SQL goes as written (its '%' are PL/pgSQL's, not parameters)
        return raw.execute(to_pyformat(sql), params) if params else raw.execute(sql)

    with raw.transaction():
        raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        raw.execute(LEDGER)
        recorded = [str(r[0]) for r in raw.execute("SELECT name FROM _migrations").fetchall()]
        return apply_missing(run, recorded, migrations, psycopg.Error)
