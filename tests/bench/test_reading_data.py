"""The reading model's training data (:mod:`veracity.bench.reading.data`): no reporting data,
the expected counts per source, valid answer offsets, recorded digests.

The reporting texts are gathered here again, independently of the module, straight from the
shared data sets' original files (``$VERACITY_DATASETS`` or ``../shared/datasets``); the tests
skip when they are absent.
"""

from __future__ import annotations

import gzip
import json
import unicodedata
from collections import Counter
from typing import Any

import pytest

from veracity.bench.docs_questions import load_docs_questions
from veracity.bench.reading.data import (
    DOCS_SETS,
    SOURCES,
    ReadingExample,
    available_sources,
    gold_span,
    manifest,
    markdown_chunks,
    training_examples,
)
from veracity.bench.reading.faq import REPOSITORIES
from veracity.bench.shared import datasets_folder

DATASETS = datasets_folder()
pytestmark = pytest.mark.skipif(DATASETS is None, reason="shared/datasets not found")
AVAILABLE = available_sources()
EVERY_SOURCE = set(AVAILABLE) == set(SOURCES)
needs_every_source = pytest.mark.skipif(
    not EVERY_SOURCE,
    reason="files taken from other repositories are not here (benchmarks/reader_data/SOURCES.md)",
)

EXPECTED = {
    ("squad2_dev_tune", "en"): (1274, 1525),
    ("squad2_train_head", "en"): (4358, 347),
    ("squad2_dev_rhine", "en"): (288, 208),
    ("xquad_en", "en"): (820, 0),
    ("xquad_zh", "zh"): (999, 0),
    ("cmrc2018_trial", "zh"): (1000, 0),
    ("cmrc2018_train_head", "zh"): (122, 0),
    ("cmrc2018_train", "zh"): (10020, 0),  # its first 122 questions are the head's
    ("drcd_test", "zh"): (3493, 0),
    ("docs_tune", "en"): (80, 20),
    ("docs_tune", "zh"): (80, 20),
    ("docs_faq", "en"): (810, 0),
    ("docs_faq", "zh"): (620, 0),
}
"""(source, language) → (answerable, unanswerable) examples yielded."""


def _spaces(text: str) -> str:
    return " ".join(text.split())


def _nfkc(text: str) -> str:
    return _spaces(unicodedata.normalize("NFKC", text))


@pytest.fixture(scope="module")
def loaded() -> tuple[list[ReadingExample], Counter[str]]:
    tally: Counter[str] = Counter()
    return list(training_examples(AVAILABLE, tally=tally)), tally


@pytest.fixture(scope="module")
def reporting() -> dict[str, set[str]]:
    """Questions, contexts and titles of every reporting split, read from the original files."""
    assert DATASETS is not None

    def articles(rel: str) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = json.load(gzip.open(DATASETS / rel, "rt", encoding="utf-8"))["data"]
        return data

    parts = {
        "en": articles("squad2_dev_half/original/dev-v2.0.json.gz")[8:16],
        "zh": articles("cmrc2018/original/cmrc2018_dev.json.gz") + articles("drcd/original/DRCD_dev.json.gz"),
    }
    assert len(parts["en"]) == 8 and len(parts["zh"]) == 848 + 383
    out: dict[str, set[str]] = {"questions": set(), "contexts": set(), "titles": set()}
    for language, chosen in parts.items():
        for article in chosen:
            if language == "en":
                out["titles"].add(article["title"])
            for paragraph in article["paragraphs"]:
                out["contexts"].add(_spaces(paragraph["context"]))
                out["questions"].update(_spaces(q["question"]) for q in paragraph["qas"])
    for path in DOCS_SETS.glob("*.yaml"):  # the docs reporting sets (HTTPX, Vite)
        out["questions"].update(_spaces(q.question) for q in load_docs_questions(path).questions)
    out["questions_nfkc"] = {_nfkc(q) for q in out["questions"]}
    out["contexts_nfkc"] = {_nfkc(c) for c in out["contexts"]}
    return out


