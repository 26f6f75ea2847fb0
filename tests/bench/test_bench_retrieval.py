"""``veracity bench retrieval`` on small dataset slices, cross-checked with ranx.

Slices: 30 SciFact test queries with every document they judge plus 300
others, and 30 CMRC 2018 dev questions likewise. bm25 and hybrid run with the
real default embedder (USE); our metrics must equal ranx's on the same runs.
The datasets come from ``shared/datasets`` beside the repository (or
``$VERACITY_DATASETS``); the tests skip when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from veracity.bench.beir import load_beir, subset
from veracity.bench.embedcache import embed_texts
from veracity.bench.retrieval import BenchSettings, resolve_analyzer
from veracity.bench.run import resolve_tuning, run_benchmark
from veracity.bench.shared import datasets_folder
from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.model.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _datasets() -> Path | None:
    found = datasets_folder()
    return found if found is not None and (found / "scifact" / "queries.jsonl").is_file() else None


DATASETS = _datasets()
needs_data = pytest.mark.skipif(DATASETS is None, reason="shared/datasets not found")
RANX_METRICS = {
    "ndcg@10": "ndcg@10",
    "recall@5": "recall@5",
    "recall@10": "recall@10",
    "recall@100": "recall@100",
    "mrr@10": "mrr@10",
}


def _ranx_scores(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """ranx's means on the same rankings (scores = descending ranks, so no ties to break)."""
    from ranx import Qrels, Run, evaluate

    run = {
        q: {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)} or {"\x00none": 0.0}
        for q, ranked in runs.items()
    }
    result = evaluate(Qrels(qrels), Run(run), list(RANX_METRICS.values()), make_comparable=True)
    return {ours: float(result[theirs]) for ours, theirs in RANX_METRICS.items()}


def _check_against_ranx(dataset_name: str, split: str, tmp_path: Path) -> dict[str, Any]:
    assert DATASETS is not None
    full = load_beir(DATASETS / dataset_name, split)
    sliced = subset(full, list(full.queries)[:30], 300, seed=1)
    settings = BenchSettings(
        channels=("bm25", "hybrid"), embedder="use", cache_dir=tmp_path / "cache", progress=False
    )
    report, runs = run_benchmark(sliced, settings)
    for channel in ("bm25", "hybrid"):
        ours = report["channels"][channel]["metrics"]
        qrels = {q: dict(v) for q, v in sliced.qrels.items()}
        theirs = _ranx_scores(runs.runs[channel], qrels)
        for name, value in theirs.items():
            assert ours[name] == pytest.approx(value, abs=1e-9), (dataset_name, channel, name)
        assert all(len(ranked) <= 100 for ranked in runs.runs[channel].values())
    return report


@pytest.mark.slow  # real USE model and ranx's numba kernels
@needs_data
def test_scifact_slice_metrics_equal_ranx(tmp_path: Path) -> None:
    report = _check_against_ranx("scifact", "test", tmp_path)
    assert report["dataset"]["queries_evaluated"] == 30
    assert report["channels"]["bm25"]["metrics"]["ndcg@10"] > 0.5
    assert report["channels"]["hybrid"]["metrics"]["recall@100"] >= 0.9


@pytest.mark.slow
@needs_data
def test_cmrc_slice_metrics_equal_ranx(tmp_path: Path) -> None:
    report = _check_against_ranx("cmrc2018/beir/dev", "dev", tmp_path)
    assert report["analyzer"] == "default"  # Chinese corpus: the zh/en tokenizer
    assert report["channels"]["bm25"]["metrics"]["recall@5"] > 0.8


def test_non_beir_folder_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"no qrels/\*\.tsv.*BEIR folder holds corpus\.jsonl"):
        load_beir(tmp_path)
    result = CliRunner().invoke(main, ["bench", "retrieval", str(tmp_path), "--embedder", "fake"])
    assert result.exit_code == 1
    assert "BEIR folder holds corpus.jsonl" in result.output


def _tiny_beir(folder: Path) -> None:
    (folder / "qrels").mkdir(parents=True)
    docs = [
        {"_id": "d1", "title": "Cats", "text": "Cats purr and sleep all day."},
        {"_id": "d2", "title": "Dogs", "text": "Dogs bark at the mail carrier."},
        {"_id": "d3", "title": "猫", "text": "猫喜欢睡觉和晒太阳。"},
    ]
    queries = [
        {"_id": "q1", "text": "why do cats purr"},
        {"_id": "q2", "text": "dogs bark"},
        {"_id": "q3", "text": "猫 睡觉"},
    ]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n", encoding="utf-8"
    )
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td3\t1\n", encoding="utf-8")


def test_loader_errors_name_the_problem(tmp_path: Path) -> None:
    _tiny_beir(tmp_path)
    with pytest.raises(ConfigError, match="no split 'dev'; valid values: test, train"):
        load_beir(tmp_path, "dev")
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tzzz\t1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not in the corpus"):
        load_beir(tmp_path, "test")
    with pytest.raises(ConfigError, match="evaluated split itself"):
        resolve_tuning(tmp_path, "test", f"{tmp_path}:test")


def test_cli_writes_canonical_json_with_every_channel(tmp_path: Path) -> None:
    _tiny_beir(tmp_path / "data")
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main,
        [
            "bench",
            "retrieval",
            str(tmp_path / "data"),
            "--embedder",
            "fake",
            "--analyzer",
            "default",
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (
        out.read_text(encoding="utf-8")
        == json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    )
    assert set(report["channels"]) == {"bm25", "dense", "hybrid", "hybrid+rerank"}
    assert report["tuning"]["source"].endswith(":train")  # the folder's train split, not test
    for entry in report["channels"].values():
        assert set(entry["metrics"]) == {"ndcg@10", "recall@5", "recall@10", "recall@100", "mrr@10"}
        assert entry["latency_ms"]["p95"] >= entry["latency_ms"]["p50"] >= 0
    assert report["channels"]["bm25"]["metrics"]["mrr@10"] == 1.0
    assert "| nDCG@10 |" in result.output


def test_embedding_cache_is_reused(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    first, _, _, hit = embed_texts(embedder, ["a", "b"], ["x y", "z"], cache_dir=tmp_path, progress=False)
    again, _, _, hit_again = embed_texts(
        embedder, ["a", "b"], ["x y", "z"], cache_dir=tmp_path, progress=False
    )
    other, _, _, hit_other = embed_texts(
        embedder, ["a", "b"], ["x y", "w"], cache_dir=tmp_path, progress=False
    )
    assert (hit, hit_again, hit_other) == (False, True, False)
    assert (first == again).all() and not (first == other).all()
    assert len(list(tmp_path.glob("*.npy"))) == 2


def test_analyzer_auto_picks_by_script() -> None:
    name, _ = resolve_analyzer("auto", ["数据库连接池配置说明"])
    assert name == "default"
    pytest.importorskip("Stemmer")
    name, analyzer = resolve_analyzer("auto", ["The cells were studied."])
    assert name == "english"
    assert analyzer("The cells were studied") == ["cell", "were", "studi"]
