"""``manifest.json``: what a knowledge base's published index was built with, checked on open.

It says what the published version was built with (embedding model id,
dimension, normalization, distance, chunker and tokenizer versions), what it
holds (counts, catalog state digest, its last verification), every index
version and its state, which veracity wrote it, and a digest over all of that.
It is derived: the database is the truth, and the manifest is rewritten when
it lags. Reading one (:func:`read_manifest`) imports nothing heavy, so
operator commands that only read start fast.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from .._version import __version__
from ..catalog.faults import storage_error
from ..catalog.manifest import manifest_at_url, store_manifest, stored_manifest
from ..catalog.postgres.location import display_url, is_database_url
from ..catalog.state import chunk_count, document_states
from ..catalog.store import DatabaseStore
from ..index.sqlite.versions import get_version, list_versions
from ..model.contracts import replace_file
from ..model.errors import ConfigError, NewerFormatError, SearchIndexError

if TYPE_CHECKING:
    from ..index.dense import Embedder
    from ..pipeline.engine import Engine

__all__ = [
    "CATALOG_FILE",
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "KBInfo",
    "catalog_state",
    "chunker_name",
    "embedder_name",
    "parser_versions",
    "read_manifest",
    "tokenizer_version",
    "write_manifest",
]

CATALOG_FILE: Final = "catalog.sqlite"
MANIFEST_FILE: Final = "manifest.json"
FORMAT: Final = "veracity.kb"
FORMAT_VERSION: Final = 1


def chunker_name() -> str:
    """The chunker that cut the indexed chunks, with its budget and veracity's version."""
    from ..parse.chunking import CHUNK_SIZE

    return f"contextual-structural/size={CHUNK_SIZE}@veracity-{__version__}"


def tokenizer_version() -> str:
    """The tokenizer that made the lexical index: veracity's, over this rjieba and stemmer."""
    from ..text.tokens import STEMMER

    versions = {}
    for package in ("rjieba", "PyStemmer"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - core dependencies
            versions[package] = "unknown"
    return (
        f"veracity.text.tokenize@{__version__}+rjieba-{versions['rjieba']}"
        f"+{STEMMER}-stemmer-{versions['PyStemmer']}"
    )


@dataclass(frozen=True, slots=True)
class KBInfo:
    """Where a knowledge base lives and what its manifest says."""

    path: Path
    manifest: dict[str, Any]


def embedder_name(embedder: Embedder) -> str | None:
    """The :data:`veracity.index.embedders.EMBEDDERS` name that builds this very model, if any."""
    from ..index.embedders import EMBEDDERS, make_embedder

    for name in EMBEDDERS:
        try:
            factory = EMBEDDERS[name]
        except ConfigError:  # a plugin that does not load builds nothing
            continue
        if isinstance(factory, type) and type(embedder) is factory:
            try:
                if make_embedder(name).model_id == embedder.model_id:
                    return name
            except ConfigError:
                return None
    return None


def _digest(content: dict[str, Any]) -> str:
    canonical = json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


PARSER_PACKAGES: Final = (
    "markdown-it-py", "PyYAML", "pdfplumber", "pypdfium2", "python-docx",
    "rapidocr-onnxruntime", "pytesseract",
)  # fmt: skip
"""Libraries the ingest parsers use (HTML and plain text use the standard library; OCR engines
read scanned pages and images)."""


def parser_versions() -> dict[str, str | None]:
    """veracity's parsers and the versions of the libraries under them (``None``: not installed)."""
    versions: dict[str, str | None] = {"veracity.ingest": __version__}
    for package in PARSER_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def catalog_state(store: DatabaseStore) -> dict[str, Any]:
    """Counts and a digest of every document's id, status and catalog revision."""
    rows = document_states(store.connection)
    state = hashlib.sha256()
    statuses: dict[str, int] = {}
    for document_id, status, revision, _ in rows:
        state.update(f"{document_id}\x1f{status}\x1f{revision}\n".encode())
        statuses[status] = statuses.get(status, 0) + 1
    chunks = chunk_count(store.connection)
    return {
        "file": store.path if is_database_url(store.path) else CATALOG_FILE,
        "documents": len(rows),
        "chunks": chunks,
        "documents_by_status": dict(sorted(statuses.items())),
        "tenants": sorted({str(row[3]) for row in rows}),
        "state_digest": state.hexdigest(),
    }


def _versions_summary(store: DatabaseStore) -> list[dict[str, Any]]:
    return [
        {
            "version": v.version,
            "state": v.state,
            "embedder": v.embedder,
            "created_at": v.created_at,
            "verified_at": v.verified_at,
            "published_at": v.published_at,
            "ended_at": v.ended_at,
            "reason": v.reason,
        }
        for v in list_versions(store.connection)
    ]


def write_manifest(
    path: str | os.PathLike[str], kb: Engine, *, embedder: str | None = None
) -> dict[str, Any]:
    """Write ``manifest.json`` for the knowledge base in ``path`` (its published version); return it."""
    from ..index.sqlite.writer import DISTANCE, NORMALIZATION
    from ..index.versioned import is_versioned

    index = kb.snapshot
    if not is_versioned(index) or index.pinned:
        raise ConfigError("write_manifest needs a knowledge base opened with open_kb or create_kb")
    store = index.store
    in_database = is_database_url(path)
    with store.read():
        stats = index.stats()
        published = get_version(store.connection, stats.version)
        versions = _versions_summary(store)
        catalog = catalog_state(store)
        model = index.vector_model()
        stored = stored_manifest(store.connection) if in_database else None
    folder = Path(path)
    if in_database:
        previous = json.loads(stored) if stored else {}
    else:
        previous = _read_json(folder / MANIFEST_FILE) if (folder / MANIFEST_FILE).exists() else {}
    name = (
        embedder
        or published.embedder
        or embedder_name(kb.embedder)
        or previous.get("embedding", {}).get("embedder")
    )
    verification = (published.manifest or {}).get("verification")
    content: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "created_by": f"veracity {__version__}",
        "catalog": catalog,
        "index": {
            "version": stats.version,
            "generation": stats.generation,
            "documents": stats.documents,
            "chunks": stats.chunks,
            "tenants": stats.tenants,
            "vectors": stats.vectors,
            "lexical": {
                "kind": "postings-sql" if in_database else "fts5-per-tenant",
                "bm25": "lucene",
                "k1": index.k1,
                "b": index.b,
            },
            "published_at": published.published_at,
            "verification": verification,
        },
        "versions": versions,
        "parsers": parser_versions(),
        "chunker": chunker_name(),
        "tokenizer": tokenizer_version(),
        "embedding": {
            "embedder": name,
            "model_id": model.model_id if model else kb.embedder.model_id,
            "dim": model.dim if model else kb.embedder.dim,
            "normalization": NORMALIZATION,
            "distance": DISTANCE,
        },
    }
    manifest = {**content, "digest": _digest(content)}
    if in_database:  # the database is the knowledge base: its manifest lives there too
        store_manifest(store.connection, json.dumps(manifest, ensure_ascii=False, sort_keys=True))
        return manifest
    text = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    try:
        replace_file(folder / MANIFEST_FILE, text.encode("utf-8"))
    except OSError as exc:
        _manifest_fault(exc, folder / MANIFEST_FILE)
    return manifest


