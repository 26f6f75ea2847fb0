"""Parsing: one file into validated documents and their chunks (the knowledge base's ingest,
which decides what to read and stores it, is :mod:`veracity.ingest`).

- :mod:`.parsers` dispatches by format to :mod:`.markdown`, :mod:`.html`,
  :mod:`.pdf`, :mod:`.docx` (and plain text), all producing :mod:`.nodes`;
- :mod:`.front_matter` and :mod:`.metadata`: governance metadata from front
  matter, sidecars or a mapping file; :mod:`.documents`: identity and validation;
- :mod:`.chunking`: fixed, structural and contextual chunkers; :mod:`.pages`:
  PDF pages onto chunks;
- :mod:`.batch` loads many files with per-file rejection; :mod:`.walk` is the one folder
  walker; :mod:`.errors`: per-file errors.
"""
