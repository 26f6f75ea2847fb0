"""Retrieval benchmark over a BEIR folder: bm25, dense, hybrid and hybrid+rerank.

Channels (each returns the top ``depth`` = 100 documents per query):

- ``bm25``: :class:`~veracity.index.lexical.BM25Index` (Lucene variant) over the
  analyzer's tokens of ``title + " " + text``. The analyzer is the zh/en
  tokenizer, or for English corpora the Lucene-like English analyzer
  (:mod:`veracity.text.english`); ``auto`` picks by the share of CJK letters.
- ``dense``: :class:`~veracity.index.dense.DenseIndex` over the embedder's
  passage vectors (embedded in batches, cached on disk).
- ``hybrid``: reciprocal rank fusion (k = 60) of bm25 top-100 and dense top-100,
  cut to 100.
- ``hybrid+rerank``: the explainable reranker's pure parts over the hybrid top-100
  (:mod:`.tuning`).
- ``hybrid+rerank+reader`` (not by default: it reads about 80 sentence pairs a query): the
  shipped sentence reader rereads the first 8 of ``hybrid+rerank`` sentence by sentence and
  orders them by its belief (:mod:`veracity.pipeline.reread`, the engine's ``ChooserReranker``).

BM25 ``k1``/``b`` (Anserini's 0.9/0.4 or Lucene's 1.2/0.75) and the rerank
weights are chosen on a *tuning* split (the folder's ``train`` split when there
is one, or a folder given by the caller), never on the evaluated queries. With
no tuning split, the defaults are Anserini's BM25 and :class:`.tuning.PartWeights`.

Metrics per channel (:mod:`veracity.evaluate.metrics`, averaged over queries with
at least one relevant document): nDCG@10, Recall@5/10/100, MRR@10. Timings: index
build seconds and per-query latency p50/p95 in ms; dense query embedding is
reported apart from search.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..evaluate.metrics import aggregate, ndcg_at_k, recall_at_k, reciprocal_rank
from ..index.dense import ALL as DENSE_ALL
from ..index.dense import DenseIndex, Embedder
from ..index.lexical import ALL as BM25_ALL
from ..index.lexical import BM25Index
from ..model.errors import ConfigError
from ..pipeline.fusion import reciprocal_rank_fusion
from ..text.tokens import tokenize
from .beir import BeirDataset
from .embedcache import embed_texts
from .tuning import PartWeights, candidate_parts, query_subquestions, rerank_order

CHANNELS = ("bm25", "dense", "hybrid", "hybrid+rerank", "hybrid+rerank+reader")
DEFAULT_CHANNELS = CHANNELS[:4]
ANALYZERS = ("auto", "default", "english")
BM25_CANDIDATES: tuple[tuple[float, float], ...] = ((0.9, 0.4), (1.2, 0.75))
"""(k1, b): Anserini's defaults, then Lucene's / Elasticsearch's."""
METRIC_NAMES = ("ndcg@10", "recall@5", "recall@10", "recall@100", "mrr@10")
LATENCY_SAMPLE = 100
"""Queries embedded one at a time to measure query-embedding latency."""


@dataclass(frozen=True)
class BenchSettings:
    """What to run. ``bm25`` / ``rerank`` of ``None`` mean "tune, else default"."""

    channels: tuple[str, ...] = DEFAULT_CHANNELS
    embedder: str = "use"
    analyzer: str = "auto"
    bm25: tuple[float, float] | None = None
    rerank: PartWeights | None = None
    depth: int = 100
    rrf_k: int = 60
    max_queries: int | None = None
    cache_dir: Path | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        """Validate channels and analyzer (``ConfigError`` lists the valid values)."""
        bad = [c for c in self.channels if c not in CHANNELS]
        if bad or not self.channels:
            raise ConfigError(
                f"unknown channel {bad[0] if bad else ''!r}; valid values: {', '.join(CHANNELS)}"
            )
        if self.analyzer not in ANALYZERS:
            raise ConfigError(f"unknown analyzer {self.analyzer!r}; valid values: {', '.join(ANALYZERS)}")
        if self.max_queries is not None and self.max_queries < 1:
            raise ConfigError(f"max_queries must be >= 1, got {self.max_queries}")

    @property
    def needs_dense(self) -> bool:
        """Whether any chosen channel uses the embedder."""
        return any(c != "bm25" for c in self.channels)


def resolve_analyzer(name: str, texts: Sequence[str]) -> tuple[str, Callable[[str], list[str]]]:
    """``(name, tokenize function)``; ``auto`` is ``english`` when under 5% of letters are CJK."""
    if name == "auto":
        from ..text.english import cjk_share, stemming_available

        name = "english" if cjk_share(list(texts)) < 0.05 and stemming_available() else "default"
    if name == "english":
        from ..text.english import tokenize_en

        return name, tokenize_en
    return "default", tokenize


