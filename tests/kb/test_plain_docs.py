"""A folder of plain docs (no governance front matter) goes in with two commands and answers."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.parse.test_site_markup import leaks
from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import open_kb

SITES = Path(__file__).parents[1] / "parse" / "sites"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def site_kbs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """The MkDocs and VitePress example sites, each ingested with the plain command."""
    built = {}
    for site in ("mkdocs", "vitepress"):
        kb_dir = tmp_path_factory.mktemp(site) / "kb"
        result = run("ingest", str(SITES / site), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress")
        assert result.exit_code == 0, result.output
        built[site] = (kb_dir, result.output)
    return built


def test_mkdocs_summary_counts_defaults_keys_and_skips(site_kbs) -> None:
    _, output = site_kbs["mkdocs"]
    lines = output.splitlines()
    assert re.match(r".*: added 5 · revised 0 · unchanged 0 · skipped 1 · rejected 0 · chunks \d+", lines[0])
    assert (
        "  5 documents took default governance: status active, visibility public, trust official, "
        "valid_from = file modification time, tenant default, revision numbered "
        "(--strict rejects them instead)"
    ) in lines
    assert "  metadata keys kept (they govern nothing): description, hide, tags" in lines
    assert "  skipped 3 files of types no parser reads: 1 .css, 1 .png, 1 .yml" in lines
    assert "  not read (hidden or dependency folders): .overrides/" in lines
    assert any(
        line.startswith("  skipped overrides/partials/footer.html: an HTML page template") for line in lines
    )
    assert "  tenant default: roles public (it defined none; add more with --roles)" in lines


def test_vitepress_summary_skips_the_front_matter_only_home_page(site_kbs) -> None:
    _, output = site_kbs["vitepress"]
    lines = output.splitlines()
    assert re.match(r".*: added 3 · revised 0 · unchanged 0 · skipped 1 · rejected 0 · ", lines[0])
    assert "  skipped 2 files of types no parser reads: 1 .svg, 1 .vue" in lines
    assert "  not read (hidden or dependency folders): .vitepress/" in lines
    assert "  skipped index.md: only front matter, no text (a layout page such as a home page)" in lines


@pytest.mark.parametrize("site", ["mkdocs", "vitepress"])
def test_no_chunk_or_title_carries_site_markup_and_none_is_over_twice_the_budget(site_kbs, site) -> None:
    kb_dir, _ = site_kbs[site]
    kb = open_kb(kb_dir, FakeEmbedder())
    documents = kb.catalog.documents()
    assert documents
    for document in documents:
        assert not leaks(document.title), document.title
        for chunk in kb.catalog.chunks(document.document_id):
            assert not leaks(chunk.text), chunk.text
            assert not any(leaks(heading) for heading in chunk.heading_path)
            assert len(chunk.text) <= 800
    kb.catalog.store.close()


def test_a_long_reference_table_is_cut_between_rows(site_kbs) -> None:
    kb_dir, _ = site_kbs["mkdocs"]
    rows = json.loads(run("docs", "show", "docs/guide/configuration", "--kb", str(kb_dir), "--json").output)
    tables = [c for c in rows["chunks"] if c["kind"] == "table"]
    assert len(tables) > 2


def test_questions_answer_without_tenant_role_version_or_moment(site_kbs) -> None:
    kb_dir, _ = site_kbs["vitepress"]
    result = run("ask", "默认保留多少天的每日快照？", "--kb", str(kb_dir), "--embedder", "fake", "--json")
    data = json.loads(result.output)
    assert data["status"] == "answer", data
    assert data["citations"][0]["source_id"] == "guide/retention"
    assert "14 天" in data["claims"][0]["text"]
    trace = json.loads(
        run("ask", "代理需要哪个版本的 Node.js？", "--kb", str(kb_dir), "--json", "--explain").output
    )["trace"]
    assert (trace["tenant"], trace["roles"], trace["target_version"]) == ("default", ["public"], None)
    asked = datetime.fromisoformat(trace["as_of"])
    assert abs((datetime.now(UTC) - asked).total_seconds()) < 600


def test_a_document_written_today_is_eligible_at_once(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "today.md").write_text("# 今日公告\n\n今天起，会议室预订改为提前两天。", "utf-8")
    kb_dir = tmp_path / "kb"
    assert run("ingest", str(docs), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress").exit_code == 0
    for moment in ([], ["--as-of", "now"], ["--as-of", datetime.now(UTC).date().isoformat()]):
        data = json.loads(run("ask", "会议室预订要提前几天？", "--kb", str(kb_dir), "--json", *moment).output)
        assert data["status"] == "answer", (moment, data)


def test_strict_names_every_missing_field_at_once(tmp_path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(SITES / "vitepress" / "guide", docs)
    result = CliRunner().invoke(
        main,
        [
            "ingest",
            str(docs),
            "--kb",
            str(tmp_path / "kb"),
            "--embedder",
            "fake",
            "--no-progress",
            "--strict",
        ],
    )
    assert result.exit_code == 1
    assert "rejected 2" in result.output
    assert "all missing: tenant, valid_from, status, visibility, trust" in result.output
    assert "front matter" in result.output and "--metadata" in result.output


def test_roles_without_tenant_go_to_the_default_tenant_and_empty_options_are_refused(tmp_path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(SITES / "vitepress" / "guide", docs)
    kb_dir = tmp_path / "kb"
    result = run("ingest", str(docs), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress",
                 "--roles", "public,support")  # fmt: skip
    assert "  tenant default: roles public, support" in result.output.splitlines()
    for option, value in (("--tenant", ""), ("--roles", " , ")):
        bad = CliRunner().invoke(main, ["ingest", str(docs), "--kb", str(kb_dir), option, value])
        assert bad.exit_code == 2 and option in bad.output


def test_unknown_front_matter_keys_are_kept_as_metadata(site_kbs) -> None:
    kb_dir, _ = site_kbs["mkdocs"]
    detail = json.loads(
        run("docs", "show", "docs/getting-started/install", "--kb", str(kb_dir), "--json").output
    )
    assert detail["metadata"] == {"description": "Install the Tidewater agent", "tags": ["install"]}
    assert detail["defaulted_fields"] == ["revision", "status", "tenant", "trust", "valid_from", "visibility"]
    assert detail["language"] == "en" and detail["path"] == "docs/getting-started/install.md"


def test_ingest_json_report(tmp_path) -> None:
    result = run(
        "ingest", str(SITES / "mkdocs"), "--kb", str(tmp_path / "kb"), "--embedder", "fake", "--json"
    )
    data = json.loads(result.output)
    assert data["added"] == [
        "docs/getting-started/install", "docs/guide/configuration", "docs/guide/retention", "docs/index",
        "docs/snippets/support",
    ]  # fmt: skip
    assert data["skipped_by_suffix"] == {".css": 1, ".png": 1, ".yml": 1}
    assert data["not_read"] == [".overrides/"]
    assert data["defaults_taken"]["visibility"] == 5
    assert data["metadata_keys"] == ["description", "hide", "tags"]
    assert data["skipped"][0]["source"] == "overrides/partials/footer.html"


def test_a_first_ingest_whose_documents_all_name_one_tenant_makes_it_the_default(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b"):
        (docs / f"{name}.md").write_text(f"---\ntenant: acme\n---\n# {name}\n\n文档 {name} 的内容。", "utf-8")
    kb_dir = tmp_path / "kb"
    output = run("ingest", str(docs), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress").output
    assert "  tenant acme: roles public (it defined none; add more with --roles)" in output.splitlines()
    assert "tenant default" not in output
    answer = run("ask", "文档 a 的内容", "--kb", str(kb_dir), "--json", "--explain")
    trace = json.loads(answer.output)["trace"]
    assert trace["tenant"] == "acme" and trace["eligible_documents"] == 2


def test_a_first_ingest_that_stores_nothing_leaves_the_default_tenant_to_the_next(tmp_path) -> None:
    kb_dir, empty, docs = tmp_path / "kb", tmp_path / "empty", tmp_path / "docs"
    empty.mkdir()
    docs.mkdir()
    (docs / "b.md").write_text("# Backup\n\nSnapshots are kept 14 days.", "utf-8")
    first = run("ingest", str(empty), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress")
    assert first.exit_code == 0
    assert run("ingest", str(docs), "--kb", str(kb_dir), "--tenant", "acme", "--no-progress").exit_code == 0
    asked = run("ask", "How long are snapshots kept?", "--kb", str(kb_dir), "--json", "--explain").output
    assert json.loads(asked)["trace"]["tenant"] == "acme"
    found = json.loads(run("search", "snapshots kept", "--kb", str(kb_dir), "--json").output)["hits"]
    assert [hit["id"] for hit in found] == ["b"]
    tenants = run("ask", "x", "--kb", str(kb_dir), "--tenant", "nobody").output
    assert "this knowledge base has: acme" in tenants and "default" not in tenants