def test_no_training_question_or_context_is_a_reporting_one(
    loaded: tuple[list[ReadingExample], Counter[str]], reporting: dict[str, set[str]]
) -> None:
    examples, _ = loaded
    assert len(reporting["titles"]) == 8 and len(reporting["contexts"]) == 352 + 848 + 1000
    for example in examples:
        assert _spaces(example.question) not in reporting["questions"], example.example_id
        assert _spaces(example.context) not in reporting["contexts"], example.example_id
        if example.language == "zh":
            assert _nfkc(example.question) not in reporting["questions_nfkc"], example.example_id
            assert _nfkc(example.context) not in reporting["contexts_nfkc"], example.example_id
        if example.source.startswith(("squad2", "xquad")):
            assert example.title not in reporting["titles"], example.example_id


def test_the_shared_tuning_splits_are_always_available() -> None:
    assert {"squad2_dev_tune", "cmrc2018_trial", "drcd_test"} <= set(AVAILABLE)


@needs_every_source
def test_each_source_yields_the_expected_counts(loaded: tuple[list[ReadingExample], Counter[str]]) -> None:
    examples, tally = loaded
    counts = Counter((e.source, e.language, e.impossible) for e in examples)
    got = {key: (counts[(*key, False)], counts[(*key, True)]) for key in EXPECTED}
    assert got == EXPECTED
    assert sum(counts.values()) == sum(a + b for a, b in EXPECTED.values()) == len(examples) == 26084
    assert {e.source for e in examples} == set(SOURCES)
    # XQuAD: the 8 SQuAD report articles go, in both languages; the half-dev keeps its tune part
    for source in ("xquad_en", "xquad_zh"):
        assert tally[f"{source}/articles_removed"] == 8
        assert tally[f"{source}/questions_removed_with_articles"] == 182
    assert tally["squad2_dev_tune/articles_removed"] == 8
    assert tally["squad2_dev_tune/questions_removed_with_articles"] == 3273
    assert tally["cmrc2018_trial/offsets_fixed"] == 5  # CMRC trial: 5 answer_start values off by one
    dropped = {k: n for k, n in tally.items() if k.endswith("_dropped")}
    assert dropped == {"cmrc2018_trial/questions_empty_dropped": 2}  # two trial questions are ""


def test_every_answer_offset_is_valid(loaded: tuple[list[ReadingExample], Counter[str]]) -> None:
    examples, _ = loaded
    assert len({e.example_id for e in examples}) == len(examples)
    for example in examples:
        assert example.language in ("en", "zh")
        assert example.context.strip() and example.question.strip()
        assert bool(example.answers) != example.impossible, example.example_id
        for text, start in example.answers:
            assert text and example.context[start : start + len(text)] == text, example.example_id


@needs_every_source
def test_the_recorded_digests_match_the_files() -> None:
    rows = manifest()
    assert len(rows) == 13
    assert all(row["ok"] for row in rows), [row for row in rows if not row["ok"]]
    faq = [row for row in rows if row["source"] == "docs_faq"]
    assert {row["licence"] for row in rows if row not in faq} <= {
        "CC-BY-SA-4.0",
        "CC-BY-SA-3.0",
        "MIT",
        "BSD-2-Clause",
    }
    licences = {licence for _, _, licence, _ in REPOSITORIES}
    assert licences == {"Apache-2.0", "CC-BY-4.0", "CC-BY-SA-3.0", "MIT"}


def test_docs_sections_and_gold_strings() -> None:
    text = (
        "# Title\n\nIntro.\n\n```bash\n# not a heading\necho hi\n```\n\n## Next\n\nUse **--no-root** here.\n"
    )
    chunks = markdown_chunks(text)
    assert chunks == [
        "# Title\n\nIntro.\n\n```bash\n# not a heading\necho hi\n```",
        "## Next\n\nUse **--no-root** here.",
    ]
    assert gold_span(chunks[1], "--no-root") == ("--no-root", 15)
    assert gold_span(chunks[1], "Use --no-root here") == ("Use **--no-root** here", 9)
    assert gold_span(chunks[1], "--all") is None
    assert all(len(c) <= 1200 for c in markdown_chunks("\n\n".join(["word " * 100] * 20)))
