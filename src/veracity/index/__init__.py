"""Derived, rebuildable search indexes over the catalog.

- :mod:`.lexical` (BM25) and :mod:`.dense` (exact vector search, the
  ``Embedder`` protocol); :mod:`.embedders`: ``use`` (default), ``e5``, fake;
- :mod:`.snapshot`: the ``SearchBackend`` protocol and an in-memory snapshot;
- :mod:`.sqlite`: the persistent index inside the knowledge-base file and its
  versions.
"""
