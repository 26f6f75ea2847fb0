"""The Python API: ``veracity.open(path)``, keyword-only ``ask``, ``ingest``; the README snippet runs."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

import veracity
from veracity.kb.explain import Explanation
from veracity.kb.local import LocalKnowledgeBase, parse_as_of
from veracity.model.errors import IdentityError, ValidationError

ROOT = Path(__file__).parents[2]
SITE = ROOT / "tests" / "parse" / "sites" / "vitepress"


@pytest.fixture
def opened(tmp_path) -> LocalKnowledgeBase:
    kb = veracity.open(tmp_path / "kb", embedder="fake")
    report = kb.ingest(SITE)
    assert len(report.added) == 3
    yield kb
    kb.close()


def test_open_ingest_and_ask_with_keyword_options(opened) -> None:
    answer = opened.ask("默认保留多少天的每日快照？")
    assert answer.status is veracity.AnswerStatus.ANSWER
    assert answer.trace.tenant == "default" and answer.trace.target_version is None
    explained = opened.ask(
        "默认保留多少天的每日快照？", roles=("public",), version="all", as_of="now", explain=True
    )
    assert isinstance(explained, Explanation) and explained.answer.status is answer.status
    first = explained.candidates[0]
    assert first.path == "guide/retention.md" and first.heading_path == ("保留策略",)
    assert first.outcome == "cited [1]" and dict(first.channel_ranks)["bm25"] == 1
    with pytest.raises(TypeError):
        opened.ask("x", "default")  # type: ignore[misc]  # options are keyword-only


def test_operator_errors_name_what_exists(opened) -> None:
    with pytest.raises(IdentityError, match=r"unknown tenant 'acme'; this knowledge base has: default"):
        opened.ask("x", tenant="acme")
    with pytest.raises(IdentityError, match=r"defines no role 'admin'; its roles: public"):
        opened.ask("x", roles=("admin",))
    with pytest.raises(IdentityError, match="the tenant is empty"):
        opened.ask("x", tenant="")
    with pytest.raises(ValidationError, match="question is empty"):
        opened.ask("  ")


def test_documents_and_reopening(opened, tmp_path) -> None:
    rows = opened.documents()
    assert [row["id"] for row in rows] == ["guide/getting-started", "guide/retention", "reference/cli"]
    assert rows[1]["path"] == "guide/retention.md" and rows[1]["title"] == "保留策略"
    document, chunks = opened.document("guide/retention")
    assert document.title == "保留策略" and chunks
    opened.close()
    with veracity.open(tmp_path / "kb", create=False) as again:
        assert again.default_tenant == "default" and len(again.documents()) == 3
    with pytest.raises(veracity.VeracityError, match="not a veracity knowledge base"):
        veracity.open(tmp_path / "nothing-here", create=False)


def test_as_of_forms() -> None:
    now = datetime(2026, 5, 1, 12, tzinfo=UTC)
    assert parse_as_of(None, now=now) == now == parse_as_of("now", now=now)
    assert parse_as_of("2026-08-27").isoformat() == "2026-08-27T23:59:59.999999+00:00"
    assert parse_as_of("2026-08-27T16:00:00Z").isoformat() == "2026-08-27T16:00:00+00:00"
    with pytest.raises(ValidationError, match="'now', a date"):
        parse_as_of("last tuesday")


def _readme_python(title: str) -> str:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index(title) :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, f"no python block after {title!r}"
    return match.group(1)


def test_the_readme_snippet_runs(tmp_path, monkeypatch, capsys) -> None:
    shutil.copytree(SITE, tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    code = _readme_python("## Your own documents from Python")
    assert "veracity.open(" in code and "explain=True" in code
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "answer" in printed and "guide/retention.md" in printed