def _manifest_fault(exc: OSError, path: Path) -> NoReturn:
    """A storage fault on the manifest, said as such: the database behind it is already up to date."""
    mapped = storage_error(exc, str(path))
    if mapped is None:
        raise exc
    raise type(mapped)(
        f"cannot write {str(path)!r} ({exc.strerror or exc}); the knowledge base itself is up to date: "
        "the manifest is derived, and the next command that opens it with space to write rewrites it",
        path=str(path),
    ) from None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SearchIndexError(f"cannot read {str(path)!r}: {exc}") from None
    if not isinstance(data, dict):
        raise SearchIndexError(f"{str(path)!r} is not a JSON object")
    return data


def _database_manifest(url: str) -> dict[str, Any]:
    """The manifest a PostgreSQL knowledge base keeps in ``kb_manifest``."""
    text = manifest_at_url(url)
    if text is None:
        raise SearchIndexError(
            f"{display_url(url)!r} holds no veracity knowledge base; create one with "
            "'veracity ingest PATH --kb URL' or 'veracity init-demo --kb URL'"
        )
    data = json.loads(text)
    if not isinstance(data, dict):
        raise SearchIndexError(f"the manifest in {display_url(url)!r} is not a JSON object")
    return data


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of the knowledge base in ``path`` (a directory or a URL), checked (format and digest)."""
    if is_database_url(path):
        file: str | Path = display_url(str(path))
        manifest = _database_manifest(str(path))
    else:
        folder = Path(path)
        file = folder / MANIFEST_FILE
        if not file.is_file() or not (folder / CATALOG_FILE).is_file():
            raise SearchIndexError(
                f"{str(folder)!r} is not a veracity knowledge base (no {MANIFEST_FILE} and {CATALOG_FILE}); "
                "create one with 'veracity ingest PATH --kb DIR' or 'veracity init-demo --kb DIR'"
            )
        manifest = _read_json(file)
    version = manifest.get("format_version")
    if manifest.get("format") == FORMAT and isinstance(version, int) and version > FORMAT_VERSION:
        raise NewerFormatError(
            f"{str(file)!r} is format v{version}, written by "
            f"{manifest.get('created_by', 'a newer veracity')}; "
            f"this veracity {__version__} reads v{FORMAT_VERSION}: upgrade veracity to open it"
        )
    if manifest.get("format") != FORMAT or version != FORMAT_VERSION:
        raise SearchIndexError(
            f"{str(file)!r} is format {manifest.get('format')!r} v{manifest.get('format_version')!r}, "
            f"expected {FORMAT!r} v{FORMAT_VERSION}"
        )
    content = {key: value for key, value in manifest.items() if key != "digest"}
    if manifest.get("digest") != _digest(content):
        raise SearchIndexError(
            f"{str(file)!r} does not match its digest (edited by hand?); "
            "restore it or rebuild the knowledge base"
        )
    return manifest


