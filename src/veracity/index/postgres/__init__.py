"""The search index in PostgreSQL: BM25 in SQL over postings, sign bits and floats, row-level security.

- :mod:`.tables`: each index version's tables (named as ``veracity.index.sqlite.tables.IndexTables``);
- :mod:`.vectors`: ``vector(dim)`` values in and out (binary, as numpy);
- :mod:`.writer`: adding, updating and removing documents (the write half ``IndexWriter`` drives);
- :mod:`.search`: ``PostgresSearchIndex``, the ``SearchBackend`` in PostgreSQL.
"""
