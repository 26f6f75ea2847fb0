"""Copy a knowledge base between backends: a directory to a ``postgresql://`` URL, and back.

:func:`copy_kb` creates the destination (which must hold no knowledge base),
copies the catalog row for row (documents, chunks, roles, facts, settings,
source paths, tombstones, API keys with their salted digests, the ingestion
ledger and quarantine: the two backends share their columns), then builds the
destination's index from its catalog. Vectors come from the source's published
index, matched by the digest of the text the embedder sees, so nothing is
embedded again unless the destination's model differs (or a chunk has no stored
vector). The new index is verified with the named checks of
:func:`~veracity.index.sqlite.verify.verify_version` before the copy is declared
done; a failed check raises ``IndexVerificationError`` (the destination stays, with
the verification recorded, so it can be inspected or dropped).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..catalog.copy import CATALOG_TABLES, copy_catalog_rows
from ..catalog.store import DatabaseStore
from ..index.dense import Embedder, normalized_rows
from ..index.sqlite.verify import Verification, verify_version
from ..index.sqlite.versions import bump_generation, get_version, read_pointer, record_manifest
from ..index.stored import chunk_keys_by_text, stored_vectors
from ..index.versioned import VersionedIndex, index_for
from ..model.contracts import sha256_hex
from ..model.errors import ConfigError, IndexVerificationError
from .backends import describe, location_of
from .directory import create_kb, holds_kb_files, open_kb, write_manifest
from .manifest import embedder_name
from .reindex import version_manifest

__all__ = ["CATALOG_TABLES", "CopyReport", "copy_kb"]


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What a copy did: rows per table, vectors reused and embedded, the verification."""

    source: str
    destination: str
    rows: dict[str, int]
    reused_vectors: int
    embedded: int
    verification: Verification
    seconds: float


class CopiedVectors:
    """An ``Embedder`` that answers from the source index's stored vectors, else from ``inner``."""

    def __init__(self, source: VersionedIndex, inner: Embedder) -> None:
        """Index the source's chunks by the digest of their embedded text (same model only)."""
        self.inner = inner
        self.model_id, self.dim = inner.model_id, inner.dim
        self.reused = self.embedded = 0
        self._source = source
        self._model = source.vector_model()
        self._keys: dict[str, int] = {}
        if self._model is not None and (self._model.model_id, self._model.dim) == (inner.model_id, inner.dim):
            self._keys = chunk_keys_by_text(source)

    def embed_batch(
        self, texts: Sequence[str], *, kind: Literal["query", "passage"] = "passage"
    ) -> npt.NDArray[np.float32]:
        """Stored vectors where the source has them; the rest embedded by the real model."""
        digests = [sha256_hex(text) for text in texts]
        wanted = sorted({self._keys[d] for d in digests if d in self._keys})
        stored = stored_vectors(self._source, self._model, wanted) if wanted and self._model else {}
        rows: list[Any] = [stored.get(self._keys.get(d, -1)) for d in digests]
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing:
            raw = self.inner.embed_batch([texts[i] for i in missing], kind=kind)
            fresh = normalized_rows(raw, what="vectors")
            for i, row in zip(missing, fresh, strict=True):
                rows[i] = row
        self.reused += len(texts) - len(missing)
        self.embedded += len(missing)
        return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, self.dim), dtype=np.float32)


def _refuse_occupied(destination: str | os.PathLike[str]) -> None:
    folder = location_of(destination)
    if not isinstance(folder, Path) or not folder.is_dir() or not any(folder.iterdir()):
        return
    if holds_kb_files(folder):
        return  # create_kb names this case itself
    raise ConfigError(f"{str(folder)!r} is not empty; copy into a new or empty folder")


def copy_kb(
    source: str | os.PathLike[str], destination: str | os.PathLike[str], *, embedder: Embedder | None = None
) -> CopyReport:
    """Copy the knowledge base in ``source`` to the new one in ``destination`` (directories or URLs).

    A destination folder must be new or empty: the copy's files never mix with others.
    """
    start = time.perf_counter()
    _refuse_occupied(destination)
    src = open_kb(source)
    try:
        model = embedder or src.embedder
        dest = create_kb(destination, model)
        store: DatabaseStore = dest.catalog.store  # type: ignore[assignment]
        try:
            src_store: DatabaseStore = src.catalog.store  # type: ignore[assignment]
            with store.writer("copy"):
                with src_store.read(), store.transaction():
                    rows = copy_catalog_rows(src_store.connection, store.connection)
                    bump_generation(store.connection)
                index: VersionedIndex = dest.snapshot  # type: ignore[assignment]
                vectors = CopiedVectors(src.snapshot, model)  # type: ignore[arg-type]
                index.sync(dest.catalog, vectors)
                version = read_pointer(store.connection)[0]
                pinned = index_for(store, version=version)
                verification = verify_version(pinned, dest.catalog, model)
                name = get_version(store.connection, version).embedder or embedder_name(model)
                manifest = version_manifest(store, pinned, name, model, verification)
                with store.transaction():
                    record_manifest(store.connection, version, manifest, verified=verification.passed)
                write_manifest(destination, dest)
        finally:
            store.close()
    finally:
        src.catalog.store.close()  # type: ignore[attr-defined]
    if not verification.passed:
        raise IndexVerificationError(verification)
    return CopyReport(
        describe(source), describe(destination), rows, vectors.reused, vectors.embedded, verification,
        time.perf_counter() - start,
    )  # fmt: skip
