"""The catalog's table columns both dialects share, written once for both migration lists.

SQLite's migrations (:mod:`veracity.catalog.migrations`) and PostgreSQL's
(:mod:`veracity.catalog.postgres.migrations`) differ in how a table gets its row key
(``INTEGER PRIMARY KEY AUTOINCREMENT`` / ``BIGSERIAL``), in SQLite's ``WITHOUT ROWID`` and in
what PostgreSQL adds for row-level security; the columns between are these fragments, so a
column changes in one place. Changing one changes only databases created afterwards: a
migration is applied once, recorded by name.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CHUNK_COLUMNS",
    "CONVERSATION_TABLES",
    "DOCUMENT_COLUMNS",
    "DOCUMENT_FACT_COLUMNS",
    "DOCUMENT_INDEXES",
    "DOCUMENT_ROLE_COLUMNS",
    "INDEX_VERSION_COLUMNS",
    "LEDGER_STATE_COLUMNS",
    "LEDGER_STEP_COLUMNS",
    "QUARANTINE_COLUMNS",
]

DOCUMENT_COLUMNS: Final = """
            document_id      TEXT NOT NULL UNIQUE,
            source_id        TEXT NOT NULL,
            revision         TEXT NOT NULL,
            content_digest   TEXT NOT NULL,
            title            TEXT NOT NULL,
            source_type      TEXT NOT NULL,
            tenant           TEXT NOT NULL,
            version_min      TEXT,
            version_max      TEXT,
            valid_from       TEXT NOT NULL,                       -- ISO-8601 UTC
            valid_until      TEXT,                                -- ISO-8601 UTC
            status           TEXT NOT NULL CHECK (status IN ('active', 'retired', 'withdrawn')),
            visibility       TEXT NOT NULL,
            trust            TEXT NOT NULL,
            language         TEXT NOT NULL,
            body             TEXT NOT NULL,"""
"""``documents`` after its row key, up to ``catalog_revision`` (whose integer type differs)."""

DOCUMENT_INDEXES: Final = """
        CREATE INDEX documents_by_source ON documents (source_id, seq);
        CREATE INDEX documents_by_tenant ON documents (tenant, status);"""

DOCUMENT_ROLE_COLUMNS: Final = """
            document_id TEXT NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
            ordinal     INTEGER NOT NULL,
            role        TEXT NOT NULL,"""

DOCUMENT_FACT_COLUMNS: Final = """
            document_id TEXT NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
            ordinal     INTEGER NOT NULL,
            fact_id     TEXT NOT NULL,
            quote       TEXT NOT NULL,
            stance      TEXT NOT NULL DEFAULT 'supports',"""

CHUNK_COLUMNS: Final = """
            chunk_id        TEXT NOT NULL UNIQUE,
            document_id     TEXT NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
            document_digest TEXT NOT NULL,
            ordinal         INTEGER NOT NULL,
            heading_path    TEXT NOT NULL,         -- JSON array of strings
            kind            TEXT NOT NULL,
            "start"         INTEGER NOT NULL,
            "end"           INTEGER NOT NULL,
            text            TEXT NOT NULL,
            context_prefix  TEXT NOT NULL DEFAULT '',
            fact_ids        TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings"""
"""``chunks`` after its row key, up to the columns later migrations added."""

LEDGER_STEP_COLUMNS: Final = """
            run_id       TEXT NOT NULL,
            source       TEXT NOT NULL,
            source_id    TEXT,
            document_id  TEXT,"""
"""``ingestion_steps`` after its row key, before ``state`` (whose allowed values grew)."""

LEDGER_STATE_COLUMNS: Final = """
            state        TEXT NOT NULL CHECK (state IN
                ('discovered', 'parsed', 'chunked', 'embedded', 'indexed', 'active', 'unchanged', 'failed',
                 'skipped', 'withdrawn', 'retired', 'deleted')),
            reason       TEXT,
            at           TEXT NOT NULL"""
"""``ingestion_steps`` from ``state`` on, as of ``0012_ledger_lifecycle_states`` / ``pg0002``."""

QUARANTINE_COLUMNS: Final = """
            source  TEXT PRIMARY KEY,
            reason  TEXT NOT NULL,
            run_id  TEXT NOT NULL,
            at      TEXT NOT NULL"""

INDEX_VERSION_COLUMNS: Final = """
            version      INTEGER PRIMARY KEY,
            state        TEXT NOT NULL CHECK (state IN
                ('building', 'verified', 'published', 'retired', 'rolled-back', 'failed', 'dropped')),
            created_at   TEXT NOT NULL,
            verified_at  TEXT,
            published_at TEXT,
            ended_at     TEXT,
            owner        TEXT,                     -- host:pid of the process building it
            reason       TEXT,                     -- why it failed or was dropped
            embedder     TEXT,                     -- veracity.index.embedders name, when known
            manifest     TEXT                      -- JSON: what it was built from and holds"""

# The service's conversations, their turns and feedback: the same statement makes the side file
# beside a SQLite catalog (veracity.catalog.conversations) and PostgreSQL's migration pg0012.
CONVERSATION_TABLES: Final = """
CREATE TABLE IF NOT EXISTS conversations (
    id         TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    key_id     TEXT NOT NULL,           -- the API key that owns it: no other key reads it
    title      TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS conversation_turns (
    conversation_id TEXT NOT NULL,
    turn            INTEGER NOT NULL,
    question        TEXT NOT NULL,      -- as written
    resolved        TEXT NOT NULL,      -- as asked (resolved against the turn before)
    version         TEXT,
    as_of           TEXT NOT NULL,
    carried         TEXT NOT NULL,      -- JSON: what came from the turn before
    body            TEXT NOT NULL,      -- JSON: the answer as served
    asked_at        TEXT NOT NULL,
    PRIMARY KEY (conversation_id, turn)
);
CREATE TABLE IF NOT EXISTS conversation_feedback (
    conversation_id TEXT NOT NULL,
    turn            INTEGER NOT NULL,
    tenant          TEXT NOT NULL,
    key_id          TEXT NOT NULL,
    roles           TEXT NOT NULL,      -- JSON list: the principal the answer was given to
    rating          TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    comment         TEXT NOT NULL,
    catalog_state   TEXT NOT NULL,      -- JSON: index generation and catalog revision when rated
    rated_at        TEXT NOT NULL,
    PRIMARY KEY (conversation_id, turn)
);
"""
