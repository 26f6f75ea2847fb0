"""The public surface: ``__all__`` is complete and ``veracity.ask`` works."""

from __future__ import annotations

import types

import veracity


def test_all_lists_every_public_name() -> None:
    # dir(), not vars(): the engine's names load on first use (a fast `veracity --version`)
    public = {
        name
        for name in dir(veracity)
        if not name.startswith("_") and not isinstance(getattr(veracity, name), types.ModuleType)
    }
    public -= {"annotations", "Sequence", "datetime", "demo_knowledge_base", "KnowledgeBase"}
    assert sorted(public | {"__version__"}) == sorted(veracity.__all__)
    assert veracity.KnowledgeBase is veracity.Engine  # the engine's former name still works
    for name in veracity.__all__:
        assert getattr(veracity, name) is not None


def test_ask_on_the_demo(demo_kb) -> None:
    answer = veracity.ask(
        "3.2 的 Team 能用 SAML 吗", veracity.Principal.of("starship", "public"), knowledge_base=demo_kb
    )
    assert answer.status is veracity.AnswerStatus.ANSWER
    assert answer.citations and all(c.chunk_id for c in answer.citations)


def test_a_callers_knowledge_base_is_asked_with_its_own_defaults_not_the_demos(demo_kb) -> None:
    principal = veracity.Principal.of("starship", "public")
    own = veracity.ask("3.2 的 Team 能用 SAML 吗", principal, knowledge_base=demo_kb)
    assert own.trace.target_version is None and not own.trace.as_of.startswith("2026-08-27")
    demo = veracity.ask("3.2 的 Team 能用 SAML 吗", principal)
    assert demo.trace.target_version == "3.2" and demo.trace.as_of.startswith("2026-08-27")
