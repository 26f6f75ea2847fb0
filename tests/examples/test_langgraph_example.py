"""The LangGraph example in examples/ runs: answer, retry on abstain, hand-off, and no
hidden document through the graph."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="pip install 'veracity[langgraph]'")

from tests.integrations.conftest import leaks, opened, served

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_support_bot.py"
DEMO = {"tenant": "starship", "version": "3.2", "as_of": "2026-08-27T16:00:00Z"}


def _example():
    spec = importlib.util.spec_from_file_location("langgraph_support_bot", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # LangGraph resolves the state's annotations through it
    spec.loader.exec_module(module)
    return module


def test_an_answer_is_replied_with_its_citations() -> None:
    bot = _example()
    final = bot.run(bot.build_graph(opened(), **DEMO), "3.2 的 Team 能用 SAML 吗")
    assert final["answer"]["status"] == "answer" and final["attempts"] == 1
    assert "[1]" in final["reply"] and "faq-3.2-sso" in final["reply"]


def test_abstain_takes_the_retry_loop_then_hands_off() -> None:
    bot = _example()
    graph = bot.build_graph(opened(), **DEMO)
    retried = bot.run(graph, "3.2 支持量子加密登录吗？", ["3.2 的 Team 能用 SAML 吗"])
    assert retried["attempts"] == 2 and retried["answer"]["status"] == "answer"
    handed = bot.run(graph, "3.2 支持量子加密登录吗？", ["3.2 支持声纹登录吗？"])
    assert handed["attempts"] == 2 and handed["answer"]["status"] == "abstain"
    assert "passing it to a person" in handed["reply"]


def test_the_graph_never_carries_a_hidden_page() -> None:
    bot = _example()
    final = bot.run(bot.build_graph(opened(), tenant="acme"), "When are salaries paid? payroll codeword")
    assert not leaks(final["reply"] + str(final["answer"]["citations"]))


def test_the_script_runs_as_the_readme_shows() -> None:
    folder, _ = served()
    question = ["3.2 支持量子加密登录吗？", "--rephrase", "3.2 的 Team 能用 SAML 吗"]
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--kb", str(folder), "--tenant", "starship", "--version", "3.2",
         "--as-of", "2026-08-27", *question],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("answer after 2 tries") and "[1]" in result.stdout
