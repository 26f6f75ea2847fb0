"""A knowledge base on disk: one directory holding ``catalog.sqlite`` and ``manifest.json``.

(The manifest itself, reading and writing it, is :mod:`veracity.kb.manifest`;
its names are re-exported here.)

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
Ingesting Markdown lives in :mod:`veracity.ingest.run`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from ..catalog.catalog import Catalog
from ..catalog.defaults import AskDefaults, non_official_policies, set_ask_defaults, set_default_tenant
from ..catalog.demo import demo_catalog
from ..catalog.faults import storage_faults
from ..catalog.lock import OnWait, Wait, hold_writer, lock_path
from ..catalog.manifest import holds_manifest
from ..catalog.store import DatabaseStore
from ..index.dense import Embedder
from ..index.embedders import DEFAULT_EMBEDDER, make_embedder
from ..index.sqlite.search import DenseMode
from ..index.sqlite.versions import (
    bump_generation,
    current_tables,
    get_version,
    read_pointer,
    set_embedder,
)
from ..index.versioned import index_for
from ..ingest.verdicts import store_verdicts
from ..model.errors import (
    ConfigError,
    EmbedderMismatchError,
    SearchIndexError,
    StorageError,
    WriterBusyError,
)
from ..pipeline.engine import Engine
from ..pipeline.retrieve import RetrievalSettings
from .backends import describe, location_of, open_store
from .manifest import (
    CATALOG_FILE,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST_FILE,
    KBInfo,
    catalog_state,
    chunker_name,
    embedder_name,
    parser_versions,
    read_manifest,
    tokenizer_version,
    write_manifest,
)
from .overrides import apply_overrides, stored_overrides
from .status import check_file

__all__ = [
    "CATALOG_FILE",
    "CHUNKER",
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "KBInfo",
    "catalog_state",
    "check_file",
    "create_kb",
    "embedder_name",
    "holds_kb_files",
    "init_demo_kb",
    "open_kb",
    "open_or_create_kb",
    "parser_versions",
    "read_manifest",
    "tokenizer_version",
    "write_manifest",
]

CHUNKER: Final = chunker_name()


def _check_model(manifest: dict[str, Any], embedder: Embedder, folder: str | Path) -> None:
    embedding = manifest.get("embedding", {})
    if embedding.get("model_id") != embedder.model_id or embedding.get("dim") != embedder.dim:
        hint = f" (--embedder {embedding['embedder']})" if embedding.get("embedder") else ""
        raise EmbedderMismatchError(
            f"knowledge base {describe(folder)!r} was built with {embedding.get('model_id')!r} "
            f"(dim {embedding.get('dim')}), not {embedder.model_id!r} (dim {embedder.dim}); "
            f"open it with its own model{hint}, or ingest into a new directory"
        )


def open_kb(
    path: str | os.PathLike[str],
    embedder: Embedder | None = None,
    *,
    dense_mode: DenseMode | str = DenseMode.RESIDENT,
    writer_wait: Wait = True,
    on_wait: OnWait | None = None,
    check: bool = False,
) -> Engine:
    """Open the knowledge base in ``path`` without re-embedding anything.

    ``embedder=None`` builds the published index version's embedder by name. A
    different model than the published version's raises
    ``EmbedderMismatchError``. Opening never waits for a writer; ``writer_wait``
    and ``on_wait`` say how later writes through this knowledge base wait for
    another writer (:mod:`veracity.catalog.lock`). ``check`` runs SQLite's
    integrity check first (``CorruptStorageError`` naming what is damaged).
    The manifest is rewritten when the index changed since it was written (it
    is derived), unless another writer is at work or the folder is read-only.
    """
    folder = location_of(path)
    manifest = read_manifest(folder)
    store = open_store(folder, writer_wait=writer_wait, on_wait=on_wait)
    try:
        if check:
            check_file(store)
        with storage_faults(store.path, store.connection):
            index = index_for(store, dense_mode=dense_mode)
            published = get_version(store.connection, index.version)
            model = index.vector_model()
        recorded = published.manifest or {}
        name = published.embedder or manifest.get("embedding", {}).get("embedder")
        if embedder is None:
            if not name:
                raise ConfigError(
                    f"the index of {describe(folder)!r} names no embedder; pass the embedder that built it"
                )
            embedder = make_embedder(name)
        expected = (
            {"model_id": model.model_id, "dim": model.dim}
            if model
            else recorded.get("embedding") or manifest.get("embedding", {})
        )
        _check_model({"embedding": {**expected, "embedder": name}}, embedder, folder)
        index.check_embedder(embedder)
        settings = apply_overrides(RetrievalSettings(), stored_overrides(store.connection))
    except BaseException:
        store.close()
        raise
    kb = Engine(Catalog(store), embedder, backend=index, settings=settings)
    kb.non_official_policies = non_official_policies(store.connection)
    index_part = manifest.get("index", {})
    if (index_part.get("version"), index_part.get("generation")) != read_pointer(store.connection):
        try:  # only without another writer at work (it rewrites the manifest when it is done)
            with store.writer("manifest", wait=False):
                write_manifest(folder, kb)
        except (WriterBusyError, StorageError):
            pass  # derived: the next writer, or the next open of a writable folder, brings it up to date
    return kb


def holds_kb_files(folder: Path) -> bool:
    """Whether ``folder`` holds a knowledge base's files (its manifest or its catalog)."""
    return (folder / MANIFEST_FILE).exists() or (folder / CATALOG_FILE).exists()


