"""An ask reads its question once: after :func:`veracity.text.questions.analyze_question`, no stage
splits, tokenizes or re-analyses the question's text or a sub-question's text (they take the
:class:`~veracity.text.questions.AnalyzedQuestion`).

Every binding of the watched functions in the loaded ``veracity`` modules is wrapped (a module
that did ``from ..text.tokens import tokenize`` holds its own binding), so a stage cannot slip
past through its own import. Calls made while a question is being analysed are the analysis
itself; a retry that asks a rewritten sub-question analyses that new text the same way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest

from veracity.model.contracts import Principal
from veracity.pipeline.engine import Engine
from veracity.text import language, question_surface, questions, tokens

WATCHED: tuple[tuple[Any, str], ...] = (
    (questions, "split_subquestions"),
    (questions, "analyze"),
    (tokens, "tokenize"),
    (tokens, "surface_tokens"),
    (tokens, "coverage_tokens"),
    (language, "detect_language"),
    (question_surface, "read_surface"),
    (question_surface, "slot_sides"),
)
AS_OF = datetime(2026, 8, 27, 16, 0, tzinfo=UTC)
QUESTIONS = (
    # two sub-questions after a statement of context (the demo's running question)
    "我们正在使用 2.8 的 Team 计划和旧 SAML 单点登录。升级到 3.2 后，还能继续使用 SAML 吗？"
    "如果成员数超过新计划上限，多出来的成员会被自动删除吗？",
    # English over Chinese documents: the retry rewrites its words and asks again
    "Can the Team plan still use SAML single sign-on in 3.2?",
    # a misspelt word the retry fixes from the evidence
    "3.2 的 Team 还能用 SMAL 登录吗？",
)


class Reads:
    """Who called a watched function on a question text outside the analysis."""

    def __init__(self) -> None:
        self.texts: set[str] = set()
        self.analysing = 0
        self.outside: list[tuple[str, str]] = []

    def watch(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def watched(*args: Any, **kwargs: Any) -> Any:
            text = args[0] if args and isinstance(args[0], str) else None
            if not self.analysing and text is not None and text.strip() in self.texts:
                caller = sys._getframe(1).f_code
                self.outside.append((name, f"{caller.co_filename.rpartition('/src/')[2]}:{caller.co_name}"))
            return original(*args, **kwargs)

        return watched

    def analysis(self, original: Callable[[str], questions.AnalyzedQuestion]) -> Callable[..., Any]:
        def analyse(text: str) -> questions.AnalyzedQuestion:
            self.analysing += 1
            try:
                analysed = original(text)
            finally:
                self.analysing -= 1
            self.texts |= {analysed.text.strip(), *(sub.text.strip() for sub in analysed.subquestions)}
            return analysed

        return analyse


@contextmanager
def reads_watched(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    reads = Reads()
    replacements = {
        id(getattr(module, name)): reads.watch(name, getattr(module, name)) for module, name in WATCHED
    }
    replacements[id(questions.analyze_question)] = reads.analysis(questions.analyze_question)
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("veracity") or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if callable(value) and id(value) in replacements:
                monkeypatch.setattr(module, attribute, replacements[id(value)])
    yield reads


def test_the_watch_catches_a_stage_reading_the_question_through_its_own_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from veracity.pipeline import candidates, retrieve

    with reads_watched(monkeypatch) as reads:
        analysed = retrieve.analyze_question("默认端口是多少？")
        candidates.tokenize(analysed.text)  # what a stage re-reading the question would do
    assert [name for name, _ in reads.outside] == ["tokenize"]


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_stage_reads_the_question_again_after_its_analysis(
    question: str, demo_kb: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    with reads_watched(monkeypatch) as reads:
        answer = demo_kb.ask(question, Principal.of("starship", "public"), "3.2", AS_OF)
    assert answer.claims, "the question was answered (the whole pipeline ran)"
    assert question.strip() in reads.texts
    assert reads.outside == []
