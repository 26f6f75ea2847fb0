"""Files an ingest need not parse again: the same bytes, the same sidecar, the same options.

Parsing is most of an ingest's time, and an ingest of a folder that changed in a few
files parses every file again only to find that most are unchanged. A file's
*fingerprint* is the sha256 of everything its parse depends on: its bytes, the bytes
of its sidecar metadata (``NAME.meta.yaml`` or ``STEM.meta.yaml``), the ingest's
options (tenant, metadata mapping, governance defaults, input limits, OCR settings)
and this veracity's version. ``source_files`` keeps, per source, the fingerprint of
the file it was last ingested from, the document it came to and its parse
diagnostics (:func:`veracity.catalog.sources.recorded_files`).

A file whose fingerprint is the recorded one is not parsed when the document it came
to is still the latest revision of its source: that document stands in for the parse
(:func:`recorded_parse`), and the writer decides it as it decides a parsed file, so
the outcome (``unchanged``, or ``restored`` with ``--restore``), the ledger steps
(``parsed`` with the recorded diagnostics, then ``unchanged``) and the tombstone check
are the same. The parse would give the same document but for what the catalog changed
since (its status, which deciding reads from the catalog anyway) and a ``valid_from``
taken from the file's modification time (which does not make a revision). Otherwise
(another revision came since, the document was deleted) the file is parsed.

Files with pages (PDF, images) are always parsed: their text can depend on an OCR
engine that was installed since. So are files that declare a status other than active
(they keep no fingerprint), and, with ``--restore``, a file whose withdrawn document took
its status from the file: the recorded document has the catalog's status, and only the
file says whether a command withdrew it (``--restore`` brings it back) or the file did
(it stays withdrawn).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from .._version import __version__
from ..catalog.sources import RecordedFile
from ..parse.diagnostics import ParseDiagnostics
from ..parse.metadata import SIDECAR_SUFFIX
from ..parse.nodes import ParsedSource

__all__ = ["FORMAT", "file_fingerprint", "options_key", "recorded_parse"]

FORMAT: Final = "veracity.fingerprint/1"
"""Changes whenever what goes into a fingerprint does."""


def options_key(options: Mapping[str, Any]) -> str:
    """The part of every fingerprint of one ingest that its options make (see the module docstring)."""
    described = "\x1f".join(f"{name}={options[name]!r}" for name in sorted(options))
    return hashlib.sha256(f"{FORMAT}\x1f{__version__}\x1f{described}".encode()).hexdigest()


def file_fingerprint(path: Path, key: str) -> str:
    """The fingerprint of the file at ``path`` under the options ``key`` (:func:`options_key`)."""
    name = os.fspath(path)
    digest = hashlib.sha256(key.encode())
    for sidecar in (name + SIDECAR_SUFFIX, os.path.splitext(name)[0] + SIDECAR_SUFFIX):
        digest.update(b"\x00sidecar\x00")
        try:
            with open(sidecar, "rb") as handle:
                digest.update(handle.read())
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            pass
    digest.update(b"\x00file\x00")
    with open(name, "rb") as handle:
        digest.update(handle.read())
    return digest.hexdigest()


def recorded_parse(recorded: RecordedFile) -> ParsedSource:
    """What the writer reads of a parse, for a file not parsed again: the recorded diagnostics."""
    return ParsedSource(body="", nodes=(), diagnostics=ParseDiagnostics.from_dict(recorded.diagnostics))
