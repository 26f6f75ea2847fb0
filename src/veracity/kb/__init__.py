"""A knowledge base on disk: one directory with ``catalog.sqlite`` and ``manifest.json``.

- :mod:`.directory`: create, open, the manifest, the demo knowledge base;
- :mod:`.ingest`: files into the catalog and the index, with the ledger;
- :mod:`.lifecycle`: withdraw, retire, delete, status; :mod:`.events`: ordered
  change events;
- :mod:`.reindex`: index versions (build → verify → publish, rollback).
"""
