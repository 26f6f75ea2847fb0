"""Embed a corpus in batches, with a progress bar, cached as ``.npy`` on disk.

The cache key is the embedder's ``model_id``, the embedding kind and a digest
of the ids and texts, so a rerun over the same corpus with the same model reads
the vectors back instead of embedding again, and any change of model, version
or text embeds afresh. Each entry is two plain files (no pickle)::

    <cache>/<model>-<kind>-<digest16>.npy    float32 (count, dim), rows in the given id order
    <cache>/<model>-<kind>-<digest16>.json   model_id, kind, count, dim, digest, seconds
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..index.dense import Embedder, EmbedKind, FloatMatrix, check_vectors
from ..model.errors import SearchIndexError, ValidationError

DEFAULT_BATCH = 32


class Embedded(NamedTuple):
    """Vectors (rows in the given order) and what they cost.

    ``seconds`` is wall time and ``cpu_seconds`` this process's CPU time while
    embedding (``None`` for cache entries written before it was recorded); on a
    shared machine CPU time is the steadier measure. ``cached`` tells whether
    the vectors came from the cache, in which case the costs are those recorded
    when the entry was made.
    """

    vectors: FloatMatrix
    seconds: float
    cpu_seconds: float | None
    cached: bool


def texts_digest(ids: Sequence[str], texts: Sequence[str]) -> str:
    """sha256 over ``(id, text)`` pairs in the given order."""
    digest = hashlib.sha256()
    for doc_id, text in zip(ids, texts, strict=True):
        digest.update(doc_id.encode("utf-8") + b"\x00" + text.encode("utf-8") + b"\x01")
    return digest.hexdigest()


def cache_paths(cache_dir: Path, model_id: str, kind: str, digest: str) -> tuple[Path, Path]:
    """The ``.npy`` and ``.json`` paths of one cache entry."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)
    stem = f"{safe}-{kind}-{digest[:16]}"
    return cache_dir / f"{stem}.npy", cache_dir / f"{stem}.json"


def _progress(total: int, label: str, enabled: bool) -> Any:
    """A rich progress bar (to stderr), or ``None`` when disabled."""
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )


def embed_texts(
    embedder: Embedder,
    ids: Sequence[str],
    texts: Sequence[str],
    *,
    kind: EmbedKind = "passage",
    cache_dir: Path | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: bool = True,
    label: str = "embedding",
) -> Embedded:
    """Embed ``texts`` (see :class:`Embedded`), through the cache when ``cache_dir`` is set.

    A matching cached entry is loaded; otherwise the texts are embedded in
    batches of ``batch_size`` and the entry is written.
    """
    if len(ids) != len(texts):
        raise ValidationError(f"{len(ids)} ids but {len(texts)} texts", field="texts")
    if batch_size < 1:
        raise ValidationError(f"batch_size must be >= 1, got {batch_size}", field="batch_size")
    digest = texts_digest(ids, texts)
    paths = cache_paths(cache_dir, embedder.model_id, kind, digest) if cache_dir else None
    if paths and paths[0].is_file() and paths[1].is_file():
        meta = json.loads(paths[1].read_text(encoding="utf-8"))
        matrix = np.load(paths[0], allow_pickle=False)
        if (
            meta.get("digest") != digest
            or meta.get("model_id") != embedder.model_id
            or matrix.shape != (len(ids), embedder.dim)
            or matrix.dtype != np.float32
        ):
            raise SearchIndexError(
                f"embedding cache {str(paths[0])!r} does not match its sidecar; delete it and rerun"
            )
        cpu = meta.get("cpu_seconds")
        return Embedded(matrix, float(meta.get("seconds", 0.0)), None if cpu is None else float(cpu), True)
    blocks: list[FloatMatrix] = []
    bar = _progress(len(texts), label, progress)
    start, cpu_start = time.perf_counter(), time.process_time()
    if bar is not None:
        bar.start()
        task = bar.add_task(f"{label} ({embedder.model_id})", total=len(texts))
    try:
        for offset in range(0, len(texts), batch_size):
            batch = list(texts[offset : offset + batch_size])
            vectors = embedder.embed_batch(batch, kind=kind)
            check_vectors(vectors, embedder)
            blocks.append(np.asarray(vectors, dtype=np.float32))
            if bar is not None:
                bar.advance(task, len(batch))
    finally:
        if bar is not None:
            bar.stop()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    matrix = np.vstack(blocks) if blocks else np.zeros((0, embedder.dim), dtype=np.float32)
    if paths:
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        tmp = paths[0].with_name(paths[0].stem + ".tmp.npy")
        np.save(tmp, matrix, allow_pickle=False)
        os.replace(tmp, paths[0])
        meta = {
            "model_id": embedder.model_id,
            "kind": kind,
            "count": len(ids),
            "dim": embedder.dim,
            "digest": digest,
            "seconds": round(seconds, 3),
            "cpu_seconds": round(cpu_seconds, 3),
        }
        paths[1].write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    return Embedded(matrix, seconds, cpu_seconds, False)
