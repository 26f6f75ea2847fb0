"""FAQ pages → question and answer sentences (:mod:`veracity.bench.reading.faq`): what is a
question, what answers it, what is dropped; and the examples' answer offsets."""

from __future__ import annotations

import pytest

from veracity.bench.reading.faq import (
    HELD_OUT,
    REPOSITORIES,
    examples,
    faq_file_ids,
    page_pairs,
    plain_text,
    read_path,
)

PAGE = """---
title: SQL FAQ
---

# SQL 操作常见问题

本文档介绍常见问题。

## TiDB 是否支持二级键？

支持。你可以在非主键列上设置 [`NOT NULL` 约束](/constraints.md#非空约束)。

还有更多说明。

## 1.3 Where are the data files?

> **Note:** this note is not the answer.

By default, the data files are stored under `data/datanode`. Another sentence.

## How do I log in?

Run the following command:

```shell
mysql -h 127.0.0.1
```

## A heading that asks nothing

Text.

**Can I use S3 as storage?**

No, only local disks are supported.
"""


def test_questions_answers_and_the_pages_other_sentences() -> None:
    pairs = list(page_pairs(PAGE))
    assert [(p["question"], p["answer"]) for p in pairs] == [
        ("TiDB 是否支持二级键？", ["支持。", "你可以在非主键列上设置 NOT NULL 约束。"]),
        ("Where are the data files?", ["By default, the data files are stored under data/datanode."]),
        ("Can I use S3 as storage?", ["No, only local disks are supported."]),
    ]
    assert {p["title"] for p in pairs} == {"SQL FAQ"}
    assert [p["language"] for p in pairs] == ["zh", "en", "en"]
    # a lead-in into code is no answer; the rest of an answer's own text is neither right nor wrong
    assert "还有更多说明。" not in pairs[1]["others"] and "Another sentence." in pairs[0]["others"]
    assert "No, only local disks are supported." in pairs[0]["others"]


def test_plain_text_drops_code_notes_and_markup() -> None:
    text = plain_text(
        "Use [this](x.md) `flag`.\n\n```\ncode\n```\n\n> note\n\n| a | b |\n\n- item one\n<!-- c -->"
    )
    assert text == "Use this flag.\n\n- item one"  # the list mark goes when sentences are cut


def test_examples_point_at_their_answer_sentences_and_keep_held_out_repositories_apart() -> None:
    records = [
        {
            "repository": "some/docs",
            "title": "T",
            "question": "Q?",
            "language": "en",
            "answer": ["Yes.", "It does."],
            "others": ["Other one."],
        },
        {
            "repository": next(iter(HELD_OUT)),
            "title": "T",
            "question": "R?",
            "language": "en",
            "answer": ["No."],
            "others": [],
        },
    ]
    (trained,) = examples(records)
    assert [trained.context[s : s + len(t)] for t, s in trained.answers] == ["Yes.", "It does."]
    assert trained.context.endswith("Other one.") and not trained.impossible
    (held,) = examples(records, held_out=True)
    assert held.question == "R?"


def test_repeated_copies_only_the_training_examples_of_the_source() -> None:
    from veracity.bench.reading.chooser import repeated
    from veracity.bench.reading.train import held_out
    from veracity.reader.features import ReadingExample

    def example(number: int, source: str) -> ReadingExample:
        context = f"Answer {number}.\n\nOther {number}."
        return ReadingExample(
            f"{source}:{number}", source, "en", "T", context, "Q?", ((f"Answer {number}.", 0),), False
        )

    pool = [example(n, "docs_faq") for n in range(60)] + [example(n, "squad") for n in range(5)]
    share = 0.2
    copies = repeated(pool, "docs_faq", 3, share)
    trained = [e for e in pool if e.source == "docs_faq" and not held_out(e.context, share)]
    assert 0 < len(trained) < 60  # some are held out at this share
    assert len(copies) == 2 * len(trained) and {c.source for c in copies} == {"docs_faq"}
    assert len({c.example_id for c in copies} | {e.example_id for e in pool}) == len(copies) + len(pool)
    assert repeated(pool, "docs_faq", 1, share) == []


