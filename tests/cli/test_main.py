"""The CLI, through click's runner (the library does the work; these check the shell)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from veracity.cli.main import main


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_docs_list_table_and_json() -> None:
    result = run("docs", "list")
    assert (
        result.exit_code == 0 and "plans-3.2" in result.output and "18 documents" in result.output
    )
    rows = json.loads(run("docs", "list", "--json").output)
    assert len(rows) == 18
    assert {"id", "revision", "status", "versions", "valid_from", "visibility", "trust"} <= set(
        rows[0]
    )
    assert run("docs", "list", "--tenant", "nobody").output.startswith("no documents")


def test_docs_show() -> None:
    detail = json.loads(run("docs", "show", "plans-3.2", "--json").output)
    assert detail["id"] == "plans-3.2" and len(detail["content_digest"]) == 64
    assert any("sso-team-32" in c["fact_ids"] for c in detail["chunks"])
    assert "chunk_id" in detail["chunks"][0] and "heading_path" in detail["chunks"][0]
    table = run("docs", "show", "plans-3.2")
    assert table.exit_code == 0 and "sso-team-32" in table.output


def test_docs_show_unknown_is_a_clean_error() -> None:
    result = CliRunner().invoke(main, ["docs", "show", "no-such-doc"])
    assert (
        result.exit_code == 1
        and "no-such-doc" in result.output
        and "Traceback" not in result.output
    )


def test_chunk_strategies() -> None:
    fixed = json.loads(
        run("chunk", "migration-2x-to-3.2", "--strategy", "fixed", "--size", "90", "--json").output
    )
    structural = json.loads(run("chunk", "migration-2x-to-3.2", "--json").output)
    contextual = json.loads(
        run("chunk", "migration-2x-to-3.2", "--strategy", "contextual", "--json").output
    )
    assert len(fixed) > len(structural) == len(contextual)
    assert all(c["context_prefix"] for c in contextual)
    bad = CliRunner().invoke(
        main, ["chunk", "plans-3.2", "--strategy", "fixed", "--size", "50", "--overlap", "50"]
    )
    assert bad.exit_code == 1 and "overlap" in bad.output


def test_ask_defaults_to_the_running_question_with_fake_embedder() -> None:
    result = run("ask", "--embedder", "fake", "--json", "--explain")
    data = json.loads(result.output)
    assert data["status"] == "answer"
    assert data["trace"]["filtered_before_score"] == 9
    assert {c["source_id"] for c in data["citations"]} >= {"migration-2x-to-3.2"}
    text = run("ask", "3.2 支持量子加密登录吗？", "--embedder", "fake")
    assert "status: abstain" in text.output


def test_ask_rejects_bad_moment() -> None:
    result = CliRunner().invoke(main, ["ask", "x", "--as-of", "yesterday", "--embedder", "fake"])
    assert result.exit_code == 2 and "as_of" in result.output


def test_operator_commands_say_so_in_their_help() -> None:
    for args in (("docs",), ("docs", "list"), ("docs", "show"), ("chunk",), ("status",)):
        text = " ".join(run(*args, "--help").output.split())
        assert "Operator view: no principal is checked" in text, args
        assert "principal-checked endpoints" in text, args


def test_ask_explain_counts_hidden_documents_only_in_the_operator_view() -> None:
    asker = json.loads(run("ask", "--embedder", "fake", "--json", "--explain", "--view", "asker").output)
    trace = asker["trace"]
    assert "excluded_hidden" not in trace and "role" not in trace["excluded_counts"]
    assert "explanation" not in asker  # its candidates table counts documents hidden by role
    operator = json.loads(run("ask", "--embedder", "fake", "--json", "--explain").output)["trace"]
    assert operator["excluded_hidden"] == 5 and operator["excluded_counts"]["role"] == 5


def test_eval_of_the_demo_cases_on_another_knowledge_base_says_what_to_do(tmp_path, acme_kb) -> None:
    kb = acme_kb(tmp_path, {"backup.md": "# 备份\n\n每日快照默认保留 14 天。"})
    result = run("eval", "--kb", str(kb), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "is not the demo; give --cases FILE" in result.output and "init-demo" in result.output


def test_ingest_names_the_metadata_keys_that_match_no_file(tmp_path) -> None:
    docs = tmp_path / "docs"
    (docs / "internal").mkdir(parents=True)
    (docs / "internal" / "oncall.md").write_text("# 值班\n\n值班电话是 555-0100。", "utf-8")
    (docs / "guide.md").write_text("# 指南\n\n每日快照默认保留 14 天。", "utf-8")
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        '"internal/": {visibility: internal, allowed_roles: [support]}\n"guide.md": {trust: official}\n',
        "utf-8",
    )
    args = ("ingest", str(docs), "--kb", str(tmp_path / "kb"), "--embedder", "fake", "--no-progress")
    result = run(*args, "--metadata", str(mapping))
    assert result.exit_code == 0, result.output
    warning = "metadata file keys that match no file (they govern nothing; a folder needs 'dir/**'): "
    assert f"{warning}internal/\n" in result.output
    again = json.loads(run(*args, "--metadata", str(mapping), "--json").output)
    assert again["unmatched_metadata_keys"] == ["internal/"]


def _ingested(tmp_path, files: dict[str, str]) -> tuple[Path, str, tuple[str, ...]]:
    """A folder of ``files`` ingested into a new knowledge base: the folder, the knowledge base and
    the arguments that ingest it again."""
    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    for name, text in files.items():
        (docs / name).write_text(text, "utf-8")
    ingest = ("ingest", str(docs), "--kb", kb, "--no-progress")
    assert run(*ingest, "--embedder", "fake").exit_code == 0
    return docs, kb, ingest


def test_a_document_withdrawn_by_command_stays_withdrawn_when_its_file_changes(tmp_path) -> None:
    docs, kb, ingest = _ingested(tmp_path, {"t.md": "# T\n\nThreads are pooled.", "u.md": "# U\n\nOther."})
    assert run("withdraw", "t", "--kb", kb).exit_code == 0
    again = run(*ingest).output
    assert "  unchanged but not served 1: t (withdrawn) (--restore brings back what withdraw" in again
    (docs / "t.md").write_text("# T\n\nThreads are pooled, corrected.", "utf-8")
    changed = json.loads(run(*ingest, "--json").output)
    assert changed["kept_withdrawn"] == ["t"] and changed["after_withdrawal"] == []
    listed = json.loads(run("docs", "list", "--kb", kb, "--json").output)
    assert sorted(d["status"] for d in listed if d["id"] == "t") == ["withdrawn", "withdrawn"]
    assert run("ask", "How are threads handled?", "--kb", kb, "--json").output.count('"t"') == 0
    (docs / "t.md").write_text("# T\n\nThreads are pooled, corrected twice.", "utf-8")
    assert json.loads(run(*ingest, "--json").output)["kept_withdrawn"] == ["t"]  # it holds, edit after edit
    restored = json.loads(run(*ingest, "--restore", "--json").output)
    assert restored["restored"] == ["t"]
    listed = json.loads(run("docs", "list", "--kb", kb, "--json").output)
    active = [d for d in listed if d["id"] == "t" and d["status"] == "active"]
    assert [d["revision"] for d in active] == ["3"]  # the newest text is the one served


def test_a_changed_file_that_had_withdrawn_its_own_document_is_served_again(tmp_path) -> None:
    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    (docs / "t.md").write_text("---\nstatus: withdrawn\n---\n# T\n\nThreads are pooled.", "utf-8")
    ingest = ("ingest", str(docs), "--kb", kb, "--no-progress", "--json")
    assert json.loads(run(*ingest, "--embedder", "fake").output)["added"] == ["t"]
    (docs / "t.md").write_text("# T\n\nThreads are pooled, corrected.", "utf-8")
    changed = json.loads(run(*ingest).output)
    assert changed["after_withdrawal"] == ["t"] and changed["kept_withdrawn"] == []  # the file's word holds
    assert "changed since withdrawn" not in run(*ingest[:-1]).output  # said once, when it happened


def test_ingest_prune_serves_again_a_file_that_came_back(tmp_path) -> None:
    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe gate code is 1234.", "utf-8")
    (docs / "b.md").write_text("# B\n\nOther text.", "utf-8")
    prune = ("ingest", str(docs), "--kb", kb, "--no-progress", "--prune", "--embedder", "fake")
    assert run(*prune).exit_code == 0
    kept = (docs / "a.md").read_bytes()
    (docs / "a.md").unlink()
    assert json.loads(run(*prune, "--json").output)["pruned"]["withdrawn"] == ["a"]
    (docs / "a.md").write_bytes(kept)
    back = json.loads(run(*prune, "--json").output)
    assert back["restored"] == ["a"]
    rows = json.loads(run("docs", "list", "--kb", kb, "--json").output)
    assert {row["id"]: row["status"] for row in rows} == {"a": "active", "b": "active"}


def test_ingest_names_documents_whose_allowed_roles_the_tenant_does_not_define(tmp_path) -> None:
    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    staff = "---\nvisibility: internal\nallowed_roles: [staff]\n---\n# S\n\n"
    (docs / "s.md").write_text(staff + "Staff only.", "utf-8")
    (docs / "p.md").write_text("# P\n\nPublic.", "utf-8")
    first = run("ingest", str(docs), "--kb", kb, "--no-progress", "--embedder", "fake", "--json")
    assert json.loads(first.output)["undefined_roles"] == [{"id": "s", "roles": ["staff"]}]
    (docs / "s.md").write_text(staff + "Staff, v2.", "utf-8")
    defined = run("ingest", str(docs), "--kb", kb, "--no-progress", "--roles", "public,staff").output
    assert "revised 1" in defined and "allowed roles the tenant does not define" not in defined


def test_ingest_without_prune_names_the_files_that_left_the_folder(tmp_path) -> None:
    docs, _, ingest = _ingested(tmp_path, {"a.md": "# A\n\nThe gate code is 1234.", "b.md": "# B\n\nOther."})
    (docs / "a.md").unlink()
    told = run(*ingest).output
    assert "  gone from the folder, still served 1: a (--prune withdraws what left the folder)" in told
    assert json.loads(run(*ingest, "--json").output)["gone_but_served"] == ["a"]
    pruned = json.loads(run(*ingest, "--prune", "--json").output)
    assert pruned["gone_but_served"] == [] and "gone from the folder" not in run(*ingest).output
