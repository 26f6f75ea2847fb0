"""Derived, rebuildable search indexes: lexical BM25 (and, later, dense vectors)."""
