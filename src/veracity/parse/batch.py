"""Load many source files into documents; one bad file never stops the batch.

:func:`load_sources` walks the given files and folders in sorted order
(:mod:`veracity.parse.walk`), skipping ``*.meta.yaml`` sidecars, parses each
file (:func:`~veracity.parse.parsers.parse_file`), resolves its metadata
(:mod:`veracity.parse.metadata`) and builds the validated ``Document``. Every
failure becomes a ``(path, reason)`` entry in ``rejected``; a second file with
an already loaded ``(id, revision)`` is rejected as a duplicate. Only an
unreadable ``--metadata`` file, which would affect every source, raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..model.contracts import Document
from ..model.errors import ValidationError
from .documents import make_document
from .limits import DEFAULT_LIMITS, InputLimits
from .metadata import SIDECAR_SUFFIX, GovernanceDefaults, MetadataMap, resolve_source_metadata
from .nodes import ParsedSource
from .ocr import DEFAULT_SETTINGS as DEFAULT_OCR
from .ocr import OcrSettings
from .parsers import DEFAULT_MAX_BYTES, parse_file
from .walk import walk_folder

__all__ = ["BatchResult", "iter_source_files", "load_source", "load_sources"]


@dataclass(frozen=True, slots=True)
class BatchResult:
    """Loaded documents with their parsed sources, and each rejected path with its reason.

    ``parsed[i]`` is the parse of ``documents[i]`` (nodes, page numbers).
    """

    documents: tuple[tuple[Path, Document], ...]
    rejected: tuple[tuple[Path, str], ...]
    parsed: tuple[ParsedSource, ...] = ()


def iter_source_files(paths: Iterable[Path | str]) -> Iterator[tuple[Path, str]]:
    """``(file, path relative to its root)`` for each source, folders walked in sorted order
    (:func:`~veracity.parse.walk.walk_folder`: hidden and dependency folders left out), sidecars
    left out.

    A path given directly is yielded as is (relative name: its file name),
    even if it does not exist, so that the loader can reject it by name.
    """
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            yield root, root.name
            continue
        for relative_name, path in walk_folder(root).found:
            if not path.name.endswith(SIDECAR_SUFFIX):
                yield path, relative_name


def load_source(
    path: Path | str,
    *,
    relative: str | None = None,
    tenant: str | None = None,
    mapping: MetadataMap | None = None,
    max_bytes: int | None = None,
    defaults: GovernanceDefaults | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
    ocr: OcrSettings | None = DEFAULT_OCR,
) -> tuple[Document, ParsedSource]:
    """Parse one file and build its ``Document``; raises ``ValidationError`` on any problem.

    Without ``defaults`` every governance field must be given (strict); with
    them, missing ones take their defaults (see :mod:`veracity.parse.metadata`).
    ``limits`` bound what the file may cost (``max_bytes`` overrides its size limit);
    ``ocr`` says how scanned pages and images are read.
    """
    path = Path(path)
    parsed = parse_file(path, max_bytes=max_bytes, limits=limits, ocr=ocr)
    resolved = resolve_source_metadata(
        path, parsed, relative=relative, tenant=tenant, mapping=mapping, defaults=defaults
    )
    return make_document(resolved.values, parsed.body, defaulted=resolved.defaulted), parsed


def load_sources(
    paths: Iterable[Path | str],
    *,
    tenant: str | None = None,
    metadata_file: Path | str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    defaults: GovernanceDefaults | None = None,
) -> BatchResult:
    """Load every source under ``paths``; bad files go to ``rejected`` with the reason.

    ``defaults`` fills missing governance fields (else they are required).
    Raises ``IngestError`` only when ``metadata_file`` itself cannot be read.
    """
    mapping = MetadataMap.load(metadata_file) if metadata_file is not None else None
    documents: list[tuple[Path, Document]] = []
    parsed_sources: list[ParsedSource] = []
    rejected: list[tuple[Path, str]] = []
    seen: dict[tuple[str, str], Path] = {}
    for path, relative in iter_source_files(paths):
        try:
            document, parsed = load_source(
                path, relative=relative, tenant=tenant, mapping=mapping, max_bytes=max_bytes,
                defaults=defaults,
            )
        except ValidationError as exc:
            rejected.append((path, str(exc)))
            continue
        key = (document.source_id, document.revision)
        if key in seen:
            rejected.append(
                (
                    path,
                    f"document {document.source_id!r} revision {document.revision!r} "
                    f"is already loaded from {seen[key]}; give one of them another id",
                )
            )
            continue
        seen[key] = path
        documents.append((path, document))
        parsed_sources.append(parsed)
    return BatchResult(tuple(documents), tuple(rejected), tuple(parsed_sources))
