"""Training the answer model: docs question sets, docs rows and their labels, weights, budgets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from veracity.bench.answer_rows import collect
from veracity.bench.choice_fit import cross_fitted_heads
from veracity.bench.docs_questions import holds_gold, load_docs_questions, source_file, split_of
from veracity.bench.fitting import fit_logistic, threshold_for_budget
from veracity.bench.train_answers import _threshold_within_budget, fit
from veracity.index.embedders import FakeEmbedder
from veracity.testing.fakes import FakeChooser

QUESTIONS = """\
source: {repo: example/docs, commit: abc, root: docs}
language: en
questions:
  - id: t-01
    question: "Which port does the gateway listen on by default?"
    answerable: true
    answers: ["port `8080`"]
    files: ["docs/gateway.md"]
  - id: t-02
    question: "Does the gateway support QUIC?"
    answerable: false
    answers: []
    files: []
"""

GATEWAY = """# Gateway

The gateway listens on port `8080` by default.
Operators change it with the `--port` flag.
"""

LOGS = """# Logs

Logs of the gateway are kept for 30 days.
"""


def _docs(root: Path) -> tuple[Path, Path]:
    folder = root / "example-en"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "gateway.md").write_text(GATEWAY, encoding="utf-8")
    (folder / "docs" / "logs.md").write_text(LOGS, encoding="utf-8")
    questions = root / "example-en.yaml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    return questions, folder


def _docs_rows(root: Path) -> list[dict]:
    """The example docs set's rows, collected with the fake embedder."""
    questions, folder = _docs(root)
    rows_path = root / "rows.jsonl"
    collect(
        root / "no-datasets",
        rows_path,
        per_set=None,
        seed=0,
        workdir=root / "work",
        docs_sets=[(questions, folder)],
        reading_sets=False,
        embedder=FakeEmbedder(),
    )
    return [json.loads(line) for line in rows_path.read_text(encoding="utf-8").splitlines()]


def test_a_questions_file_loads_and_its_checks_ignore_markup_case_and_suffixes(tmp_path: Path) -> None:
    questions, _ = _docs(tmp_path)
    spec = load_docs_questions(questions)
    assert spec.language == "en" and spec.source["repo"] == "example/docs"
    first, second = spec.questions
    assert first.answerable and first.files == ("docs/gateway.md",) and not second.answerable
    assert holds_gold("The gateway listens on Port 8080\nby default.", first.answers)
    assert not holds_gold("The gateway listens on port 8081.", first.answers)
    assert source_file("docs/gateway", first.files) and source_file("gateway", first.files)
    assert not source_file("docs/logs", first.files)
    # the split is a property of the id alone
    assert {split_of(f"x-{n}") for n in range(20)} == {"dev", "heldout"}
    assert split_of("t-01") == split_of("t-01")


def test_docs_rows_label_the_right_file_and_gold_and_ask_again_without_the_files(tmp_path: Path) -> None:
    rows = _docs_rows(tmp_path)
    by_kind = {(r["question_id"], r["removed"]): r for r in rows}
    assert set(by_kind) == {("t-01", False), ("t-01", True), ("t-02", False)}
    assert all(r["source"] == "docs/example-en" for r in rows)
    asked = by_kind["t-01", False]
    assert asked["answerable"]
    right = [c["claim"] for c in asked["candidates"] if c["label"]]
    assert right and all("8080" in claim for claim in right)
    assert any(not c["label"] for c in asked["candidates"])
    without = by_kind["t-01", True]
    assert not without["answerable"] and not any(c["label"] for c in without["candidates"])
    assert all("8080" not in c["claim"] for c in without["candidates"])
    assert not by_kind["t-02", False]["answerable"]


def test_a_row_weight_counts_like_that_many_copies_of_the_row() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    y = (x[:, 0] + rng.normal(size=40) > 0).astype(np.float64)
    weights = np.ones(40)
    weights[:5] = 3.0
    weighted = fit_logistic(x, y, ("a", "b", "c"), weights=weights)
    copies = np.vstack([x, x[:5], x[:5]])
    copied_y = np.concatenate([y, y[:5], y[:5]])
    # standardisation uses the rows as given, so compare probabilities on the weighted fit's scale
    copied = fit_logistic(copies, copied_y, ("a", "b", "c"))
    unweighted = fit_logistic(x, y, ("a", "b", "c"))
    point = {"a": 0.7, "b": -0.2, "c": 0.1}
    assert abs(weighted.probability(point) - copied.probability(point)) < 0.02
    assert abs(weighted.probability(point) - unweighted.probability(point)) > 1e-3


def test_the_threshold_keeps_the_budget_on_every_kind_of_negative() -> None:
    probabilities = np.array([0.9, 0.2, 0.1, 0.05, 0.6, 0.5, 0.4, 0.3, 0.7, 0.8])
    reading = np.array([True] * 4 + [False] * 6)
    docs = ~reading
    threshold = _threshold_within_budget(probabilities, [reading, docs], 0.25)
    for kind in (reading, docs):
        assert (probabilities[kind] >= threshold).mean() <= 0.25
    # with one kind alone it is that kind's own threshold
    assert _threshold_within_budget(probabilities, [reading, reading & False], 0.25) == threshold_for_budget(
        probabilities[reading], 0.25
    )


