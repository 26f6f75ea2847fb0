"""A knowledge base on disk: one directory holding ``catalog.sqlite`` and ``manifest.json``.

``catalog.sqlite`` holds the catalog (the truth) and the derived search index
(:class:`~veracity.index.sqlite.search.SQLiteSearchIndex`: per-tenant FTS5
tables and sqlite-vec vectors) in one or more *versions*, of which one is
published (:mod:`veracity.index.sqlite.versions`; building, verifying and
publishing them is :mod:`veracity.kb.reindex`). ``manifest.json`` says what the
published version was built with (embedding model id, dimension,
normalization, distance, chunker and tokenizer versions), what it holds
(counts, catalog state digest, its last verification), every version and its
state, which veracity wrote it, and a digest over all of that. It is derived:
the database is the truth, and the manifest is rewritten when it lags.

:func:`open_kb` is instant: nothing is re-embedded. Opening with an embedder
whose model differs from the manifest's raises ``EmbedderMismatchError``.
Ingesting Markdown lives in :mod:`veracity.kb.ingest`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from .._version import __version__
from ..catalog.catalog import Catalog
from ..catalog.sql import all_rows, scalar
from ..catalog.sqlite import SQLiteStore
from ..fixtures import tenant_config
from ..index.dense import Embedder
from ..index.embedders import DEFAULT_EMBEDDER, EMBEDDERS, make_embedder
from ..index.sqlite.search import DenseMode, SQLiteSearchIndex
from ..index.sqlite.versions import (
    bump_generation,
    current_tables,
    get_version,
    list_versions,
    read_pointer,
    set_embedder,
)
from ..index.sqlite.writer import DISTANCE, NORMALIZATION, ensure_vector_model
from ..ingest.chunking import CHUNK_SIZE
from ..model.errors import ConfigError, EmbedderMismatchError, IndexError_
from ..pipeline.engine import KnowledgeBase, demo_catalog
from ..text.tokens import STEMMER
from .settings import AskDefaults, non_official_policies, set_ask_defaults, set_default_tenant

__all__ = [
    "CATALOG_FILE",
    "MANIFEST_FILE",
    "KBInfo",
    "catalog_state",
    "create_kb",
    "embedder_name",
    "init_demo_kb",
    "open_kb",
    "open_or_create_kb",
    "parser_versions",
    "read_manifest",
    "tokenizer_version",
    "write_manifest",
]

CATALOG_FILE: Final = "catalog.sqlite"
MANIFEST_FILE: Final = "manifest.json"
FORMAT: Final = "veracity.kb"
FORMAT_VERSION: Final = 1
CHUNKER: Final = f"contextual-structural/size={CHUNK_SIZE}@veracity-{__version__}"


def tokenizer_version() -> str:
    """The tokenizer that made the lexical index: veracity's, over this rjieba and stemmer."""
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
    for name, factory in EMBEDDERS.items():
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


PARSER_PACKAGES: Final = ("markdown-it-py", "PyYAML", "pypdf", "python-docx")
"""Libraries the ingest parsers use (HTML and plain text use the standard library)."""


def parser_versions() -> dict[str, str | None]:
    """veracity's parsers and the versions of the libraries under them (``None``: not installed)."""
    versions: dict[str, str | None] = {"veracity.ingest": __version__}
    for package in PARSER_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def catalog_state(store: SQLiteStore) -> dict[str, Any]:
    """Counts and a digest of every document's id, status and catalog revision."""
    rows = all_rows(
        store.connection,
        "SELECT document_id, status, catalog_revision, tenant FROM documents ORDER BY document_id",
    )
    state = hashlib.sha256()
    statuses: dict[str, int] = {}
    for document_id, status, revision, _ in rows:
        state.update(f"{document_id}\x1f{status}\x1f{revision}\n".encode())
        statuses[status] = statuses.get(status, 0) + 1
    chunks = int(scalar(store.connection, "SELECT count(*) FROM chunks"))
    return {
        "file": CATALOG_FILE,
        "documents": len(rows),
        "chunks": chunks,
        "documents_by_status": dict(sorted(statuses.items())),
        "tenants": sorted({str(row[3]) for row in rows}),
        "state_digest": state.hexdigest(),
    }


