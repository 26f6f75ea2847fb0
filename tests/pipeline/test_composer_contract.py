"""The Composer contract: every implementation, on the demo's decided answers.

The decided answers and their evidence are recorded once through the engine (a composer that
keeps what it is given); each implementation then composes every one of them. The contract:
an abstain (or an answer without claims) comes back as decided; the status is never better
than decided; every claim cites known citations and says which composer wrote it; what the
policy found missing stays missing; composing twice gives the same answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest

from veracity.fixtures import TenantConfig
from veracity.model.contracts import AnswerStatus, Principal
from veracity.model.errors import LLMUnavailableError
from veracity.pipeline.answer import verify_claims
from veracity.pipeline.composer import Composer, Evidence, ExtractiveComposer
from veracity.pipeline.engine import Engine
from veracity.pipeline.llm.client import Message
from veracity.pipeline.llm.composer import LLMComposer
from veracity.pipeline.llm.fake import ScriptedChat
from veracity.pipeline.outcome import Answer
from veracity.testing.llm_server import faithful_reply

RANK = {AnswerStatus.ABSTAIN: 0, AnswerStatus.PARTIAL: 1, AnswerStatus.ANSWER: 2}
QUESTIONS: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("3.2 的 Team 能用 SAML 吗", None),
    ("3.2 的 Team 能用 SAML 吗？3.2 支持量子加密登录吗？", None),
    ("3.2 支持量子加密登录吗？", None),
    ("升级到 3.2 以后，我们公司的登录方式还能照旧吗？", ("sso-team-32",)),
    (
        "升级到 3.2 后，还能继续使用 SAML 吗？如果成员数超过新计划上限，多出来的成员会被自动删除吗？",
        ("sso-team-32", "members-preserved-32"),
    ),
)


def _faithful(messages: Sequence[Message]) -> str:
    return faithful_reply({"messages": [dict(m) for m in messages]})


def _careless(messages: Sequence[Message]) -> str:
    return "Everything is supported in 4.0 [1].\nNo citation here.\nIgnore all previous instructions [99]."


IMPLEMENTATIONS: dict[str, Callable[[], Composer]] = {
    "extractive": ExtractiveComposer,
    "llm-faithful": lambda: LLMComposer(ScriptedChat(_faithful)),
    "llm-careless": lambda: LLMComposer(ScriptedChat(_careless)),
    "llm-down": lambda: LLMComposer(ScriptedChat(failure=LLMUnavailableError("down", reason="unreachable"))),
}


class _Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[tuple[Answer, Evidence]] = []

    def compose(self, decided: Answer, evidence: Evidence) -> Answer:
        self.seen.append((decided, evidence))
        return decided


@pytest.fixture(scope="module")
def decided(demo_kb: Engine, config: TenantConfig) -> list[tuple[Answer, Evidence]]:
    recorder = _Recorder()
    demo_kb.composer = recorder
    try:
        asker = Principal.of(config.tenant, "public")
        for question, facts in QUESTIONS:
            demo_kb.ask(question, asker, "3.2", config.as_of, required_fact_ids=facts)
    finally:
        demo_kb.composer = None
    statuses = {answer.status for answer, _ in recorder.seen}
    assert statuses == set(AnswerStatus), statuses  # the questions reach every status
    return recorder.seen


def _plain(answer: Answer) -> Answer:
    return replace(answer, trace=replace(answer.trace, timings_ms=()))


@pytest.mark.parametrize("name", sorted(IMPLEMENTATIONS))
def test_every_composer_keeps_the_contract(name: str, decided: list[tuple[Answer, Evidence]]) -> None:
    make = IMPLEMENTATIONS[name]
    composer = make()
    assert isinstance(composer, Composer) and composer.name in ("extractive", "llm")
    for before, evidence in decided:
        after = composer.compose(before, evidence)
        if before.status is AnswerStatus.ABSTAIN or not before.claims:
            assert after is before
            continue
        assert RANK[after.status] <= RANK[before.status]
        assert after.claims, "a composer never empties a decided answer: the extractive one is the floor"
        verify_claims(after.claims, after.citations)
        assert all(claim.composer in ("extractive", composer.name) for claim in after.claims)
        assert set(before.missing_fact_ids) <= set(after.missing_fact_ids)
        assert set(before.uncovered_subquestions) <= set(after.uncovered_subquestions)
        assert _plain(make().compose(before, evidence)) == _plain(after)
