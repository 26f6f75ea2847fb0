"""Ingest: what a knowledge base reads and how it stores it — scan the sources (files, folders,
their ``tenant.yaml``), load each file (parse, chunk, judge for injection), write the documents
and their index in batches, honour tombstones, prune what left a folder.

- :mod:`.run`: :func:`~.run.ingest_paths`, the whole ingest, and its report;
- :mod:`.sources`: which files, what is skipped; :mod:`.loading`: one file to documents and
  chunks (in worker processes); :mod:`.file_parts`: writing them, with revisions and tombstones;
- :mod:`.tenants`: tenants, roles and ask defaults from ``tenant.yaml``; :mod:`.prune` and
  :mod:`.removal`: withdrawing or deleting what left a folder; :mod:`.verdicts`: injection
  verdicts judged as text enters; :mod:`.writing`: the writer lock held across a whole write.

Parsing one file is :mod:`veracity.parse`; the knowledge base's API (:mod:`veracity.kb`) calls
this package.
"""
