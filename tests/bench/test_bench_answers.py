"""The answer benchmark on a tiny QA folder of our own: loading, parts, scoring, the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.bench.answers import (
    ItemResult,
    benchmark_answers,
    contains_answer,
    normalize_answer,
    summarize,
)
from veracity.bench.qa import load_qa
from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.model.errors import ConfigError

PARAGRAPHS = [
    (
        "p0_0",
        "Gateway",
        "The gateway listens on port 8080 by default. Operators change it with the --port flag.",
    ),
    ("p0_1", "Gateway", "Logs of the gateway are kept for 30 days. Older logs are deleted every night."),
    ("p1_0", "网关", "网关默认监听 8080 端口。管理员可以用 --port 参数修改端口。"),
]
QUESTIONS = [
    ("q1", "Which port does the gateway listen on by default?", "p0_0", ["8080", "port 8080"], False),
    ("q2", "How long are gateway logs kept?", "p0_1", ["30 days"], False),
    ("q3", "Who wrote the gateway logs policy?", "p0_1", [], True),
    ("q4", "网关默认监听哪个端口？", "p1_0", ["8080"], False),
]


def _folder(root: Path) -> Path:
    folder = root / "tinyqa" / "beir" / "dev"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in PARAGRAPHS), "utf-8"
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t, _, _, _ in QUESTIONS), "utf-8"
    )
    (folder / "qrels" / "dev.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, _, p, _, _ in QUESTIONS), "utf-8"
    )
    (folder / "answers.jsonl").write_text(
        "".join(
            json.dumps({"_id": q, "answers": a, "is_impossible": i}) + "\n" for q, _, _, a, i in QUESTIONS
        ),
        "utf-8",
    )
    return root / "tinyqa"


def test_normalized_containment() -> None:
    assert normalize_answer("The  10th, and 11th centuries!") == "10thand11thcenturies"
    assert contains_answer(["In the 10th and 11th centuries, they settled."], ["10th and 11th centuries"])
    assert contains_answer(["光荣和ω-force开发"], ["光荣和ω-force"])
    assert not contains_answer(["nothing here"], ["France"]) and not contains_answer(["x"], [""])


def test_parts_select_articles_in_corpus_order(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert {i.question_id for i in load_qa(folder, part="articles:0:1").items} == {"q1", "q2", "q3"}
    assert {i.question_id for i in load_qa(folder, part="articles:1:2").items} == {"q4"}
    assert load_qa(folder).items[2].impossible
    with pytest.raises(ConfigError, match="valid values"):
        load_qa(folder, part="report")
    with pytest.raises(ConfigError, match=r"answers\.jsonl"):
        load_qa(tmp_path)


def test_summary_rates_and_undefined_ones() -> None:
    rows = [
        ItemResult("a", False, "answer", True, True, True, 5.0, ()),
        ItemResult("b", False, "abstain", False, False, False, 7.0, ()),
        ItemResult("c", True, "abstain", False, False, False, 9.0, ()),
        ItemResult("d", True, "partial", False, False, False, 11.0, ()),
    ]
    summary = summarize(rows)
    assert summary["answer_contained"] == 0.5 and summary["false_abstain"] == 0.5
    assert summary["false_answer"] == 0.5 and summary["correct_outcome"] == 0.5
    assert summary["baseline_top1_sentence"]["answer_contained"] == 0.5
    assert summarize(rows[:2])["false_answer"] is None


def test_benchmark_runs_end_to_end_and_reuses_its_knowledge_base(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    report = benchmark_answers(
        folder, split=None, part="all", sample=None, seed=0, embedder=FakeEmbedder(), workdir=tmp_path / "kbs"
    )
    assert report["summary"]["questions"] == 4 and report["summary"]["unanswerable"] == 1
    assert {i["id"] for i in report["items"]} == {"q1", "q2", "q3", "q4"}
    again = benchmark_answers(
        folder, split=None, part="all", sample=2, seed=1, embedder=FakeEmbedder(), workdir=tmp_path / "kbs"
    )
    assert again["dataset"]["sampled"] == 2


def test_command_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    out = tmp_path / "report.json"
    args = ["bench", "answers", str(folder), "--embedder", "fake", "--no-progress"]
    args += ["--workdir", str(tmp_path / "kbs"), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (
        "correct-outcome rate" in result.output and json.loads(out.read_text())["summary"]["questions"] == 4
    )
    bad = CliRunner().invoke(main, ["bench", "answers", str(tmp_path), "--embedder", "fake", "--no-progress"])
    assert bad.exit_code != 0 and "answers.jsonl" in bad.output


def test_the_llm_composer_adds_written_claim_scores(tmp_path: Path) -> None:
    from veracity.testing.llm_server import faithful_reply, scripted_server

    folder = _folder(tmp_path)
    out = tmp_path / "written.json"
    args = ["bench", "answers", str(folder), "--embedder", "fake", "--no-progress"]
    args += ["--workdir", str(tmp_path / "kbs"), "--out", str(out)]
    with scripted_server(faithful_reply) as endpoint:
        result = CliRunner().invoke(main, [*args, "--llm-base-url", endpoint.base_url, "--llm-model", "s"])
    assert result.exit_code == 0, result.output
    assert "written claims verified (faithfulness)" in result.output
    report = json.loads(out.read_text())
    written = report["summary"]["composition"]
    assert report["composer"] == "llm" and written["answers"] >= 1
    assert written["claims_verified"] <= written["claims_written"]
    assert set(written) >= {"faithfulness", "citation_precision", "citation_recall", "outcomes", "dropped"}
