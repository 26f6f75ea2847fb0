"""Migrations of existing index versions' tables (``ix<v>_…``) in PostgreSQL.

Each is one ``DO`` block that walks ``index_versions`` and converts the tables
of every version that has them to the layout :mod:`veracity.index.postgres.tables`
creates now (new versions are created in that layout directly). The reader
role and the tenant setting come from :mod:`.migrations`, which holds them.
"""

from __future__ import annotations

__all__ = ["index_layout", "postings_segments"]


def _each_version(variables: str, body: str) -> str:
    """A ``DO`` block running ``body`` for every index version, oldest first, with ``p`` (the
    version's table prefix) and ``postings`` (its postings table) set, and ``variables`` declared."""
    return f"""
    DO $$
    DECLARE
        v record; p text; postings text; {variables}
    BEGIN
        FOR v IN SELECT version FROM index_versions ORDER BY version LOOP
            p := 'ix' || v.version || '_';
            postings := p || 'postings';
{body.strip(chr(10))}
        END LOOP;
    END $$;
    """


def index_layout(reader_role: str, tenant_setting: str) -> str:
    """Existing index versions to the layout of :mod:`veracity.index.postgres.tables` (pg0007).

    Per version with tables: chunk and token counts on documents; postings that carry
    their document and chunk length (rebuilt sorted by tenant and term); no foreign
    keys; vector tables keep each vector's sign bits and no HNSW index.
    """
    return _each_version(
        "t record; renamed text;",
        f"""
            CONTINUE WHEN to_regclass(p || 'documents') IS NULL;
            EXECUTE format('ALTER TABLE %I ADD COLUMN IF NOT EXISTS n_chunks INTEGER NOT NULL DEFAULT 0, '
                           'ADD COLUMN IF NOT EXISTS n_tokens BIGINT NOT NULL DEFAULT 0', p || 'documents');
            EXECUTE format('UPDATE %I AS d SET n_chunks = c.n, n_tokens = c.t '
                           'FROM (SELECT doc_key, count(*) AS n, sum(n_tokens) AS t FROM %I '
                           'GROUP BY doc_key) AS c WHERE c.doc_key = d.doc_key',
                           p || 'documents', p || 'chunks');
            EXECUTE format('ALTER TABLE %I DROP CONSTRAINT IF EXISTS %I', p || 'chunks',
                           p || 'chunks_doc_key_fkey');
            EXECUTE format('ALTER TABLE %I DROP CONSTRAINT IF EXISTS %I', p || 'document_roles',
                           p || 'document_roles_doc_key_fkey');
            renamed := p || 'postings_old';
            EXECUTE format('ALTER TABLE %I RENAME TO %I', postings, renamed);
            EXECUTE format('CREATE TABLE %I AS SELECT o.doc_tenant, o.term, c.doc_key, o.chunk_key, o.tf, '
                           'c.n_tokens FROM %I AS o JOIN %I AS c USING (chunk_key) '
                           'ORDER BY o.doc_tenant, o.term, o.chunk_key',
                           postings, renamed, p || 'chunks');
            EXECUTE format('DROP TABLE %I', renamed);
            EXECUTE format('ALTER TABLE %I ALTER COLUMN doc_tenant SET NOT NULL, '
                           'ALTER COLUMN term SET NOT NULL, ALTER COLUMN doc_key SET NOT NULL, '
                           'ALTER COLUMN chunk_key SET NOT NULL, '
                           'ALTER COLUMN tf SET NOT NULL, ALTER COLUMN n_tokens SET NOT NULL', postings);
            EXECUTE format('CREATE INDEX %I ON %I (doc_tenant, term)', postings || '_by_term', postings);
            EXECUTE format('CREATE INDEX %I ON %I USING brin (doc_key) WITH (autosummarize = on)',
                           postings || '_by_document', postings);
            EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', postings);
            EXECUTE format('CREATE POLICY tenant_rows ON %I USING '
                           '(doc_tenant = current_setting(''{tenant_setting}'', true))', postings);
            EXECUTE format('GRANT SELECT ON %I TO {reader_role}', postings);
            FOR t IN EXECUTE format('SELECT table_name, dim FROM %I', p || 'vector_tables') LOOP
                EXECUTE format('ALTER TABLE %I DROP CONSTRAINT IF EXISTS %I', t.table_name,
                               t.table_name || '_chunk_key_fkey');
                EXECUTE format('DROP INDEX IF EXISTS %I', t.table_name || '_hnsw');
                EXECUTE format('ALTER TABLE %I ADD COLUMN bits bit(%s)', t.table_name, t.dim);
                EXECUTE format('UPDATE %I SET bits = binary_quantize(embedding)::bit(%s)',
                               t.table_name, t.dim);
                EXECUTE format('ALTER TABLE %I ALTER COLUMN bits SET NOT NULL, '
                               'ALTER COLUMN embedding SET STORAGE EXTERNAL', t.table_name);
            END LOOP;
""",
    )