def percentiles(values_ms: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of ``values_ms`` (ms, rounded to 0.001)."""
    if not values_ms:
        return {"p50": 0.0, "p95": 0.0}
    arr = np.asarray(values_ms, dtype=np.float64)
    return {"p50": round(float(np.percentile(arr, 50)), 3), "p95": round(float(np.percentile(arr, 95)), 3)}


def score_run(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, float | None]:
    """Mean metrics of a run (``query id -> ranked ids``) over queries with a relevant document."""
    per: dict[str, list[float | None]] = {name: [] for name in METRIC_NAMES}
    for query_id, relevant in qrels.items():
        ranked = list(run.get(query_id, ()))
        grades = {doc_id: float(grade) for doc_id, grade in relevant.items()}
        per["ndcg@10"].append(ndcg_at_k(ranked, grades, 10))
        for k in (5, 10, 100):
            per[f"recall@{k}"].append(recall_at_k(ranked, grades, k))
        per["mrr@10"].append(reciprocal_rank(ranked, grades, 10))
    return {name: aggregate(values) for name, values in per.items()}


class CorpusIndexes:
    """BM25 and dense indexes over one corpus, with build timings."""

    def __init__(
        self,
        dataset: BeirDataset,
        analyzer: Callable[[str], list[str]],
        embedder: Embedder | None,
        settings: BenchSettings,
    ) -> None:
        """Tokenize the corpus and, with an embedder, embed it (cached) and index the vectors."""
        self.dataset = dataset
        self.analyzer = analyzer
        self.embedder = embedder
        self.ids = sorted(dataset.corpus)
        start = time.perf_counter()
        self.tokens = [analyzer(dataset.corpus[doc_id]) for doc_id in self.ids]
        self.tokenize_s = time.perf_counter() - start
        self.doc_terms = {d: frozenset(t) for d, t in zip(self.ids, self.tokens, strict=True)}
        self._bm25: dict[tuple[float, float], tuple[BM25Index, float]] = {}
        self.dense: DenseIndex | None = None
        self.embed_s = self.dense_build_s = 0.0
        self.embed_cpu_s: float | None = None
        self.embed_cached = False
        if embedder is not None:
            matrix, self.embed_s, self.embed_cpu_s, self.embed_cached = embed_texts(
                embedder,
                self.ids,
                [dataset.corpus[d] for d in self.ids],
                kind="passage",
                cache_dir=settings.cache_dir,
                progress=settings.progress,
                label=f"{dataset.name} passages",
            )
            start = time.perf_counter()
            self.dense = DenseIndex.build(self.ids, matrix, embedder.model_id)
            self.dense_build_s = time.perf_counter() - start

    def bm25(self, params: tuple[float, float]) -> tuple[BM25Index, float]:
        """The BM25 index with ``(k1, b)`` and its build seconds (tokenizing included)."""
        if params not in self._bm25:
            start = time.perf_counter()
            index = BM25Index.build(
                zip(self.ids, self.tokens, strict=True), k1=params[0], b=params[1], variant="lucene"
            )
            self._bm25[params] = (index, time.perf_counter() - start + self.tokenize_s)
        return self._bm25[params]

    def cosines(self, vector: np.ndarray, ids: Sequence[str]) -> list[float]:
        """Cosine of ``vector`` with each of ``ids`` (0.0 without a dense index)."""
        if self.dense is None:
            return [0.0] * len(ids)
        rows = np.stack([self.dense.vector(doc_id) for doc_id in ids]) if ids else np.zeros((0, 1))
        return (rows @ vector).tolist() if ids else []


@dataclass
class ChannelRuns:
    """Ranked ids per query for each channel, plus per-query latencies in ms."""

    runs: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    latency_ms: dict[str, list[float]] = field(default_factory=dict)

    def add(self, channel: str, query_id: str, hits: Sequence[tuple[str, float]], ms: float) -> None:
        """Record one query's hits and latency on ``channel``."""
        self.runs.setdefault(channel, {})[query_id] = [doc_id for doc_id, _ in hits]
        self.scores.setdefault(channel, {})[query_id] = [score for _, score in hits]
        self.latency_ms.setdefault(channel, []).append(ms)


def run_queries(
    indexes: CorpusIndexes,
    queries: Mapping[str, str],
    query_vectors: Mapping[str, np.ndarray],
    *,
    bm25_params: tuple[float, float],
    weights: PartWeights,
    channels: Sequence[str],
    settings: BenchSettings,
    english: bool,
    keep_parts: bool = False,
) -> tuple[ChannelRuns, dict[str, tuple[list[str], np.ndarray]]]:
    """Run every channel for every query; optionally keep the rerank parts (for tuning)."""
    index, _ = indexes.bm25(bm25_params)
    depth = settings.depth
    out = ChannelRuns()
    parts_of: dict[str, tuple[list[str], np.ndarray]] = {}
    want = set(channels)
    for query_id, text in queries.items():
        start = time.perf_counter()
        tokens = indexes.analyzer(text)
        lexical = index.search(tokens, k=depth, allowed=BM25_ALL)
        bm25_ms = (time.perf_counter() - start) * 1000
        if "bm25" in want:
            out.add("bm25", query_id, lexical, bm25_ms)
        if indexes.dense is None or not want - {"bm25"}:
            continue
        vector = query_vectors[query_id]
        start = time.perf_counter()
        semantic = indexes.dense.search(vector, k=depth, allowed=DENSE_ALL)
        dense_ms = (time.perf_counter() - start) * 1000
        if "dense" in want:
            out.add("dense", query_id, [(h.id, h.score) for h in semantic], dense_ms)
        start = time.perf_counter()
        fused = reciprocal_rank_fusion(
            {"lexical": [d for d, _ in lexical], "semantic": [h.id for h in semantic]}, k=settings.rrf_k
        )[:depth]
        fuse_ms = (time.perf_counter() - start) * 1000
        out.add("hybrid", query_id, fused, bm25_ms + dense_ms + fuse_ms)
        if want & {"hybrid+rerank", "hybrid+rerank+reader"} or keep_parts:
            start = time.perf_counter()
            subqs = query_subquestions(text, indexes.analyzer, english=english)
            ids = [d for d, _ in fused]
            bm25_scores = dict(lexical)
            missing = [d for d in ids if d not in bm25_scores]
            if missing:  # candidates that only the dense channel found: score them exactly
                bm25_scores.update(index.scores(tokens, allowed=missing))
            cosines = indexes.cosines(vector, ids)
            parts = candidate_parts(subqs, fused, indexes.doc_terms, cosines, bm25_scores)
            reranked = rerank_order(ids, parts, weights)
            rerank_ms = (time.perf_counter() - start) * 1000
            out.add("hybrid+rerank", query_id, reranked, bm25_ms + dense_ms + fuse_ms + rerank_ms)
            if "hybrid+rerank+reader" in want:
                start = time.perf_counter()
                reread = reread_order(indexes.dataset, text, reranked)
                reread_ms = (time.perf_counter() - start) * 1000
                total_ms = bm25_ms + dense_ms + fuse_ms + rerank_ms + reread_ms
                out.add("hybrid+rerank+reader", query_id, reread, total_ms)
            if keep_parts:
                parts_of[query_id] = (ids, parts)
    return out, parts_of


def reread_order(
    dataset: BeirDataset, question: str, ranked: Sequence[tuple[str, float]]
) -> list[tuple[str, float]]:
    """``ranked`` after the shipped sentence reader rereads its head (:mod:`veracity.pipeline.reread`),
    ties by id."""
    from ..pipeline.reread import REREAD_DEPTH, passage_beliefs, reread_scores
    from ..reader.choice import package_chooser

    head = [doc_id for doc_id, _ in ranked[:REREAD_DEPTH]]
    passages = [(dataset.titles.get(d, ""), dataset.texts.get(d, dataset.corpus[d])) for d in head]
    beliefs = passage_beliefs(package_chooser(), question, passages)
    scores = reread_scores([score for _, score in ranked], beliefs)
    order = sorted(range(len(ranked)), key=lambda i: (-scores[i], ranked[i][0]))
    return [(ranked[i][0], scores[i]) for i in order]


def embed_queries(
    embedder: Embedder, dataset: BeirDataset, settings: BenchSettings, query_ids: Sequence[str]
) -> tuple[dict[str, np.ndarray], list[float]]:
    """Query vectors (batched, cached) and single-query embedding latencies (ms) on a sample."""
    texts = [dataset.queries[q] for q in query_ids]
    matrix = embed_texts(
        embedder,
        list(query_ids),
        texts,
        kind="query",
        cache_dir=settings.cache_dir,
        progress=settings.progress,
        label=f"{dataset.name} queries",
    ).vectors
    latencies = []
    for text in texts[:LATENCY_SAMPLE]:
        start = time.perf_counter()
        embedder.embed_batch([text], kind="query")
        latencies.append((time.perf_counter() - start) * 1000)
    return dict(zip(query_ids, matrix, strict=True)), latencies
