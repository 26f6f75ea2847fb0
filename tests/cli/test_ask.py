"""``veracity ask``: the knowledge base's own defaults with --kb, the demo's without, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.cli.ask import DEMO_NOTICE
from veracity.cli.main import main


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory: pytest.TempPathFactory, acme_kb) -> Path:
    """Two plain documents ingested for tenant acme with roles public and support."""
    return acme_kb(tmp_path_factory.mktemp("ask"), {
        "backup.md": "# 备份\n\n## 保留时间\n\n每日快照默认保留 14 天。\n\n"
        "## 恢复\n\n恢复快照需要对目标数据库有写权限。",
        "internal.md": "---\nvisibility: internal\nallowed_roles: [support]\n---\n"
        "# 值班\n\n值班电话是 555-0100。",
    })  # fmt: skip


def test_without_kb_it_says_it_answers_from_the_demo() -> None:
    result = invoke("ask", "3.2 支持量子加密登录吗？", "--embedder", "fake")
    assert result.exit_code == 0
    assert DEMO_NOTICE in result.output and "status: abstain" in result.output
    data = json.loads(invoke("ask", "--embedder", "fake", "--json").output)
    assert data["knowledge_base"] == "built-in demo" and data["status"] == "answer"


def test_with_kb_it_asks_the_knowledge_base_with_its_defaults(kb_dir) -> None:
    result = invoke("ask", "每日快照默认保留多少天？", "--kb", str(kb_dir), "--json", "--explain")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert DEMO_NOTICE not in result.output
    assert data["status"] == "answer" and data["knowledge_base"] == str(kb_dir)
    trace = data["trace"]
    assert (trace["tenant"], trace["roles"], trace["target_version"]) == ("acme", ["public"], None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--tenant", ""], "the tenant is empty"),
        (["--role", ""], "a role is empty"),
        (["--tenant", "globex"], "unknown tenant 'globex'; this knowledge base has: acme"),
        (["--role", "admin"], "tenant 'acme' defines no role 'admin'; its roles: public, support"),
        (["--version", ""], "the version is empty"),
    ],
)
def test_bad_asker_options_are_clear_errors(kb_dir, options, message) -> None:
    result = invoke("ask", "每日快照保留多少天？", "--kb", str(kb_dir), *options)
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("options", "message"), [(["--tenant", ""], "the tenant is empty"), (["--role", ""], "a role is empty")]
)
def test_empty_options_never_become_the_demo_principal(options, message) -> None:
    result = invoke("ask", "x", "--embedder", "fake", *options)
    assert result.exit_code == 1 and message in result.output


def test_an_empty_fact_id_is_a_usage_error(kb_dir) -> None:
    result = invoke("ask", "每日快照保留多少天？", "--kb", str(kb_dir), "--fact", " ")
    assert result.exit_code == 2 and "a fact id is empty" in result.output


def test_as_of_takes_now_dates_and_datetimes_and_refuses_the_rest(kb_dir) -> None:
    for value in ("now", "2030-01-01", "2030-01-01T08:00:00Z"):
        assert invoke("ask", "恢复需要什么权限？", "--kb", str(kb_dir), "--as-of", value).exit_code == 0
    early = json.loads(
        invoke("ask", "恢复需要什么权限？", "--kb", str(kb_dir), "--as-of", "2001-01-01", "--json").output
    )
    assert early["status"] == "abstain"  # nothing was valid yet
    bad = invoke("ask", "x", "--kb", str(kb_dir), "--as-of", "yesterday")
    assert bad.exit_code == 2 and "'now', a date" in bad.output


def test_roles_see_what_they_may_and_public_only_counts_the_rest(kb_dir) -> None:
    public = json.loads(invoke("ask", "值班电话是多少？", "--kb", str(kb_dir), "--json", "--explain").output)
    assert "555-0100" not in json.dumps(public, ensure_ascii=False)
    assert public["explanation"]["excluded_before_scoring"] == {"role": 1}
    assert all(c["source_id"] != "internal" for c in public["explanation"]["candidates"])
    support = json.loads(
        invoke("ask", "值班电话是多少？", "--kb", str(kb_dir), "--role", "support", "--json").output
    )
    assert support["status"] == "answer" and "555-0100" in support["claims"][0]["text"]


def test_explain_prints_a_table_of_candidates_and_the_decision(kb_dir) -> None:
    result = invoke("ask", "每日快照默认保留多少天？", "--kb", str(kb_dir), "--explain")
    out = result.output
    assert "asked as tenant acme, roles public, all versions" in out
    assert "excluded before scoring: role 1" in out
    for column in ("source", "heading", "bm25", "dense", "fused", "reranked", "gate / evidence"):
        assert column in out
    assert "backup.md" in out and "保留时间" in out and "cited [1]" in out
    assert "decision: answer" in out
    assert "sub-question 0: answered, score" in out and "(threshold " in out
    assert "features: " in out and "coverage" in out and "missing_max_idf" in out
    assert "internal.md" not in out


def test_explain_names_the_question_terms_no_evidence_holds(kb_dir) -> None:
    result = invoke("ask", "每日快照可以同步到量子硬盘吗？", "--kb", str(kb_dir), "--explain")
    out = result.output
    assert "decision: abstain" in out and "not covered, score" in out
    assert "terms no evidence holds:" in out and "量子" in out.split("terms no evidence holds:")[1]


def test_the_demo_as_a_knowledge_base_keeps_the_demo_defaults(tmp_path) -> None:
    assert invoke("init-demo", "--kb", str(tmp_path / "demo"), "--embedder", "fake").exit_code == 0
    data = json.loads(invoke("ask", "--kb", str(tmp_path / "demo"), "--json", "--explain").output)
    trace = data["trace"]
    assert (trace["tenant"], trace["target_version"], trace["as_of"]) == (
        "starship", "3.2", "2026-08-27T16:00:00+00:00"
    )  # fmt: skip
    assert data["status"] == "answer" and trace["filtered_before_score"] == 9


def test_explain_agrees_with_the_decision_when_the_retry_answered() -> None:
    # "SMAL" is a typo no chunk holds: the first try does not cover this wording, the retry's
    # rewrite does (the shorter "3.2 的 Team 还能用 SMAL 吗？" the sentence reader answers at once)
    question = "Team 计划升级 3.2 后 SMAL 还行吗？"
    result = invoke("ask", question, "--version", "3.2", "--as-of", "2026-08-27", "--explain")
    assert result.exit_code == 0, result.output
    assert "decision: answer" in result.output and "retry: rewritten_words 1" in result.output
    assert "sub-question 0: answered" in result.output and "not covered" not in result.output


def test_ask_json_always_has_degraded() -> None:
    """As the API's JSON: ``degraded`` is there, an empty list when every component took part."""
    result = invoke("ask", "3.2 的 Team 能用 SAML 吗", "--version", "3.2", "--as-of", "2026-08-27", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["degraded"] == []