def postings_segments(reader_role: str, tenant_setting: str) -> str:
    """Postings one row per (tenant, term, chunk) to one segment per tenant (pg0008).

    Each tenant's postings become one segment (its chunk count and key range
    recorded in ``ix<v>_segments``): per term, the chunk keys ascending and the
    term frequencies in the same order; later batches add segments beside it.
    """
    return _each_version(
        "segments text; old text;",
        f"""
            segments := p || 'segments';
            CONTINUE WHEN to_regclass(postings) IS NULL OR to_regclass(segments) IS NOT NULL;
            old := p || 'postings_rows';
            EXECUTE format('ALTER TABLE %I RENAME TO %I', postings, old);
            EXECUTE format('DROP INDEX IF EXISTS %I', postings || '_by_term');
            EXECUTE format('DROP INDEX IF EXISTS %I', postings || '_by_document');
            EXECUTE format('CREATE TABLE %I (doc_tenant TEXT NOT NULL, term TEXT NOT NULL, '
                           'segment BIGINT NOT NULL, keys BIGINT[] NOT NULL, tfs INTEGER[] NOT NULL, '
                           'PRIMARY KEY (doc_tenant, term, segment))', postings);
            EXECUTE format('CREATE TABLE %I (segment BIGINT PRIMARY KEY, doc_tenant TEXT NOT NULL, '
                           'n_chunks INTEGER NOT NULL, first_key BIGINT NOT NULL, '
                           'last_key BIGINT NOT NULL)', segments);
            EXECUTE format('INSERT INTO %I SELECT row_number() OVER (ORDER BY doc_tenant), doc_tenant, '
                           'count(DISTINCT chunk_key), min(chunk_key), max(chunk_key) '
                           'FROM %I GROUP BY doc_tenant', segments, old);
            EXECUTE format('INSERT INTO %I SELECT o.doc_tenant, o.term, s.segment, '
                           'array_agg(o.chunk_key ORDER BY o.chunk_key), '
                           'array_agg(o.tf ORDER BY o.chunk_key) '
                           'FROM %I AS o JOIN %I AS s USING (doc_tenant) '
                           'GROUP BY o.doc_tenant, o.term, s.segment', postings, old, segments);
            EXECUTE format('DROP TABLE %I', old);
            EXECUTE format('CREATE INDEX %I ON %I (segment)', postings || '_by_segment', postings);
            EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', postings);
            EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', segments);
            EXECUTE format('CREATE POLICY tenant_rows ON %I USING '
                           '(doc_tenant = current_setting(''{tenant_setting}'', true))', postings);
            EXECUTE format('CREATE POLICY tenant_rows ON %I USING '
                           '(doc_tenant = current_setting(''{tenant_setting}'', true))', segments);
            EXECUTE format('GRANT SELECT ON %I TO {reader_role}', postings);
            EXECUTE format('GRANT SELECT ON %I TO {reader_role}', segments);
""",
    )
