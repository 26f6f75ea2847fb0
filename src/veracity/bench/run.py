"""Run a retrieval benchmark end to end: tune on a train split, evaluate, report.

:func:`benchmark_folder` is what ``veracity bench retrieval`` calls: it loads the
evaluated split, finds the tuning split (``train`` of the same folder when there
is one, or the folder the caller names), and calls :func:`run_benchmark`.
"""

from __future__ import annotations

import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..index.dense import Embedder
from ..index.embedders import make_embedder
from ..model.errors import ConfigError
from .beir import BeirDataset, available_splits, load_beir
from .retrieval import (
    BM25_CANDIDATES,
    BenchSettings,
    ChannelRuns,
    CorpusIndexes,
    embed_queries,
    percentiles,
    resolve_analyzer,
    run_queries,
    score_run,
)
from .tuning import PartWeights, pack_tuning, tune_weights


def tune(
    tuning: BeirDataset,
    analyzer_name: str,
    analyzer: Callable[[str], list[str]],
    embedder: Embedder | None,
    settings: BenchSettings,
    reuse: CorpusIndexes | None,
) -> dict[str, Any]:
    """Choose BM25 (k1, b) and rerank weights on ``tuning`` (never the evaluated queries)."""
    indexes = reuse or CorpusIndexes(tuning, analyzer, embedder, settings)
    english = analyzer_name == "english"
    bm25_rows = []
    for params in BM25_CANDIDATES:
        runs, _ = run_queries(
            indexes,
            tuning.queries,
            {},
            bm25_params=params,
            weights=PartWeights(),
            channels=("bm25",),
            settings=settings,
            english=english,
        )
        metrics = score_run(runs.runs["bm25"], tuning.qrels)
        bm25_rows.append({"k1": params[0], "b": params[1], "ndcg@10": metrics["ndcg@10"]})
    chosen = max(
        bm25_rows, key=lambda row: (row["ndcg@10"] or 0.0, -BM25_CANDIDATES.index((row["k1"], row["b"])))
    )
    result: dict[str, Any] = {
        "source": f"{tuning.name}:{tuning.split}",
        "queries": len(tuning.queries),
        "bm25": {"candidates": bm25_rows, "chosen": [chosen["k1"], chosen["b"]]},
    }
    if embedder is not None and settings.needs_dense:
        vectors, _ = embed_queries(embedder, tuning, settings, list(tuning.queries))
        _, parts_of = run_queries(
            indexes,
            tuning.queries,
            vectors,
            bm25_params=(float(chosen["k1"] or 0.0), float(chosen["b"] or 0.0)),
            weights=PartWeights(),
            channels=("hybrid",),
            settings=settings,
            english=english,
            keep_parts=True,
        )
        weights, ndcg, grid = tune_weights(pack_tuning(parts_of, tuning.qrels))
        result["rerank"] = {"weights": weights.to_dict(), "ndcg@10": ndcg, "grid_points": grid}
    return result


