"""Which files an ingest reads, what it skips, and where each source came from.

:func:`scan_sources` walks the given files and folders in sorted order. It
reads files whose suffix a parser knows (:func:`veracity.parse.parsers.known_suffixes`)
and the ``tenant.yaml`` of a folder; it never descends into hidden folders
(``.vitepress``, ``.git``, ``.overrides``…) or ``node_modules``, and counts
everything else it skipped by suffix, so a summary can say "skipped 12 files:
7 .png, 3 .ts, 2 .vue". Sidecars (``NAME.meta.yaml``) are metadata, not skips.

Symbolic links: a link to a file inside the ingested folder is read; a link
to a folder inside it is not walked (its files are read under their own
paths); a link that leads outside the folder is not followed unless
``follow_symlinks``; a broken link and a link loop are reported. A folder
with no files at all is reported as empty.

The ``source_files`` table remembers, per tenant and source id, the folder it
was ingested from and its path there: ``ingest --prune`` uses it to find
sources whose files have gone, explanations and ``docs list`` show the path.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import apsw

from ..catalog.sources import RecordedFile, record_source_paths
from ..model.errors import NotFoundError
from ..parse.metadata import SIDECAR_SUFFIX
from ..parse.parsers import IMAGE_SUFFIXES, known_suffixes
from ..parse.walk import SKIPPED_FOLDERS, walk_folder

__all__ = [
    "SKIPPED_FOLDERS",
    "SourceFile",
    "SourceScan",
    "record_source",
    "record_sources",
    "scan_sources",
]

TENANT_FILE: Final = "tenant.yaml"


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file to ingest: its name in the ledger, where it is, and the folder it was found in.

    ``source`` is the path relative to ``root`` (POSIX); for a file given
    directly, ``root`` is ``""`` and ``source`` its file name.
    """

    source: str
    path: Path
    root: str

    @property
    def location(self) -> tuple[str, str]:
        """``(root, path)`` as ``source_files`` records it: the path relative to ``root``, or the
        file's absolute path when it was given by itself."""
        return self.root, self.source if self.root else str(self.path.resolve())


@dataclass(frozen=True, slots=True)
class SourceScan:
    """What :func:`scan_sources` found: files to read, tenant files, and what it left alone."""

    files: tuple[SourceFile, ...] = ()
    tenant_files: tuple[Path, ...] = ()
    skipped_by_suffix: tuple[tuple[str, int], ...] = ()
    hidden: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    """Symbolic links not followed: ``(path relative to its folder, why)``."""
    empty: tuple[str, ...] = ()
    """Folders given that hold no file at all."""

    @property
    def skipped(self) -> int:
        """Files skipped for their suffix."""
        return sum(count for _, count in self.skipped_by_suffix)


def _suffix(name: str) -> str:
    suffix = Path(name).suffix.lower()
    return suffix or "(no suffix)"


def scan_sources(
    paths: Iterable[str | os.PathLike[str]], *, follow_symlinks: bool = False, images: bool = False
) -> SourceScan:
    """Files to ingest under ``paths`` (see the module docstring); ``NotFoundError`` for a missing path.

    Image files (``.png``, ``.jpg``, ``.tiff``) inside folders are read (by OCR)
    only with ``images``; otherwise they are counted as skipped by suffix. An
    image named directly is always read.
    """
    files: list[SourceFile] = []
    tenant_files: list[Path] = []
    skipped: Counter[str] = Counter()
    hidden: list[str] = []
    roots: list[str] = []
    links: list[tuple[str, str]] = []
    empty: list[str] = []
    readable = known_suffixes()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            root = str(path.resolve())
            roots.append(root)
            walk = walk_folder(path, follow_symlinks=follow_symlinks)
            hidden.extend(walk.hidden)
            links.extend(walk.links)
            if not walk.found and not walk.hidden and not walk.links:
                empty.append(str(path))
            for relative, file in walk.found:
                suffix = file.suffix.lower()
                if suffix in readable and (images or suffix not in IMAGE_SUFFIXES):
                    files.append(SourceFile(relative, file, root))
                elif file.name == TENANT_FILE:
                    tenant_files.append(file)
                elif not file.name.endswith(SIDECAR_SUFFIX):
                    skipped[_suffix(file.name)] += 1
        elif path.is_file():
            files.append(SourceFile(path.name, path, ""))
        else:
            raise NotFoundError(f"no such file or folder: {str(path)!r}")
    return SourceScan(
        files=tuple(files),
        tenant_files=tuple(tenant_files),
        skipped_by_suffix=tuple(sorted(skipped.items(), key=lambda item: (-item[1], item[0]))),
        hidden=tuple(hidden),
        roots=tuple(roots),
        links=tuple(links),
        empty=tuple(empty),
    )


def record_source(connection: apsw.Connection, tenant: str, source_id: str, file: SourceFile) -> None:
    """Remember where ``source_id`` was ingested from (call inside a transaction)."""
    record_sources(connection, [(tenant, source_id, file)])


def record_sources(
    connection: apsw.Connection,
    sources: Sequence[tuple[str, str, SourceFile]],
    recorded: Sequence[RecordedFile | None] | None = None,
) -> None:
    """:func:`record_source` of each ``(tenant, source_id, file)``, in order, in one statement,
    with what each file was (``recorded``: :mod:`veracity.ingest.fingerprints`)."""
    record_source_paths(
        connection,
        [(tenant, source_id, *file.location) for tenant, source_id, file in sources],
        recorded,
    )