def test_at_weight_zero_docs_questions_only_calibrate_the_thresholds(tmp_path: Path) -> None:
    docs = _docs_rows(tmp_path)
    # the same questions standing in for reading-set rows, so that both kinds are present
    reading = [
        {**row, "source": "squad2_dev_half/dev/tune", "question_id": f"r{n}-{row['question_id']}"}
        for n in range(3)
        for row in docs
    ]
    alone, both = tmp_path / "reading.jsonl", tmp_path / "both.jsonl"
    alone.write_text("".join(json.dumps(r) + "\n" for r in reading), encoding="utf-8")
    both.write_text("".join(json.dumps(r) + "\n" for r in [*reading, *docs]), encoding="utf-8")
    without = fit(alone, budget=0.1)
    calibrated = fit(both, budget=0.1, docs_weight=0.0)
    weighted = fit(both, budget=0.1, docs_weight=5.0)
    assert calibrated.sentence.to_dict() == without.sentence.to_dict()
    assert calibrated.decision.to_dict() == without.decision.to_dict()
    assert weighted.decision.to_dict() != without.decision.to_dict()
    assert calibrated.threshold >= without.threshold
    assert calibrated.meta["docs_weight"] == 0.0 and "docs/example-en" in calibrated.meta["trained_on"]


def _reading_rows(tmp_path: Path) -> tuple[Path, list[dict]]:
    """The docs rows standing in for reading-set rows (three copies), written as a rows file."""
    docs = _docs_rows(tmp_path)
    reading = [
        {**row, "source": "squad2_dev_half/dev/tune", "question_id": f"r{n}-{row['question_id']}"}
        for n in range(3)
        for row in docs
    ]
    rows = tmp_path / "reading.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in reading), encoding="utf-8")
    return rows, reading


def test_with_a_chooser_the_fit_adds_a_choice_stage_and_reads_the_heads_once(tmp_path: Path) -> None:
    rows, _ = _reading_rows(tmp_path)
    chooser = FakeChooser({"Which port does the gateway listen on by default?": "8080"})
    model = fit(rows, budget=0.1, chooser=chooser)
    assert model.choice is not None and model.choice.names == ("sentence", "reader")
    assert "reader" in model.decision.names
    assert model.meta["chooser"] == {"name": "fake-chooser", "version": "fake-chooser"}
    assert model.meta["choice_model_selection"]["questions"] >= 1
    read = len(chooser.calls)
    assert read >= 1 and (tmp_path / "reading.chooser-fake-chooser.json").is_file()
    again = fit(rows, budget=0.1, chooser=chooser)
    assert len(chooser.calls) == read  # the heads' logits came from the file beside the rows
    assert again.to_dict() == model.to_dict()
    assert fit(rows, budget=0.1).choice is None


def test_the_fit_says_how_well_it_tells_right_claims_from_unanswerable_questions(tmp_path: Path) -> None:
    rows, reading = _reading_rows(tmp_path)
    unanswerable = sum(not r["answerable"] and not r["removed"] for r in reading)
    assert unanswerable > 0
    plain = fit(rows, budget=0.1).meta["tuning_unanswerable_squad"]
    assert plain["unanswerable"] == unanswerable and "auc_reader_alone" not in plain
    assert plain["right"] == 0 or 0.0 <= plain["auc_decision"] <= 1.0
    chooser = FakeChooser({"Which port does the gateway listen on by default?": "8080"})
    read = fit(rows, budget=0.1, chooser=chooser).meta["tuning_unanswerable_squad"]
    assert "auc_reader_alone" in read and read["unanswerable"] == unanswerable


def test_cross_fitted_heads_read_each_row_with_the_reader_that_never_saw_its_fold(tmp_path: Path) -> None:
    rows, reading = _reading_rows(tmp_path)
    questions = [f"{r['question']} ({n})" for n, r in enumerate(reading)]  # read once per text
    orders = [list(range(len(r["candidates"]))) for r in reading]
    readers = []
    for name in ("fold-0", "fold-1", "all"):
        reader = FakeChooser({})
        reader.version = name  # each keeps its own logits file beside the rows
        readers.append(reader)
    folds = [(0, 1, None)[i % 3] for i in range(len(reading))]
    heads = cross_fitted_heads(reading, questions, orders, folds, readers, rows)
    assert len(heads) == len(reading)
    for reader, fold in zip(readers, (0, 1, None), strict=True):
        asked = [q for q, _ in reader.calls]
        with_candidates = zip(questions, folds, reading, strict=True)
        expected = [q for q, f, r in with_candidates if f == fold and r["candidates"]]
        assert asked == expected and expected
        assert (tmp_path / f"reading.chooser-{reader.version}.json").is_file()


def test_a_fit_without_a_feature_leaves_it_out_of_that_model_alone(tmp_path: Path) -> None:
    rows, _ = _reading_rows(tmp_path)
    every = fit(rows, budget=0.1)
    without = fit(rows, budget=0.1, without=(frozenset({"coverage"}), frozenset({"margin"})))
    assert "coverage" in every.sentence.names and "coverage" not in without.sentence.names
    assert "margin" in every.decision.names and "margin" not in without.decision.names
    assert "coverage" in without.decision.names  # a decision feature of the same name stays
    assert len(without.sentence.names) == len(every.sentence.names) - 1
