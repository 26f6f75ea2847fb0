"""A BM25 index over token lists, scored strictly inside an allowed set.

Language-neutral: it indexes ``(id, tokens)`` pairs (tokens from
:func:`veracity.text.tokens.tokenize`). Layout: vocabulary (term -> int), postings in CSR
form (``indptr`` per term; document positions and term frequencies), document
lengths. Each posting's *impact* (the term's BM25 contribution to that document)
is computed at build time; a query sums its terms' impacts with numpy and
selects the top k with a partition.

Rules that callers rely on:

- **Scoring happens only inside ``allowed``.** ``allowed`` is a required keyword:
  a collection of ids, a boolean mask over :attr:`BM25Index.ids`, or the explicit
  :data:`ALL` sentinel. ``None`` is refused (fail closed). Postings of documents
  outside the allowed set are skipped before any query score is formed.
- **Term statistics are per index by default** (``statistics=TermStatistics.INDEX``):
  IDF and the average document length come from every document in the index,
  so a document's score does not depend on who else is allowed (what a public
  benchmark compares against). With ``statistics=TermStatistics.ALLOWED`` they
  come from the allowed documents only (``lucene`` variant): a document outside
  the allowed set then changes no score at all, so scores cannot tell an asker
  which words the documents they may not see contain. The retrieval pipeline
  searches that way.
- **A repeated query term counts once per occurrence** (as ``rank_bm25`` does):
  ``["a", "a"]`` scores twice ``["a"]``.
- :meth:`BM25Index.search` returns only documents with a score > 0; ties break by
  id ascending.

Variants (``variant=``):

- ``"lucene"``: idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
  contribution = idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)).
- ``"okapi"``: ``rank_bm25.BM25Okapi`` semantics: idf = ln((N - df + 0.5) / (df + 0.5)),
  where a negative idf is replaced by ``0.25`` times the average idf over the
  vocabulary; contribution = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final

import numpy as np

from ..model.contracts import parse_enum
from ..model.errors import ConfigError, SearchIndexError, ValidationError

FORMAT: Final = "veracity.bm25"
FORMAT_VERSION: Final = 1
OKAPI_EPSILON: Final = 0.25
"""A term in over half the chunks gets this share of the mean IDF instead of a negative one
(rank_bm25's BM25Okapi floor, kept so both give the same scores)."""
# Queries with fewer postings than len(index) / _SPARSE_RATIO sum sparsely, others densely.
_SPARSE_RATIO: Final = 48


def sum_by_position(
    position_parts: Sequence[np.ndarray],
    weight_parts: Sequence[np.ndarray],
    n: int,
    *,
    dense_share: int,
    all_positive: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct positions (ascending) among ``position_parts`` and the sum of their weights.

    Few postings (fewer than ``n / dense_share``) are sorted and summed; more are summed into one
    slot per position, the same sums in the same order. With ``all_positive`` a summed slot above 0
    is a touched one; otherwise the touched slots are marked.
    """
    if not position_parts:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float64)
    if len(position_parts) == 1:
        return position_parts[0], weight_parts[0]
    every, weights = np.concatenate(position_parts), np.concatenate(weight_parts)
    if every.size * dense_share < n:
        positions, inverse = np.unique(every, return_inverse=True)
        return positions, np.bincount(inverse, weights=weights, minlength=positions.size)
    sums = np.bincount(every, weights=weights, minlength=n)
    if all_positive:
        positions = np.flatnonzero(sums > 0)
    else:
        touched = np.zeros(n, dtype=bool)
        touched[every] = True
        positions = np.flatnonzero(touched)
    return positions, sums[positions]


class _AllDocuments:
    """Type of :data:`ALL`."""

    def __repr__(self) -> str:
        return "ALL"


ALL: Final = _AllDocuments()
"""Sentinel for ``allowed=ALL``: search every document in the index, explicitly."""

Allowed = Collection[str] | np.ndarray | _AllDocuments
"""What ``allowed`` accepts: ids, a boolean mask over ``BM25Index.ids``, or ``ALL``."""


class TermStatistics(StrEnum):
    """Which documents the IDF and the average length are computed over (see the module docstring)."""

    INDEX = "index"
    ALLOWED = "allowed"


class BM25Variant(StrEnum):
    """Which BM25 formula an index scores with (see the module docstring)."""

    LUCENE = "lucene"
    OKAPI = "okapi"


def _idf_lucene(df: np.ndarray, n: int) -> np.ndarray:
    return np.log1p((n - df + 0.5) / (df + 0.5))


def _idf_okapi(df: np.ndarray, n: int) -> np.ndarray:
    idf = np.log(n - df + 0.5) - np.log(df + 0.5)
    if idf.size:
        idf[idf < 0] = OKAPI_EPSILON * float(idf.mean())
    return idf


# variant -> (idf from document frequencies and N, k1 -> multiplier of tf in the numerator)
_VARIANTS: Final[Mapping[BM25Variant, tuple[Callable[..., np.ndarray], Callable[[float], float]]]] = {
    BM25Variant.LUCENE: (_idf_lucene, lambda k1: 1.0),
    BM25Variant.OKAPI: (_idf_okapi, lambda k1: k1 + 1.0),
}


def _check_params(k1: float, b: float) -> None:
    if not np.isfinite(k1) or k1 < 0:
        raise ConfigError(f"BM25 k1 must be a finite number >= 0, got {k1!r}")
    if not 0 <= b <= 1:
        raise ConfigError(f"BM25 b must be between 0 and 1 inclusive, got {b!r}")


class BM25Index:
    """An immutable BM25 index. Create with :meth:`build` or :meth:`from_arrays`."""

    def __init__(
        self,
        *,
        ids: Sequence[str],
        terms: Sequence[str],
        indptr: np.ndarray,
        doc_indices: np.ndarray,
        term_frequencies: np.ndarray,
        doc_lengths: np.ndarray,
        k1: float,
        b: float,
        variant: BM25Variant | str,
    ) -> None:
        """Assemble an index from checked parts; use :meth:`build` or :meth:`from_arrays`."""
        _check_params(k1, b)
        self._variant = parse_enum(BM25Variant, variant, what="BM25 variant")
        self._k1, self._b = float(k1), float(b)
        self._ids = tuple(ids)
        self._terms = tuple(terms)
        self._id_pos = {doc_id: pos for pos, doc_id in enumerate(self._ids)}
        self._vocab = {term: pos for pos, term in enumerate(self._terms)}
        if len(self._id_pos) != len(self._ids):
            dup = next(i for i, n in Counter(self._ids).items() if n > 1)
            raise ValidationError(f"duplicate document id {dup!r} in BM25 index", field="id")
        if len(self._vocab) != len(self._terms):
            raise SearchIndexError("BM25 vocabulary has duplicate terms; rebuild the index")
        rank = np.empty(len(self._ids), dtype=np.int64)
        rank[sorted(range(len(self._ids)), key=self._ids.__getitem__)] = np.arange(len(self._ids))
        self._id_rank, self._indptr, self._docs = rank, indptr, doc_indices
        self._tf, self._lengths = term_frequencies, doc_lengths
        self._bounds: list[int] = indptr.tolist()  # fast scalar access per query term
        self._impacts = self._compute_impacts()
        self._positive = bool((self._impacts > 0).all())
        for array in (rank, indptr, doc_indices, term_frequencies, doc_lengths, self._impacts):
            array.setflags(write=False)

    def _compute_impacts(self) -> np.ndarray:
        n = len(self._ids)
        idf_of, numerator = _VARIANTS[self._variant]
        idf = idf_of(np.diff(self._indptr).astype(np.float64), n)
        avgdl = float(self._lengths.sum()) / n if n else 0.0
        norm = self._k1 * (1.0 - self._b + self._b * self._lengths / (avgdl or 1.0))
        tf = self._tf.astype(np.float64)
        term_of = np.repeat(np.arange(len(self._terms)), np.diff(self._indptr))
        return idf[term_of] * (tf * numerator(self._k1)) / (tf + norm[self._docs])

    @classmethod
    def build(
        cls,
        docs: Iterable[tuple[str, Sequence[str]]],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        variant: BM25Variant | str = BM25Variant.LUCENE,
    ) -> BM25Index:
        """Index ``(id, tokens)`` pairs. Ids must be unique; ``k1 >= 0``, ``0 <= b <= 1``.

        Raises ``ConfigError`` for a bad ``k1``, ``b`` or ``variant`` and
        ``ValidationError`` for a duplicate id or tokens given as one string.
        """
        _check_params(k1, b)
        variant = parse_enum(BM25Variant, variant, what="BM25 variant")
        ids: list[str] = []
        lengths: list[int] = []
        flat: list[int] = []
        vocab: dict[str, int] = {}
        for doc_id, tokens in docs:
            if not isinstance(doc_id, str):
                raise ValidationError(f"document id must be a string, got {doc_id!r}", field="id")
            if isinstance(tokens, str):
                raise ValidationError(
                    "tokens must be a sequence of tokens, not one string; "
                    "tokenize with veracity.text.tokens.tokenize first",
                    document=doc_id,
                    field="tokens",
                )
            start = len(flat)
            flat.extend([vocab.setdefault(token, len(vocab)) for token in tokens])
            ids.append(doc_id)
            lengths.append(len(flat) - start)
        bad = next((t for t in vocab if not isinstance(t, str)), None)
        if bad is not None:
            raise ValidationError(f"every token must be a string, got {bad!r}", field="tokens")
        n, v = len(ids), len(vocab)
        term_ids = np.asarray(flat, dtype=np.int64)
        doc_of = np.repeat(np.arange(n, dtype=np.int64), lengths)
        keys, tf = np.unique(term_ids * max(n, 1) + doc_of, return_counts=True)
        indptr = np.zeros(v + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // max(n, 1), minlength=v), out=indptr[1:])
        return cls(
            ids=ids,
            terms=list(vocab),
            indptr=indptr,
            doc_indices=(keys % max(n, 1)).astype(np.int32),
            term_frequencies=tf.astype(np.int32),
            doc_lengths=np.asarray(lengths, dtype=np.int64),
            k1=k1,
            b=b,
            variant=variant,
        )

    def __len__(self) -> int:
        """Number of documents in the index."""
        return len(self._ids)

    @property
    def ids(self) -> tuple[str, ...]:
        """Document ids in index order (the order of a boolean ``allowed`` mask)."""
        return self._ids

    @property
    def variant(self) -> BM25Variant:
        """The scoring formula."""
        return self._variant

    def mask(self, allowed_ids: Iterable[str]) -> np.ndarray:
        """Boolean mask over :attr:`ids` for ``allowed_ids``; ids not in the index are ignored.

        Build it once and pass it as ``allowed`` to query many times cheaply.
        """
        if isinstance(allowed_ids, str):
            raise ValidationError("allowed ids must be a collection of ids, not one string", field="allowed")
        mask = np.zeros(len(self._ids), dtype=bool)
        pos = self._id_pos
        mask[[pos[i] for i in allowed_ids if i in pos]] = True
        return mask

    def _resolve_allowed(self, allowed: Allowed | None) -> np.ndarray | None:
        """``None`` stands for ALL internally; a caller's ``None`` is refused."""
        if allowed is ALL:
            return None
        if allowed is None:
            raise ValidationError(
                "allowed=None is refused; pass the allowed ids, a boolean mask, "
                "or ALL to search every document",
                field="allowed",
            )
        if isinstance(allowed, np.ndarray):
            if allowed.dtype != np.bool_ or allowed.shape != (len(self._ids),):
                raise ValidationError(
                    f"allowed mask must be bool of shape ({len(self._ids)},), "
                    f"got {allowed.dtype} {allowed.shape}",
                    field="allowed",
                )
            return allowed
        return self.mask(allowed)  # type: ignore[arg-type]

    def _query_terms(self, query_tokens: Sequence[str]) -> list[tuple[int, int, int]]:
        """``(postings start, end, occurrences)`` of each known query term, in the terms' text order.

        A document's score is a float sum over the terms, so their order is its rounding: text
        order (as the SQLite index reads postings) gives one document the same score in every
        index that holds it, whatever other documents gave the terms their numbers.
        """
        if isinstance(query_tokens, str):
            raise ValidationError(
                "query tokens must be a sequence of tokens, not one string", field="query_tokens"
            )
        counts: dict[str, int] = {}
        for token in query_tokens:
            if token in self._vocab:
                counts[token] = counts.get(token, 0) + 1
        bounds, vocab = self._bounds, self._vocab
        return [(bounds[vocab[t]], bounds[vocab[t] + 1], c) for t, c in sorted(counts.items())]

    def _allowed_impacts(self, mask: np.ndarray) -> Callable[[int, int, np.ndarray], np.ndarray]:
        """Impacts of postings from statistics over the documents in ``mask`` only (lucene)."""
        if self._variant is not BM25Variant.LUCENE:
            raise ConfigError(
                f"term statistics over the allowed documents need the lucene variant, "
                f"not {self._variant.value!r}; build the index with variant='lucene'"
            )
        n = int(np.count_nonzero(mask))
        avgdl = float(self._lengths[mask].sum()) / n if n else 0.0
        k1, b = self._k1, self._b

        def impacts(start: int, end: int, keep: np.ndarray) -> np.ndarray:
            idf = float(_idf_lucene(np.asarray(keep.size, dtype=np.float64), n))
            tf = self._tf[start:end][keep].astype(np.float64)
            lengths = self._lengths[self._docs[start:end][keep]]
            return idf * tf / (tf + k1 * (1.0 - b + b * lengths / (avgdl or 1.0)))

        return impacts

    def _accumulate(
        self, query_tokens: Sequence[str], mask: np.ndarray | None, statistics: TermStatistics
    ) -> tuple[np.ndarray, np.ndarray]:
        """Positions and scores of allowed documents that contain a query term.

        Positions are unique. Postings of documents outside ``mask`` are dropped
        before their impacts are read, so those documents are never scored.
        """
        allowed_impacts = (
            self._allowed_impacts(mask) if statistics is TermStatistics.ALLOWED and mask is not None else None
        )
        doc_parts, weight_parts = [], []
        for start, end, count in self._query_terms(query_tokens):
            docs = self._docs[start:end]
            if mask is None:
                weights = self._impacts[start:end]
            else:
                keep = np.flatnonzero(mask[docs])
                docs = docs[keep]
                weights = (
                    allowed_impacts(start, end, keep)
                    if allowed_impacts is not None
                    else self._impacts[start:end][keep]
                )
            doc_parts.append(docs)
            weight_parts.append(weights * count if count != 1 else weights)
        return sum_by_position(
            doc_parts, weight_parts, len(self._ids), dense_share=_SPARSE_RATIO, all_positive=self._positive
        )

    def search(
        self,
        query_tokens: Sequence[str],
        *,
        k: int = 10,
        allowed: Allowed,
        statistics: TermStatistics | str = TermStatistics.INDEX,
    ) -> list[tuple[str, float]]:
        """Top ``k`` ``(id, score)`` among ``allowed`` documents, best first, ties by id.

        Only documents with a score > 0 are returned. ``allowed`` is required:
        ids, a boolean mask over :attr:`ids`, or :data:`ALL`. ``statistics``
        says which documents IDF and average length come from.
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValidationError(f"k must be an integer >= 1, got {k!r}", field="k")
        mode = parse_enum(TermStatistics, statistics, what="term statistics")
        mask = self._resolve_allowed(allowed)
        positions, scores = self._accumulate(query_tokens, mask, mode)
        if not self._positive:  # otherwise every touched document already scores > 0
            keep = scores > 0
            positions, scores = positions[keep], scores[keep]
        if positions.size > k:
            cut = positions.size - k
            kth = np.partition(scores, cut)[cut]  # the k-th largest score
            top = scores >= kth  # keep every tie at the boundary for the id tie-break
            positions, scores = positions[top], scores[top]
        order = np.lexsort((self._id_rank[positions], -scores))[:k]
        ids = self._ids
        return [(ids[p], s) for p, s in zip(positions[order].tolist(), scores[order].tolist(), strict=True)]

    def document_frequencies(self, terms: Sequence[str], *, allowed: Allowed) -> tuple[int, dict[str, int]]:
        """How many ``allowed`` documents there are, and how many of them hold each term.

        Terms outside the vocabulary count 0. ``allowed`` is required, as in :meth:`search`.
        """
        mask = self._resolve_allowed(allowed)
        total = len(self._ids) if mask is None else int(mask.sum())
        found: dict[str, int] = {}
        for term in dict.fromkeys(terms):
            position = self._vocab.get(term)
            if position is None:
                found[term] = 0
                continue
            docs = self._docs[self._bounds[position] : self._bounds[position + 1]]
            found[term] = int(docs.size if mask is None else mask[docs].sum())
        return total, found

    def scores(
        self,
        query_tokens: Sequence[str],
        *,
        allowed: Allowed,
        statistics: TermStatistics | str = TermStatistics.INDEX,
    ) -> dict[str, float]:
        """Score of every allowed document (0.0 when it contains no query term).

        Keys follow index order. ``allowed`` and ``statistics`` as in :meth:`search`.
        """
        mode = parse_enum(TermStatistics, statistics, what="term statistics")
        mask = self._resolve_allowed(allowed)
        positions, values = self._accumulate(query_tokens, mask, mode)
        every = range(len(self._ids)) if mask is None else np.flatnonzero(mask).tolist()
        ids = self._ids
        result = dict.fromkeys((ids[p] for p in every), 0.0)
        for p, s in zip(positions.tolist(), values.tolist(), strict=True):
            result[ids[p]] = s
        return result

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Plain numpy arrays (save as ``.npy``) and JSON-able metadata (save as ``.json``).

        Impacts are not stored; :meth:`from_arrays` recomputes them from the raw counts.
        """
        arrays = {
            "indptr": self._indptr,
            "doc_indices": self._docs,
            "term_frequencies": self._tf,
            "doc_lengths": self._lengths,
        }
        meta = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "variant": self._variant.value,
            "k1": self._k1,
            "b": self._b,
            "ids": list(self._ids),
            "vocabulary": list(self._terms),
        }
        return arrays, meta

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> BM25Index:
        """Rebuild an index from :meth:`to_arrays` output; raises ``SearchIndexError`` if malformed."""
        if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
            raise SearchIndexError(
                f"not a {FORMAT} v{FORMAT_VERSION} index: format={meta.get('format')!r}, "
                f"version={meta.get('format_version')!r}; rebuild the index"
            )
        if missing := {"ids", "vocabulary", "k1", "b", "variant"} - set(meta):
            raise SearchIndexError(f"BM25 index metadata lacks {sorted(missing)}; rebuild the index")
        names = ("indptr", "doc_indices", "term_frequencies", "doc_lengths")
        parts = [np.asarray(arrays.get(name, ())) for name in names]
        if any(part.ndim != 1 or part.dtype.kind not in "iu" for part in parts):
            raise SearchIndexError(f"BM25 index needs 1-d integer arrays {', '.join(names)}")
        indptr, docs, tf, lengths = (part.astype(np.int64) for part in parts)
        ids, terms = list(meta["ids"]), list(meta["vocabulary"])
        n, nnz = len(ids), docs.size
        if (
            indptr.size != len(terms) + 1
            or indptr[0] != 0
            or indptr[-1] != nnz
            or (np.diff(indptr) < 0).any()
            or tf.size != nnz
            or lengths.size != n
            or (nnz and (docs.min() < 0 or docs.max() >= n or tf.min() < 1))
            or (n and lengths.min() < 0)
        ):
            raise SearchIndexError("BM25 index arrays are inconsistent with each other; rebuild")
        return cls(
            ids=ids,
            terms=terms,
            indptr=indptr,
            doc_indices=docs.astype(np.int32),
            term_frequencies=tf.astype(np.int32),
            doc_lengths=lengths,
            k1=float(meta["k1"]),
            b=float(meta["b"]),
            variant=meta["variant"],
        )