def test_the_training_commands_read_the_faq_pairs_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped readers were trained without them: the default commands must reproduce those."""
    from collections import Counter

    from veracity.bench.reading import train
    from veracity.bench.reading.data import OPTIONAL_SOURCES, SOURCES

    asked: list[list[str]] = []
    monkeypatch.setattr(train, "available_sources", lambda: SOURCES)
    monkeypatch.setattr(train, "training_examples", lambda sources, tally: asked.append(list(sources)) or [])
    train.reading_examples(Counter())
    train.reading_examples(Counter(), (*train.DEFAULT_SOURCES, "docs_faq"))
    assert "docs_faq" not in asked[0] and asked[0] == [s for s in SOURCES if s not in OPTIONAL_SOURCES]
    assert asked[1][-1] == "docs_faq"


def test_optional_sources_are_read_only_when_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    from veracity.bench.reading import chooser
    from veracity.bench.reading.data import DEFAULT_SOURCES, OPTIONAL_SOURCES, SOURCES

    # the shipped readers' card lists the default sources: an optional one must not slip into them
    assert set(OPTIONAL_SOURCES) < set(SOURCES)
    assert not set(OPTIONAL_SOURCES) & set(DEFAULT_SOURCES)
    assert set(DEFAULT_SOURCES) | set(OPTIONAL_SOURCES) == set(SOURCES)
    with pytest.raises(SystemExit):  # docs_faq is asked for by --faq-repeat, not --add-sources
        chooser.main(["--add-sources", "docs_faq", "--out", "unused"])
    assert "invalid choice" in capsys.readouterr().err


def test_which_files_of_a_repository_are_read() -> None:
    assert read_path("docs/faq/sql-faq.md", "faq")
    assert not read_path("docs/spatial-indexes.md", "faq")
    assert read_path("docs/spatial-indexes.md", "all")
    assert read_path("src/current/v24.1/frequently-asked-questions.mdx", "all")
    assert not read_path(".github/ISSUE_TEMPLATE/bug.md", "all")  # templates ask their own questions
    assert not read_path("docs/.vitepress/faq.md", "faq")
    assert not read_path("docs/faq.txt", "all")
    assert read_path("src/current/v24.1/frequently-asked-questions.md", "faq")
    assert read_path("docs/zh/常见问题.md", "faq") and read_path("docs/zh_cn/faq.md", "faq")
    assert read_path("i18n/zh/docusaurus-plugin-content-docs/current/faq.md", "faq")
    assert read_path("src/content/docs/zh-cn/4x/starter/faq.mdx", "faq")
    # other languages than English and Chinese (told apart by Han characters alone), other projects
    assert not read_path("i18n/ja/docusaurus-plugin-content-docs/current/faq.md", "faq")
    assert not read_path("src/content/docs/pt-br/4x/starter/faq.mdx", "all")
    assert not read_path("docs/introduce/faq.ko-KR.md", "faq") and read_path("docs/faq.en-US.md", "faq")
    assert not read_path("vendor/go.uber.org/zap/FAQ.md", "faq")


def test_question_and_answer_marks_are_dropped() -> None:
    page = (
        "# 常见问题\n\n##### 问题：`stop_gradient=True`的影响范围？\n\n"
        "+ 答复：如果某一层使用`stop_gradient=True`，那么这一层之前的层都不再回传梯度。\n\n"
        "### Q1: Why is the WAL not released?\n\nThe slot is updated when a checkpoint completes.\n\n"
        "## 为什么 Pod 进入了 CrashLoopBackOff 状态？\n\n回答：首先需要查看 Pod 错误退出的原因。\n"
    )
    assert [(p["question"], p["answer"]) for p in page_pairs(page)] == [
        (
            "stop_gradient=True的影响范围？",
            ["如果某一层使用stop_gradient=True，那么这一层之前的层都不再回传梯度。"],
        ),
        ("Why is the WAL not released?", ["The slot is updated when a checkpoint completes."]),
        ("为什么 Pod 进入了 CrashLoopBackOff 状态？", ["首先需要查看 Pod 错误退出的原因。"]),
    ]


def test_the_held_out_repository_keeps_its_faq_files_alone() -> None:
    # the held-out pairs measure every reader against the same 114 questions
    assert {files for repository, _, _, files in REPOSITORIES if repository in HELD_OUT} == {"faq"}


def test_faq_file_ids_name_the_examples_of_pairs_from_faq_files() -> None:
    def record(repository: str, path: str, question: str) -> dict[str, object]:
        return {"repository": repository, "path": path, "question": question, "language": "en",
                "title": "T", "answer": ["Yes, it does."], "others": ["Another sentence."]}  # fmt: skip

    records = [
        record("a/docs", "docs/faq.md", "Does it scale?"),
        record("a/docs", "docs/guide/install.md", "What is a node?"),
        record("b/site", "zh/常见问题.md", "Can it run offline?"),
    ]
    kept = faq_file_ids(records)
    made = {e.example_id: e.question for e in examples(records)}
    assert {made[i] for i in kept} == {"Does it scale?", "Can it run offline?"}
