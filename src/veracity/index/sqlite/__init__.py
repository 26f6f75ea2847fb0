"""The persistent search index in the knowledge-base file: per-tenant FTS5 and sqlite-vec.

- :mod:`.search`: ``SQLiteSearchIndex``, the ``SearchBackend`` on disk;
- :mod:`.filter`: the governance filter as SQL; :mod:`.views`: cached reads;
- :mod:`.writer` and :mod:`.sync`: keeping a version in step with the catalog;
- :mod:`.tables`, :mod:`.versions`: per-version tables and the publish pointer;
- :mod:`.records`, :mod:`.fts`, :mod:`.vectors`: row formats, FTS5 and vec0 tables;
- :mod:`.verify`: the named checks a version must pass before it is published.
"""
