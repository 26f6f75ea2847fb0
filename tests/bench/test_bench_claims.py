"""The claim-verification benchmark: how claims are built, and a smoke run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veracity.bench.claims import (
    ClaimRow,
    changed_number,
    clause_of,
    flipped_negation,
    main,
    question_answer,
    run,
    scores,
    tune,
    tune_reader,
)
from veracity.pipeline.llm.claims import negation_agrees
from veracity.text.values import negates

from .test_bench_answers import _folder
from .test_bench_retrieval import DATASETS, needs_data


def test_claims_are_built_as_a_model_writes_and_goes_wrong() -> None:
    sentence = "The gateway listens on port 8080 by default, and operators change it with a flag."
    assert clause_of(sentence, "8080") == "The gateway listens on port 8080 by default."
    assert question_answer("Which port does the gateway listen on?", "8080") == (
        "Which port does the gateway listen on: 8080."
    )
    assert question_answer("网关默认监听哪个端口？", "8080") == "网关默认监听8080端口。"
    assert changed_number(sentence, sentence) == sentence.replace("8080", "8081")
    assert changed_number("no digits here.", "") is None
    flipped = flipped_negation("Logs are kept for 30 days.")
    assert flipped == "Logs are not kept for 30 days." and negates(flipped)
    assert flipped_negation("网关不是默认开启的。") == "网关是默认开启的。"


def test_negation_is_compared_clause_by_clause() -> None:
    source = ["Steam turbines are not used in cars, except in applications such as locomotives."]
    assert negation_agrees("Turbines are used in applications such as locomotives.", source)
    assert not negation_agrees("Steam turbines are used in cars.", source)


def test_scores_are_per_kind_and_undefined_without_claims() -> None:
    rows = [
        ClaimRow("a", "sentence", None, 1.0, 0.9),
        ClaimRow("a", "clause", None, 0.5, 0.8),
        ClaimRow("a", "swapped_answer", None, 0.7, 0.9),
        ClaimRow("a", "changed_number", "number_not_in_source", 1.0, None),
    ]
    result = scores(rows, 0.6, 0.45)
    kinds = result["kinds"]
    assert kinds["clause"]["verified"] == 0.0 and kinds["wrong_source"]["verified"] is None
    assert kinds["clause"]["reasons"] == {"low_term_coverage": 1}
    assert result["precision"] == 0.5 and result["supported_kept"] == 0.5
    assert tune(rows) == (0.9, 0.7)  # drops the swap, keeps the copy; ties go to the stricter pair


def test_the_reader_threshold_drops_what_the_reader_does_not_support() -> None:
    rows = [
        ClaimRow("a", "sentence", None, 1.0, 0.9, reader=2.0),
        ClaimRow("a", "wrong_source", None, 1.0, 0.9, reader=-4.0),  # every word there, no answer
    ]
    assert scores(rows, 0.6, 0.45)["kinds"]["wrong_source"]["verified"] == 1.0
    with_reader = scores(rows, 0.6, 0.45, -1.0)
    assert with_reader["kinds"]["wrong_source"]["reasons"] == {"low_reader": 1}
    assert with_reader["precision"] == 1.0 and with_reader["thresholds"]["min_reader"] == -1.0
    assert tune_reader(rows)[2] == 1.0  # the strictest reader threshold that keeps the sentence


class _FakeChooser:
    """Scores a sentence by the claim's words it holds (a fake sentence reader)."""

    name = version = "fake-chooser"

    def scores(self, question: str, candidates) -> list[float]:
        words = set(question.lower().split())
        return [float(len(words & set(sentence.lower().split()))) - 2.0 for _, sentence in candidates]


def test_a_run_with_a_reader_reports_it_beside_the_others(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    sets = ((folder.name, "dev", "all"),)
    report = run(folder.parent, None, None, 0, tuning_sets=sets, reporting_sets=sets, chooser=_FakeChooser())
    name = f"{folder.name}/dev/all"
    assert set(report["reporting"][name]) == {"tuned", "shipped", "tuned+reader"}
    assert set(report["tuned_with_reader"]) == {"min_coverage", "min_similarity", "min_reader"}


def test_a_run_on_a_tiny_set_tunes_and_reports(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    sets = ((folder.name, "dev", "all"),)
    report = run(folder.parent, None, None, 0, tuning_sets=sets, reporting_sets=sets)
    name = f"{folder.name}/dev/all"
    assert report["tuned"]["on"] == [name] and set(report["reporting"][name]) == {"tuned", "shipped"}
    assert report["reporting"][name]["shipped"]["kinds"]["sentence"]["claims"] == 3


@pytest.mark.bench_smoke
@needs_data
def test_the_benchmark_runs_on_the_shared_datasets_at_a_smoke_size(tmp_path: Path) -> None:
    out = tmp_path / "claims.json"
    assert main(["--datasets", str(DATASETS), "--sample", "5", "--embedder", "none", "--out", str(out)]) == 0
    report = json.loads(out.read_text("utf-8"))
    assert sorted(report["reporting"]) == ["cmrc2018/dev/all", "squad2_dev_half/dev/report"]