def run_benchmark(
    dataset: BeirDataset, settings: BenchSettings, *, tuning: BeirDataset | None = None
) -> tuple[dict[str, Any], ChannelRuns]:
    """Benchmark ``dataset`` and return the JSON-able report and the runs.

    ``tuning``: a dataset to choose BM25 parameters and rerank weights on
    (it must not contain the evaluated queries; ``ConfigError`` otherwise).
    """
    query_ids = (
        list(dataset.queries)[: settings.max_queries] if settings.max_queries else list(dataset.queries)
    )
    qrels = {q: dataset.qrels[q] for q in query_ids}
    queries = {q: dataset.queries[q] for q in query_ids}
    if tuning is not None and tuning.corpus_digest() == dataset.corpus_digest():
        overlap = set(tuning.queries) & set(queries)
        if overlap:
            raise ConfigError(f"tuning split shares {len(overlap)} queries with the evaluated split")
    analyzer_name, analyzer = resolve_analyzer(settings.analyzer, list(dataset.corpus.values()))
    embedder = make_embedder(settings.embedder) if settings.needs_dense else None
    indexes = CorpusIndexes(dataset, analyzer, embedder, settings)
    report: dict[str, Any] = {"tuning": None}
    bm25_params, weights = settings.bm25 or BM25_CANDIDATES[0], settings.rerank or PartWeights()
    if tuning is not None and (settings.bm25 is None or settings.rerank is None):
        same = tuning.corpus_digest() == dataset.corpus_digest()
        report["tuning"] = tune(
            tuning, analyzer_name, analyzer, embedder, settings, indexes if same else None
        )
        if settings.bm25 is None:
            k1, b = report["tuning"]["bm25"]["chosen"]
            bm25_params = (float(k1), float(b))
        if settings.rerank is None and "rerank" in report["tuning"]:
            w = report["tuning"]["rerank"]["weights"]
            weights = PartWeights(**w)
    vectors, embed_ms = embed_queries(embedder, dataset, settings, query_ids) if embedder else ({}, [])
    runs, _ = run_queries(
        indexes,
        queries,
        vectors,
        bm25_params=bm25_params,
        weights=weights,
        channels=settings.channels,
        settings=settings,
        english=analyzer_name == "english",
    )
    _, bm25_build_s = indexes.bm25(bm25_params)
    channels: dict[str, Any] = {}
    for channel in settings.channels:
        entry: dict[str, Any] = {
            "metrics": score_run(runs.runs.get(channel, {}), qrels),
            "latency_ms": percentiles(runs.latency_ms.get(channel, [])),
        }
        if channel == "bm25":
            entry["build_s"] = round(bm25_build_s, 3)
        else:
            dense_build = indexes.embed_s + indexes.dense_build_s
            entry["build_s"] = round(dense_build + (0 if channel == "dense" else bm25_build_s), 3)
            entry["embed_cached"] = indexes.embed_cached
            entry["query_embed_ms"] = percentiles(embed_ms)
        channels[channel] = entry
    alternatives = []
    for params in BM25_CANDIDATES:  # reported for information only; the choice came from tuning
        alt, _ = run_queries(
            indexes,
            queries,
            {},
            bm25_params=params,
            weights=weights,
            channels=("bm25",),
            settings=settings,
            english=analyzer_name == "english",
        )
        alternatives.append({"k1": params[0], "b": params[1], **score_run(alt.runs["bm25"], qrels)})
    report.update(
        {
            "dataset": {**dataset.describe(), "queries_evaluated": len(query_ids)},
            "analyzer": analyzer_name,
            "embedder": None
            if embedder is None
            else {
                "name": settings.embedder,
                "model_id": embedder.model_id,
                "dim": embedder.dim,
                "corpus_embed_s": round(indexes.embed_s, 3),
                "corpus_embed_cpu_s": None if indexes.embed_cpu_s is None else round(indexes.embed_cpu_s, 3),
                "corpus_docs_per_cpu_s": (
                    round(len(indexes.ids) / indexes.embed_cpu_s, 2) if indexes.embed_cpu_s else None
                ),
                "corpus_docs_per_s": round(len(indexes.ids) / indexes.embed_s, 2)
                if indexes.embed_s
                else None,
            },
            "settings": {
                "channels": list(settings.channels),
                "depth": settings.depth,
                "rrf_k": settings.rrf_k,
                "bm25": {"variant": "lucene", "k1": bm25_params[0], "b": bm25_params[1]},
                "rerank_weights": weights.to_dict(),
                "max_queries": settings.max_queries,
            },
            "channels": channels,
            "bm25_alternatives": alternatives,
            "software": {
                "veracity": __version__,
                "python": platform.python_version(),
                "numpy": np.__version__,
            },
        }
    )
    return report, runs


def resolve_tuning(folder: Path, split: str, tune_on: str | None) -> BeirDataset | None:
    """The tuning dataset: ``tune_on`` ("DIR[:SPLIT]", "none"), else the folder's ``train`` split.

    ``None`` when there is nothing to tune on. A tuning split equal to the
    evaluated split of the same folder is refused (``ConfigError``).
    """
    if tune_on is not None and tune_on.lower() == "none":
        return None
    if tune_on is None:
        if split != "train" and "train" in available_splits(folder):
            return load_beir(folder, "train")
        return None
    path, _, tune_split = tune_on.partition(":")
    tune_folder = Path(path)
    if not tune_split:
        splits = available_splits(tune_folder)
        tune_split = "train" if "train" in splits else (splits[0] if len(splits) == 1 else "")
        if not tune_split:
            raise ConfigError(
                f"--tune-on {tune_on!r}: name the split as DIR:SPLIT; splits: {', '.join(splits)}"
            )
    if tune_folder.resolve() == Path(folder).resolve() and tune_split == split:
        raise ConfigError(f"--tune-on {tune_on!r} is the evaluated split itself; tune on another split")
    return load_beir(tune_folder, tune_split)


def benchmark_folder(
    folder: str | Path, split: str, settings: BenchSettings, *, tune_on: str | None = None
) -> dict[str, Any]:
    """Load ``split`` of a BEIR folder, tune (see :func:`resolve_tuning`), run, return the report."""
    dataset = load_beir(folder, split)
    tuning = resolve_tuning(Path(folder), split, tune_on)
    report, _ = run_benchmark(dataset, settings, tuning=tuning)
    return report
