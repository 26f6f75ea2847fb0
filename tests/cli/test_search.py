"""``veracity search``: the ranked chunks an asker may use, through the same gates and defaults as ask."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.cli.main import main
from veracity.cli.search import DEMO_SEARCH_NOTICE, SNIPPET_CHARS


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory: pytest.TempPathFactory, acme_kb) -> Path:
    """A public page, a support-only page and one valid only for 2.x, for tenant acme."""
    long_line = "每日快照默认保留 14 天，" + "超过保留时间的快照会被自动清理。" * 30
    return acme_kb(tmp_path_factory.mktemp("search"), {
        "backup.md": f"# 备份\n\n## 保留时间\n\n{long_line}\n\n## 恢复\n\n恢复快照需要对目标数据库有写权限。",
        "internal.md": "---\nvisibility: internal\nallowed_roles: [support]\n---\n"
        "# 值班\n\n快照失败时的值班电话是 555-0100。",
        "legacy.md": '---\nversion_max: "2.9"\n---\n# 旧版快照\n\n2.x 的快照保存在本地磁盘。',
    })  # fmt: skip


def hits(kb_dir: Path, query: str, *options: str) -> list[dict]:
    result = invoke("search", query, "--kb", str(kb_dir), "--json", *options)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["query"] == query and data["knowledge_base"] == str(kb_dir)
    return data["hits"]


def test_hits_come_ranked_with_their_text_scores_and_place(kb_dir) -> None:
    found = hits(kb_dir, "快照保留多少天")
    assert [hit["rank"] for hit in found] == list(range(1, len(found) + 1))
    top = found[0]
    assert top["id"] == "backup" and top["path"] == "backup.md" and top["revision"] == "1"
    assert top["heading_path"] == ["备份", "保留时间"] and "保留 14 天" in top["text"]
    assert top["scores"]["rerank"] is not None and top["scores"]["lexical"] is not None
    reranks = [hit["scores"]["rerank"] for hit in found]
    assert reranks == sorted(reranks, reverse=True)


def test_an_asker_never_sees_a_chunk_of_a_document_its_role_may_not_use(kb_dir) -> None:
    public = hits(kb_dir, "快照失败值班电话")
    assert public and all(hit["id"] != "internal" for hit in public)
    assert "555-0100" not in json.dumps(public, ensure_ascii=False)
    support = hits(kb_dir, "快照失败值班电话", "--role", "support")
    assert support[0]["id"] == "internal" and "555-0100" in support[0]["text"]


def test_the_version_filter_applies_before_ranking(kb_dir) -> None:
    assert "legacy" in {hit["id"] for hit in hits(kb_dir, "快照保存在哪里", "--version", "2.8")}
    assert "legacy" not in {hit["id"] for hit in hits(kb_dir, "快照保存在哪里", "--version", "3.1")}


def test_limit_caps_the_hits(kb_dir) -> None:
    assert len(hits(kb_dir, "快照", "--limit", "1")) == 1
    assert len(hits(kb_dir, "快照", "--limit", "50")) > 1


def test_plain_output_shows_where_each_hit_is_and_the_start_of_its_text(kb_dir) -> None:
    result = invoke("search", "快照保留多少天", "--kb", str(kb_dir))
    assert result.exit_code == 0, result.output
    first = result.output.split("\n\n")[0]
    assert first.startswith("1. backup.md rev 1 · 备份 > 保留时间 · score ")
    assert first.rstrip().endswith("…") and len(first) < SNIPPET_CHARS + 200
    full = invoke("search", "快照保留多少天", "--kb", str(kb_dir), "--full").output.split("\n\n")[0]
    text = hits(kb_dir, "快照保留多少天")[0]["text"]
    assert len(text) > SNIPPET_CHARS and f"   {text}" in full


def test_nothing_found_says_so(kb_dir) -> None:
    result = invoke("search", "量子纠缠", "--kb", str(kb_dir), "--as-of", "2001-01-01")
    assert result.exit_code == 0 and "no chunk this asker may use matches the query" in result.output


@pytest.mark.parametrize(
    ("options", "code", "message"),
    [
        (["   "], 2, "the query is empty"),
        (["快照", "--limit", "0"], 2, "0 is not in the range"),
        (["快照", "--as-of", "yesterday"], 2, "'now', a date"),
        (["快照", "--role", "admin"], 1, "tenant 'acme' defines no role 'admin'"),
        (["快照", "--tenant", "globex"], 1, "unknown tenant 'globex'"),
    ],
)
def test_bad_input_is_a_clear_error(kb_dir, options, code, message) -> None:
    result = invoke("search", *options, "--kb", str(kb_dir))
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output


def test_without_kb_it_searches_the_demo_as_the_demo_asker() -> None:
    result = invoke("search", "SSO 登录", "--embedder", "fake", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert DEMO_SEARCH_NOTICE in result.output and "\n1. " in result.output
    data = json.loads(invoke("search", "SSO 登录", "--embedder", "fake", "--json").stdout)
    assert data["knowledge_base"] == "built-in demo" and data["hits"]
    # the demo asker is role public: the support-only incident record is never among the hits
    assert all(hit["id"] != "incident-2026-08-sso" for hit in data["hits"])


def test_json_hits_are_the_services_search_hits_plus_where_the_file_is(kb_dir) -> None:
    from veracity.kb.keys import create_key
    from veracity.kb.local import open_local
    from veracity.service.core.gateway import Gateway

    with open_local(kb_dir, create=False) as kb:
        key = create_key(kb, tenant="acme", roles=["support"]).secret
    gateway = Gateway.open(kb_dir)
    try:
        served = gateway.search(gateway.admit(key), "快照失败值班电话", limit=5)["hits"]
    finally:
        gateway.close()
    local = hits(kb_dir, "快照失败值班电话", "--role", "support", "--limit", "5")
    assert served and len(local) == len(served)
    for mine, theirs in zip(local, served, strict=True):
        assert {k: v for k, v in theirs.items() if k != "boxes"} == {
            k: v for k, v in mine.items() if k not in ("path", "revision", "trust")
        }


@pytest.mark.parametrize("query", ["?!.,;:", "🔥🔥", "——？"])
def test_a_query_without_a_word_finds_nothing(kb_dir, query) -> None:
    assert hits(kb_dir, query) == []
    assert hits(kb_dir, "快照") != []  # the same knowledge base finds what a word matches


def test_the_service_finds_nothing_for_a_query_without_a_word(kb_dir) -> None:
    from veracity.kb.keys import create_key
    from veracity.kb.local import open_local
    from veracity.service.core.gateway import Gateway

    with open_local(kb_dir, create=False) as kb:
        key = create_key(kb, tenant="acme", roles=["public"]).secret
    gateway = Gateway.open(kb_dir)
    try:
        assert gateway.search(gateway.admit(key), "?!.,;:")["hits"] == []
    finally:
        gateway.close()
