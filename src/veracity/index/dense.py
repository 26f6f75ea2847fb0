"""Dense vectors: the ``Embedder`` protocol and an exact cosine index.

The index holds one float32 row per id, L2-normalized, so a dot product is the
cosine. Rows are kept in ascending id order; that makes "ties break by id" the
same as "ties break by row", and it makes saved files independent of the order
the caller passed the ids in.

Search is governed: the caller passes the ids it may see (``allowed``), and only
those rows are scored. Searching everything needs the explicit :data:`ALL`
sentinel; ``None`` or any other value is refused (fail closed).

On disk an index is three plain files in one folder (no pickle)::

    dense_vectors.npy     float32 (count, dim), rows in ascending id order
    dense_ids.json        the ids, same order
    dense_manifest.json   format, model_id, dim, normalization, count, digests
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._version import __version__
from ..model.contracts import file_sha256, replace_file
from ..model.errors import ConfigError, EmbedderMismatchError, SearchIndexError, ValidationError

FORMAT: Final = "veracity.dense"
FORMAT_VERSION: Final = 1
NORMALIZATION: Final = "l2"
VECTORS_FILE: Final = "dense_vectors.npy"
IDS_FILE: Final = "dense_ids.json"
MANIFEST_FILE: Final = "dense_manifest.json"

EmbedKind = Literal["query", "passage"]
"""Which side of an asymmetric model a text is embedded as."""

FloatMatrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors.

    ``model_id`` names the model *and* its version (for example
    ``"use-multilingual-v3@0.2.1"``); an index remembers it and refuses vectors
    from any other model. ``dim`` is the declared output width.

    ``embed_batch`` returns an array of shape ``(len(texts), dim)``, dtype
    float32, each row of unit L2 norm, the same for the same input on every
    call, and each row independent of the other texts in the batch. An empty
    batch gives shape ``(0, dim)``. ``kind`` tells asymmetric models (e5)
    whether the texts are search queries or passages; symmetric models ignore it.
    """

    model_id: str
    dim: int

    def embed_batch(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> FloatMatrix:
        """Embed ``texts``; see the class docstring for the guarantees."""
        ...


class _AllRows:
    """Type of :data:`ALL`; create no other instance."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ALL"


ALL: Final = _AllRows()
"""Pass as ``allowed`` to search every row. Nothing else means "everything"."""

Allowed = Collection[str] | _AllRows
"""The ids a search may score: a collection of ids, or :data:`ALL`."""


class DenseHit(NamedTuple):
    """One search result: the id and its cosine score."""

    id: str
    score: float


def check_vectors(vectors: npt.ArrayLike, embedder: Embedder) -> None:
    """Raise ``EmbedderMismatchError`` unless ``vectors`` is 2-D with ``embedder.dim`` columns."""
    shape = np.shape(vectors)
    if len(shape) != 2 or shape[1] != embedder.dim:
        raise EmbedderMismatchError(
            f"vectors of shape {shape} do not fit embedder {embedder.model_id!r} "
            f"(dim {embedder.dim}); embed them again with that embedder"
        )


def normalized_rows(vectors: npt.ArrayLike, *, what: str) -> FloatMatrix:
    """Return float32 rows scaled to unit L2 norm; reject non-finite or zero rows."""
    matrix = np.array(vectors, dtype=np.float32, copy=True)
    if matrix.ndim != 2:
        raise ValidationError(f"expected a 2-D array, got shape {matrix.shape}", field=what)
    if not np.isfinite(matrix).all():
        raise ValidationError("contains NaN or infinite values", field=what)
    norms = np.linalg.norm(matrix, axis=1)
    zero = np.flatnonzero(norms < 1e-12)
    if zero.size:
        raise ValidationError(f"row {int(zero[0])} has zero length", field=what)
    matrix /= norms[:, None]
    return matrix


class DenseIndex:
    """Exact cosine search over L2-normalized float32 rows, one per id.

    Build with :meth:`build` or :meth:`load`; the instance is read-only.
    """

    __slots__ = ("_ids", "_matrix", "_model_id", "_row_of")

    def __init__(self, ids: tuple[str, ...], matrix: FloatMatrix, model_id: str):
        """Internal: use :meth:`build` or :meth:`load`, which validate their input."""
        self._ids = ids
        self._matrix = matrix
        self._matrix.setflags(write=False)
        self._model_id = model_id
        self._row_of = {chunk_id: row for row, chunk_id in enumerate(ids)}

    # ----- construction -----
    @classmethod
    def build(cls, ids: Sequence[str], vectors: npt.ArrayLike, model_id: str) -> DenseIndex:
        """Index ``vectors[i]`` under ``ids[i]``, embedded by model ``model_id``.

        Rows are re-normalized to unit length (cosine scoring) and stored in
        ascending id order. Duplicate ids, a length mismatch, non-finite
        values or zero rows raise ``ValidationError``.
        """
        if not model_id:
            raise ValidationError("model_id must name the embedding model", field="model_id")
        id_list = [str(i) for i in ids]
        matrix = normalized_rows(vectors, what="vectors")
        if matrix.shape[0] != len(id_list):
            raise ValidationError(f"{len(id_list)} ids but {matrix.shape[0]} vectors", field="vectors")
        seen: set[str] = set()
        for chunk_id in id_list:
            if chunk_id in seen:
                raise ValidationError(f"duplicate id {chunk_id!r}", field="ids")
            seen.add(chunk_id)
        order = sorted(range(len(id_list)), key=id_list.__getitem__)
        sorted_matrix = np.ascontiguousarray(matrix[order]) if order else matrix
        return cls(tuple(id_list[i] for i in order), sorted_matrix, model_id)

    # ----- properties -----
    @property
    def model_id(self) -> str:
        """The model that produced the vectors."""
        return self._model_id

    @property
    def dim(self) -> int:
        """Vector width."""
        return int(self._matrix.shape[1])

    @property
    def ids(self) -> tuple[str, ...]:
        """Indexed ids in ascending order."""
        return self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._row_of

    def vector(self, chunk_id: str) -> FloatMatrix:
        """The stored (normalized, read-only) vector of ``chunk_id``."""
        try:
            return self._matrix[self._row_of[chunk_id]]
        except KeyError:
            raise SearchIndexError(f"id {chunk_id!r} is not in the dense index") from None

    def check_embedder(self, embedder: Embedder) -> None:
        """Raise ``EmbedderMismatchError`` unless ``embedder`` made this index's vectors."""
        if embedder.model_id != self._model_id or embedder.dim != self.dim:
            raise EmbedderMismatchError(
                f"index was built with {self._model_id!r} (dim {self.dim}) but the embedder "
                f"is {embedder.model_id!r} (dim {embedder.dim}); rebuild the index or "
                f"use the same embedder"
            )

    # ----- search -----
    def _allowed_rows(self, allowed: Allowed) -> npt.NDArray[np.intp] | None:
        """Sorted row numbers of ``allowed``; ``None`` means every row."""
        if isinstance(allowed, _AllRows):
            return None
        if allowed is None or isinstance(allowed, str | bytes) or not isinstance(allowed, Collection):
            raise ConfigError(
                f"allowed must be a collection of ids or veracity.index.dense.ALL, "
                f"got {allowed!r}; search never defaults to everything"
            )
        row_of = self._row_of
        rows = [row_of[i] for i in allowed if i in row_of]
        return np.array(sorted(set(rows)), dtype=np.intp)

    def search(
        self,
        query_vector: npt.ArrayLike,
        *,
        k: int,
        allowed: Allowed,
        model_id: str | None = None,
    ) -> list[DenseHit]:
        """Top ``k`` rows by cosine among ``allowed``, best first, ties by id ascending.

        Only rows whose id is in ``allowed`` are scored; ids not in the index
        are ignored. Pass :data:`ALL` to search every row. ``model_id``, when
        given, must equal the index's (``EmbedderMismatchError`` otherwise), as
        must the query's length.
        """
        if model_id is not None and model_id != self._model_id:
            raise EmbedderMismatchError(
                f"query embedded with {model_id!r} but the index was built with "
                f"{self._model_id!r}; rebuild the index or use the same embedder"
            )
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        rows = self._allowed_rows(allowed)
        query = np.asarray(query_vector, dtype=np.float32)
        if query.ndim != 1 or query.shape[0] != self.dim:
            raise EmbedderMismatchError(
                f"query vector of shape {query.shape} does not fit index {self._model_id!r} (dim {self.dim})"
            )
        query = normalized_rows(query[None, :], what="query_vector")[0]
        if rows is None:
            scores = self._matrix @ query
            candidates = np.arange(len(self._ids), dtype=np.intp)
        else:
            if rows.size == 0:
                return []
            scores = self._matrix[rows] @ query
            candidates = rows
        return self._top_k(scores, candidates, k)

    def search_text(self, text: str, *, embedder: Embedder, k: int, allowed: Allowed) -> list[DenseHit]:
        """Embed ``text`` as a query with ``embedder`` and :meth:`search` with it.

        Raises ``EmbedderMismatchError`` if ``embedder`` is not the index's model.
        """
        self.check_embedder(embedder)
        vector = embedder.embed_batch([text], kind="query")
        check_vectors(vector, embedder)
        return self.search(vector[0], k=k, allowed=allowed, model_id=embedder.model_id)

    def _top_k(self, scores: npt.NDArray[np.float32], rows: npt.NDArray[np.intp], k: int) -> list[DenseHit]:
        """Best ``k`` of ``scores`` (aligned with ascending ``rows``), ties by row = by id."""
        positions = np.arange(scores.shape[0])
        if k < scores.shape[0]:
            # keep everything that ties with the k-th best so the id tie-break is exact
            kth = np.partition(scores, scores.shape[0] - k)[scores.shape[0] - k]
            positions = np.flatnonzero(scores >= kth)
        order = positions[np.lexsort((positions, -scores[positions]))][:k]
        return [DenseHit(self._ids[rows[p]], float(scores[p])) for p in order]

    # ----- persistence -----
    def manifest(self) -> dict[str, Any]:
        """What the saved files hold (without the file digests)."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "model_id": self._model_id,
            "dim": self.dim,
            "normalization": NORMALIZATION,
            "metric": "cosine",
            "dtype": "float32",
            "count": len(self._ids),
            "veracity_version": __version__,
            "numpy_version": np.__version__,
        }

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the index into ``directory`` (created if missing); return the manifest path."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        vectors_path = folder / VECTORS_FILE
        tmp = folder / (VECTORS_FILE + ".tmp")
        with tmp.open("wb") as handle:
            np.save(handle, self._matrix, allow_pickle=False)
        os.replace(tmp, vectors_path)
        ids_bytes = json.dumps(list(self._ids), ensure_ascii=False).encode("utf-8")
        replace_file(folder / IDS_FILE, ids_bytes)
        manifest = self.manifest() | {
            "vectors_sha256": file_sha256(vectors_path),
            "ids_sha256": hashlib.sha256(ids_bytes).hexdigest(),
        }
        manifest_path = folder / MANIFEST_FILE
        text = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        replace_file(manifest_path, text.encode("utf-8"))
        return manifest_path

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, embedder: Embedder | None = None) -> DenseIndex:
        """Read an index written by :meth:`save`, checking the manifest against the files.

        With ``embedder``, also checks that it is the model the index was built
        with (``EmbedderMismatchError`` otherwise). A missing, altered or
        inconsistent file raises ``SearchIndexError``.
        """
        folder = Path(directory)
        try:
            manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
            ids_bytes = (folder / IDS_FILE).read_bytes()
            vectors_path = folder / VECTORS_FILE
            vectors_digest = file_sha256(vectors_path)
        except (OSError, ValueError) as exc:
            raise SearchIndexError(f"cannot read dense index in {str(folder)!r}: {exc}") from exc
        if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
            raise SearchIndexError(
                f"{str(folder)!r} holds format {manifest.get('format')!r} version "
                f"{manifest.get('format_version')!r}; expected {FORMAT!r} {FORMAT_VERSION}"
            )
        if manifest.get("normalization") != NORMALIZATION:
            raise SearchIndexError(f"unsupported normalization {manifest.get('normalization')!r}")
        if (
            manifest.get("vectors_sha256") != vectors_digest
            or manifest.get("ids_sha256") != hashlib.sha256(ids_bytes).hexdigest()
        ):
            raise SearchIndexError(
                f"dense index files in {str(folder)!r} do not match their manifest; rebuild it"
            )
        matrix = np.load(vectors_path, allow_pickle=False)
        ids = json.loads(ids_bytes.decode("utf-8"))
        count, dim = manifest.get("count"), manifest.get("dim")
        if (
            matrix.dtype != np.float32
            or matrix.shape != (count, dim)
            or len(ids) != count
            or list(ids) != sorted(ids)
            or len(set(ids)) != len(ids)
        ):
            raise SearchIndexError(
                f"dense index in {str(folder)!r} is inconsistent: vectors {matrix.shape} "
                f"{matrix.dtype}, {len(ids)} ids, manifest count {count} dim {dim}"
            )
        if count and not np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-3):
            raise SearchIndexError(f"dense index in {str(folder)!r} has rows that are not unit length")
        index = cls(tuple(str(i) for i in ids), matrix, str(manifest["model_id"]))
        if embedder is not None:
            index.check_embedder(embedder)
        return index


__all__ = [
    "ALL",
    "Allowed",
    "DenseHit",
    "DenseIndex",
    "EmbedKind",
    "Embedder",
    "check_vectors",
]