_HOLDS_ONE = (
    "already holds a knowledge base; open it (--kb on the command line, veracity.open in Python) "
    "or choose another place"
)


def create_kb(
    path: str | os.PathLike[str],
    embedder: Embedder | None = None,
    *,
    dense_mode: DenseMode | str = DenseMode.RESIDENT,
    writer_wait: Wait = True,
    on_wait: OnWait | None = None,
) -> Engine:
    """Create an empty knowledge base in ``path`` (a new or empty directory) bound to ``embedder``.

    ``embedder=None`` uses the default model (``use``).
    """
    folder = location_of(path)
    if isinstance(folder, Path):
        if holds_kb_files(folder):
            raise ConfigError(f"{str(folder)!r} {_HOLDS_ONE}")
        with storage_faults(str(folder)):
            folder.mkdir(parents=True, exist_ok=True)
    store = open_store(folder, writer_wait=writer_wait, on_wait=on_wait)
    try:
        return _create_in(store, folder, embedder, dense_mode)
    except BaseException:
        store.close()
        raise


def _create_in(
    store: DatabaseStore, folder: str | Path, embedder: Embedder | None, dense_mode: DenseMode | str
) -> Engine:
    """Bind the empty knowledge base in ``store`` to ``embedder`` and write its first manifest."""
    embedder = embedder or make_embedder(DEFAULT_EMBEDDER)
    with store.writer("create"):
        if not isinstance(folder, Path) and holds_knowledge_base(store):
            raise ConfigError(f"{describe(folder)!r} {_HOLDS_ONE}")
        index = index_for(store, dense_mode=dense_mode)
        with store.transaction():
            tables = current_tables(store.connection)
            index.ensure_model(tables, embedder.model_id, embedder.dim)
            set_embedder(store.connection, tables.version, embedder_name(embedder))
            bump_generation(store.connection)
        kb = Engine(Catalog(store), embedder, backend=index)
        write_manifest(folder, kb)
    return kb


def open_or_create_kb(
    path: str | os.PathLike[str],
    embedder: Embedder | None = None,
    *,
    writer_wait: Wait = True,
    on_wait: OnWait | None = None,
    **options: Any,
) -> Engine:
    """:func:`open_kb` if ``path`` holds a knowledge base, else :func:`create_kb`.

    Deciding and creating happen under the writer lock, so two processes
    creating the same knowledge base at once make one.
    """
    folder = location_of(path)
    if not isinstance(folder, Path):  # a database decides under its own writer lock
        return _open_or_create_database(folder, embedder, writer_wait=writer_wait, on_wait=on_wait, **options)
    if (folder / MANIFEST_FILE).exists():
        return open_kb(folder, embedder, writer_wait=writer_wait, on_wait=on_wait, **options)
    with storage_faults(str(folder)):
        folder.mkdir(parents=True, exist_ok=True)
    with hold_writer(lock_path(str(folder / CATALOG_FILE)), "create", wait=writer_wait, on_wait=on_wait):
        if (folder / MANIFEST_FILE).exists():
            return open_kb(folder, embedder, writer_wait=writer_wait, on_wait=on_wait, **options)
        return create_kb(folder, embedder, writer_wait=writer_wait, on_wait=on_wait, **options)


def holds_knowledge_base_at(location: str | os.PathLike[str]) -> bool:
    """True when ``location`` (a directory or a URL) already holds a knowledge base."""
    folder = location_of(location)
    if isinstance(folder, Path):
        return (folder / MANIFEST_FILE).exists()
    try:
        read_manifest(folder)
    except SearchIndexError:
        return False
    return True


def holds_knowledge_base(store: DatabaseStore) -> bool:
    """True when a database already holds a knowledge base (its manifest was written)."""
    return holds_manifest(store.connection)


def _open_or_create_database(
    url: str, embedder: Embedder | None, *, writer_wait: Wait, on_wait: OnWait | None, **options: Any
) -> Engine:
    store = open_store(url, writer_wait=writer_wait, on_wait=on_wait)
    try:
        with store.writer("create"):
            if not holds_knowledge_base(store):
                return _create_in(store, url, embedder, options.get("dense_mode", DenseMode.RESIDENT))
    except BaseException:
        store.close()
        raise
    store.close()
    return open_kb(url, embedder, writer_wait=writer_wait, on_wait=on_wait, **options)


def init_demo_kb(path: str | os.PathLike[str], embedder: Embedder | None = None) -> Engine:
    """Write the bundled Starship Workbench demo into a new knowledge base in ``path``.

    It records the demo's ask defaults (tenant starship, role public, version
    3.2, 2026-08-27T16:00Z, the running question), so ``ask --kb`` on it asks
    what ``ask`` without ``--kb`` asks.
    """
    kb = create_kb(path, embedder)
    store = kb.catalog.store
    assert isinstance(store, DatabaseStore)
    with store.writer("init-demo"):
        _write_demo(kb, store, path)
    return kb


def _write_demo(kb: Engine, store: DatabaseStore, path: str | os.PathLike[str]) -> None:
    from ..fixtures import tenant_config  # the demo's YAML, read when a demo is written

    demo = demo_catalog()
    config = tenant_config()
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
            chunks = demo.chunks(document.document_id)
            kb.catalog.add(document, chunks)
            store_verdicts(store, document, chunks)
    kb.reindex()
    write_manifest(path, kb)