def _versions_summary(store: SQLiteStore) -> list[dict[str, Any]]:
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
    path: str | os.PathLike[str], kb: KnowledgeBase, *, embedder: str | None = None
) -> dict[str, Any]:
    """Write ``manifest.json`` for the knowledge base in ``path`` (its published version); return it."""
    folder = Path(path)
    index = kb.snapshot
    if not isinstance(index, SQLiteSearchIndex) or index.pinned:
        raise ConfigError("write_manifest needs a knowledge base opened with open_kb or create_kb")
    store = index.store
    with store.read():
        stats = index.stats()
        published = get_version(store.connection, stats.version)
        versions = _versions_summary(store)
        catalog = catalog_state(store)
        model = index.vector_model()
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
            "lexical": {"kind": "fts5-per-tenant", "bm25": "lucene", "k1": index.k1, "b": index.b},
            "published_at": published.published_at,
            "verification": verification,
        },
        "versions": versions,
        "parsers": parser_versions(),
        "chunker": CHUNKER,
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
    tmp = folder / (MANIFEST_FILE + ".tmp")
    tmp.write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    os.replace(tmp, folder / MANIFEST_FILE)
    return manifest


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise IndexError_(f"cannot read {str(path)!r}: {exc}") from None
    if not isinstance(data, dict):
        raise IndexError_(f"{str(path)!r} is not a JSON object")
    return data


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of the knowledge base in ``path``, checked (format and digest)."""
    folder = Path(path)
    file = folder / MANIFEST_FILE
    if not file.is_file() or not (folder / CATALOG_FILE).is_file():
        raise IndexError_(
            f"{str(folder)!r} is not a veracity knowledge base (no {MANIFEST_FILE} and {CATALOG_FILE}); "
            "create one with 'veracity ingest PATH --kb DIR' or 'veracity init-demo --kb DIR'"
        )
    manifest = _read_json(file)
    if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
        raise IndexError_(
            f"{str(file)!r} is format {manifest.get('format')!r} v{manifest.get('format_version')!r}, "
            f"expected {FORMAT!r} v{FORMAT_VERSION}"
        )
    content = {key: value for key, value in manifest.items() if key != "digest"}
    if manifest.get("digest") != _digest(content):
        raise IndexError_(
            f"{str(file)!r} does not match its digest (edited by hand?); "
            "restore it or rebuild the knowledge base"
        )
    return manifest


def _check_model(manifest: dict[str, Any], embedder: Embedder, folder: Path) -> None:
    embedding = manifest.get("embedding", {})
    if embedding.get("model_id") != embedder.model_id or embedding.get("dim") != embedder.dim:
        hint = f" (--embedder {embedding['embedder']})" if embedding.get("embedder") else ""
        raise EmbedderMismatchError(
            f"knowledge base {str(folder)!r} was built with {embedding.get('model_id')!r} "
            f"(dim {embedding.get('dim')}), not {embedder.model_id!r} (dim {embedder.dim}); "
            f"open it with its own model{hint}, or ingest into a new directory"
        )


def open_kb(
    path: str | os.PathLike[str],
    embedder: Embedder | None = None,
    *,
    dense_mode: DenseMode | str = DenseMode.RESIDENT,
) -> KnowledgeBase:
    """Open the knowledge base in ``path`` without re-embedding anything.

    ``embedder=None`` builds the published index version's embedder by name. A
    different model than the published version's raises
    ``EmbedderMismatchError``. The manifest is rewritten when the index changed
    since it was written (it is derived).
    """
    folder = Path(path)
    manifest = read_manifest(folder)
    store = SQLiteStore(folder / CATALOG_FILE)
    try:
        index = SQLiteSearchIndex(store, dense_mode=dense_mode)
        published = get_version(store.connection, index.version)
        recorded = published.manifest or {}
        name = published.embedder or manifest.get("embedding", {}).get("embedder")
        if embedder is None:
            if not name:
                raise ConfigError(
                    f"the index of {str(folder)!r} names no embedder; pass the embedder that built it"
                )
            embedder = make_embedder(name)
        model = index.vector_model()
        expected = (
            {"model_id": model.model_id, "dim": model.dim}
            if model
            else recorded.get("embedding") or manifest.get("embedding", {})
        )
        _check_model({"embedding": {**expected, "embedder": name}}, embedder, folder)
        index.check_embedder(embedder)
    except BaseException:
        store.close()
        raise
    kb = KnowledgeBase(Catalog(store), embedder, backend=index)
    kb.non_official_policies = non_official_policies(store.connection)
    index_part = manifest.get("index", {})
    if (index_part.get("version"), index_part.get("generation")) != read_pointer(store.connection):
        write_manifest(folder, kb)
    return kb


def create_kb(
    path: str | os.PathLike[str],
    embedder: Embedder | None = None,
    *,
    dense_mode: DenseMode | str = DenseMode.RESIDENT,
) -> KnowledgeBase:
    """Create an empty knowledge base in ``path`` (a new or empty directory) bound to ``embedder``.

    ``embedder=None`` uses the default model (``use``).
    """
    folder = Path(path)
    if (folder / MANIFEST_FILE).exists() or (folder / CATALOG_FILE).exists():
        raise ConfigError(f"{str(folder)!r} already holds a knowledge base; open it with open_kb")
    folder.mkdir(parents=True, exist_ok=True)
    embedder = embedder or make_embedder(DEFAULT_EMBEDDER)
    store = SQLiteStore(folder / CATALOG_FILE)
    index = SQLiteSearchIndex(store, dense_mode=dense_mode)
    with store.transaction():
        tables = current_tables(store.connection)
        ensure_vector_model(store.connection, tables, embedder.model_id, embedder.dim)
        set_embedder(store.connection, tables.version, embedder_name(embedder))
        bump_generation(store.connection)
    kb = KnowledgeBase(Catalog(store), embedder, backend=index)
    write_manifest(folder, kb)
    return kb


def open_or_create_kb(
    path: str | os.PathLike[str], embedder: Embedder | None = None, **options: Any
) -> KnowledgeBase:
    """:func:`open_kb` if ``path`` holds a knowledge base, else :func:`create_kb`."""
    folder = Path(path)
    if (folder / MANIFEST_FILE).exists():
        return open_kb(folder, embedder, **options)
    return create_kb(folder, embedder, **options)


def init_demo_kb(path: str | os.PathLike[str], embedder: Embedder | None = None) -> KnowledgeBase:
    """Write the bundled Starship Workbench demo into a new knowledge base in ``path``.

    It records the demo's ask defaults (tenant starship, role public, version
    3.2, 2026-08-27T16:00Z, the running question), so ``ask --kb`` on it asks
    what ``ask`` without ``--kb`` asks.
    """
    kb = create_kb(path, embedder)
    demo = demo_catalog()
    config = tenant_config()
    store = kb.catalog.store
    assert isinstance(store, SQLiteStore)
    with store.transaction():
        set_default_tenant(store.connection, config.tenant)
        set_ask_defaults(
            store.connection,
            config.tenant,
            AskDefaults((config.role,), config.target_version, config.as_of, config.running_question),
        )
    for tenant in sorted({d.tenant for d in demo.documents()}):
        kb.catalog.define_roles(tenant, demo.roles(tenant))
    with kb.catalog.store.transaction():
        for document in demo.documents():
            kb.catalog.add(document, demo.chunks(document.document_id))
    kb.reindex()
    write_manifest(path, kb)
    return kb
