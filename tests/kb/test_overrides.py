"""A knowledge base's own retrieval settings: stored with it, checked, applied when it is opened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.catalog.settings import put_setting
from veracity.cli.main import main
from veracity.kb.local import open_local
from veracity.kb.overrides import OVERRIDABLE
from veracity.model.errors import ConfigError
from veracity.pipeline.retrieve import RetrievalSettings

QUESTION = "3.2 的 Team 能用 SAML 吗？"


def _official_hits(kb) -> int:
    explained = kb.ask(QUESTION, explain=True)
    return len(explained.answer.trace.final)


def test_an_override_is_stored_with_the_knowledge_base_and_read_when_it_opens(demo_kb_at) -> None:
    with open_local(demo_kb_at, create=False) as kb:
        assert kb.engine.settings == RetrievalSettings()
        before = _official_hits(kb)
        assert before > 1
        assert kb.set_override("retrieval.top_k", "1") == {"retrieval.top_k": 1}
        assert kb.engine.settings.top_k == 1  # applied at once to the open engine
    with open_local(demo_kb_at, create=False) as kb:
        assert kb.overrides() == {"retrieval.top_k": 1}
        assert kb.engine.settings == RetrievalSettings(top_k=1)
        # at most one hit per trust tier is kept for the answer to read and cite
        assert 1 <= _official_hits(kb) < before
        assert kb.set_override("retrieval.top_k", None) == {}
    with open_local(demo_kb_at, create=False) as kb:
        assert kb.engine.settings == RetrievalSettings()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("retrieval.nope", "1", "cannot be set per knowledge base; valid names: retrieval.candidate_k"),
        ("retrieval.top_k", "2.5", "must be a whole number"),
        ("retrieval.top_k", "0", "must be between 1 and 50"),
        ("retrieval.min_score", "nan", "must be a number"),
        ("retrieval.candidate_k", "3", "below retrieval.top_k"),
    ],
)
def test_a_bad_value_is_refused_and_nothing_is_stored(
    demo_kb_dir: Path, name: str, value: str, message: str
) -> None:
    with open_local(demo_kb_dir, create=False) as kb:
        with pytest.raises(ConfigError, match=message):
            kb.set_override(name, value)
        assert kb.overrides() == {}
        assert kb.engine.settings == RetrievalSettings()


def test_a_stored_value_out_of_range_fails_the_open_naming_it(demo_kb_dir: Path) -> None:
    with open_local(demo_kb_dir, create=False) as kb:
        store = kb.engine.catalog.store
        with store.writer("test"), store.transaction():
            put_setting(store.connection, "overrides/retrieval.rrf_k", 0)
    with pytest.raises(ConfigError, match=r"retrieval\.rrf_k must be between 1 and 1000"):
        open_local(demo_kb_dir, create=False)


def test_the_command_shows_sets_and_forgets_them(demo_kb_dir: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(
        main, ["settings", "--kb", str(demo_kb_dir), "--set", "retrieval.candidate_k=40", "--json"]
    )
    assert shown.exit_code == 0, shown.output
    rows = {r["name"]: r for r in map(json.loads, shown.output.splitlines()) if r["kind"] == "knowledge_base"}
    assert set(rows) == set(OVERRIDABLE)
    assert rows["retrieval.candidate_k"] | {"why": ""} == {
        "kind": "knowledge_base", "module": "veracity.kb.overrides", "name": "retrieval.candidate_k",
        "value": 40, "default": 30, "source": "knowledge base", "low": 1, "high": 1000, "why": "",
    }  # fmt: skip
    assert rows["retrieval.top_k"]["source"] == "default"
    text = runner.invoke(main, ["settings", "--kb", str(demo_kb_dir), "--unset", "retrieval.candidate_k"])
    assert text.exit_code == 0 and "retrieval.candidate_k = 30  [1..1000]" in text.output
    refused = runner.invoke(main, ["settings", "--kb", str(demo_kb_dir), "--set", "retrieval.top_k"])
    assert refused.exit_code != 0 and "is not NAME=VALUE" in refused.output
    without = runner.invoke(main, ["settings", "--set", "retrieval.top_k=3"], env={"VERACITY_KB": ""})
    assert without.exit_code == 2 and "give --kb" in without.output
