"""The search methods both SQL indexes share: checks, empty answers, and the final ranking.

:class:`SearchEntry` gives :class:`~veracity.index.sqlite.search.SQLiteSearchIndex` and
:class:`~veracity.index.postgres.search.PostgresSearchIndex` their ``lexical_search`` and
``dense_search``: ``k`` and the query are checked, the index model is matched against the
query's, and nothing eligible means nothing found, the same way on both engines; then the
engine's own plan (``_lexical``, ``_dense``, ``_frequencies``) looks :class:`Among` them. :func:`best_first`
is the one cut both plans end with, so equal scores are ordered alike on both.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ...model.errors import EmbedderMismatchError, SearchIndexError, ValidationError
from ..dense import normalized_rows
from .fts import check_query_tokens
from .views import IndexState
from .writer import VectorModel

__all__ = ["Among", "Frequencies", "Hits", "SearchEntry", "Vector", "best_first", "check_k", "model_query"]

Hits = list[tuple[str, float]]
"""``(chunk_id, score)`` pairs, best first."""

Frequencies = tuple[int, dict[str, int]]
"""The eligible chunk count, and how many of them hold each term."""

Vector = npt.NDArray[np.float32]


class Among(NamedTuple):
    """Where a checked search looks, as an engine's plan receives it (a plan may unpack it)."""

    tenant: str
    eligible_document_ids: Collection[str]
    """Never empty: an empty set is answered before any plan runs."""


def check_k(k: int) -> None:
    """``ValidationError`` unless ``k`` is a whole number of results, at least one."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValidationError(f"k must be an integer >= 1, got {k!r}", field="k")


def model_query(
    model: VectorModel | None, model_id: str, query_vector: npt.NDArray[np.float32]
) -> tuple[VectorModel, npt.NDArray[np.float32]]:
    """The index's model and the query as a unit row of it (both backends check the same way).

    ``SearchIndexError`` when the index holds no vectors; ``EmbedderMismatchError`` for a query
    embedded by another model or of another width.
    """
    if model is None:
        raise SearchIndexError("the index holds no vectors; sync it with an embedder first")
    if model_id != model.model_id:
        raise EmbedderMismatchError(
            f"query embedded with {model_id!r} but the index holds vectors of {model.model_id!r}; "
            "use the index's model"
        )
    query = np.asarray(query_vector, dtype=np.float32)
    if query.ndim != 1 or query.shape[0] != model.dim:
        raise EmbedderMismatchError(
            f"query vector of shape {query.shape} does not fit {model.model_id!r} (dim {model.dim})"
        )
    return model, normalized_rows(query[None, :], what="query_vector")[0]


def best_first(chunk_ids: Sequence[str], scores: Sequence[float], k: int) -> Hits:
    """The best ``k`` of ``(chunk_id, score)`` pairs, highest score first, ties by chunk id."""
    ranked = sorted(zip((-score for score in scores), chunk_ids, strict=True))
    return [(chunk_id, -negative) for negative, chunk_id in ranked[:k]]


class SearchEntry:
    """``lexical_search`` and ``dense_search`` of a SQL index (a mixin; see the module docstring)."""

    _state: Callable[[], IndexState]
    _model: Callable[[IndexState], VectorModel | None]
    _lexical: Callable[[IndexState, Among, Sequence[str], int], Hits]
    """The engine's BM25 ``(state, among, query_tokens, k)``; the tokens are not empty."""
    _dense: Callable[[IndexState, Among, VectorModel, Vector, int], Hits]
    """The engine's cosine top ``k`` ``(state, among, model, query as a unit row of the model, k)``."""
    _frequencies: Callable[[IndexState, Among, Sequence[str]], Frequencies]
    """The engine's statistics ``(state, among, terms)``: every term of ``terms`` a key."""

    def lexical_search(
        self, tenant: str, query_tokens: Sequence[str], *, k: int, eligible_document_ids: Collection[str]
    ) -> Hits:
        """BM25 (lucene, statistics over the eligible chunks) among the eligible chunks; scores > 0."""
        check_k(k)
        check_query_tokens(query_tokens)
        if not eligible_document_ids or not query_tokens:
            return []
        return self._lexical(self._state(), Among(tenant, eligible_document_ids), query_tokens, int(k))

    def dense_search(
        self,
        tenant: str,
        query_vector: Vector,
        *,
        k: int,
        eligible_document_ids: Collection[str],
        model_id: str,
    ) -> Hits:
        """Cosine top ``k`` among the eligible documents' chunks of ``tenant``, ties by chunk id.

        The query is checked against the index model even when nothing is eligible, so a
        mismatched embedder is reported whatever the principal may read.
        """
        check_k(k)
        state = self._state()
        model, query = model_query(self._model(state), model_id, query_vector)
        if not eligible_document_ids:
            return []
        return self._dense(state, Among(tenant, eligible_document_ids), model, query, int(k))

    def document_frequencies(
        self, tenant: str, terms: Sequence[str], *, eligible_document_ids: Collection[str]
    ) -> Frequencies:
        """Eligible chunk count and per-term chunk frequencies among them (see ``SearchBackend``)."""
        if not eligible_document_ids:
            return 0, dict.fromkeys(terms, 0)
        return self._frequencies(self._state(), Among(tenant, eligible_document_ids), terms)
