"""``veracity sync`` of a folder source, on each backend: only changed files are read, removals
are withdrawn, a folder that vanished withdraws nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from veracity.cli.main import main
from veracity.kb.directory import open_kb


def test_folder_sync_on_each_backend(kb_backend: str, tmp_path: Path, request) -> None:
    location = str(tmp_path / "kb") if kb_backend == "sqlite" else request.getfixturevalue("pg_url")
    handbook = tmp_path / "handbook"
    (handbook / "guide").mkdir(parents=True)
    (handbook / "guide" / "setup.md").write_text("# Setup\n\nInstall the agent first.\n", encoding="utf-8")
    (handbook / "faq.md").write_text("# FAQ\n\nAsk support.\n", encoding="utf-8")
    (handbook / "notes.txt").write_text("Left out by the include glob.\n", encoding="utf-8")
    sources = tmp_path / "veracity.yaml"
    sources.write_text(
        "sources:\n  - name: handbook\n    folder: handbook\n    include: ['**/*.md']\n"
        "    governance: {trust: community}\n",
        encoding="utf-8",
    )
    args = ["sync", "--kb", location, "--sources", str(sources), "--embedder", "fake", "--json", "--work",
            str(tmp_path / "work")]  # fmt: skip
    runner = CliRunner()

    def sync() -> dict:
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.output)["sources"][0]

    first = sync()
    assert (first["files"], first["read"], sorted(first["added"])) == (2, 2, ["faq", "guide/setup"])
    assert sync()["changes"] == 0 and sync()["read"] == 0
    (handbook / "faq.md").write_text("# FAQ\n\nAsk support, or the forum.\n", encoding="utf-8")
    (handbook / "guide" / "setup.md").unlink()
    third = sync()
    assert (third["read"], third["revised"], third["withdrawn"]) == (1, ["faq"], ["guide/setup"])
    kb = open_kb(location)
    try:
        active = {d.source_id: d for d in kb.catalog.documents() if d.status.value == "active"}
        assert set(active) == {"faq"} and active["faq"].trust.value == "community"
    finally:
        kb.catalog.store.close()
    shutil.rmtree(handbook)
    gone = sync()
    assert gone["error"] and "does not exist" in gone["error"] and gone["changes"] == 0


def test_a_file_that_comes_back_is_served_again_but_a_withdrawal_by_request_holds(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nThe gate code is 1234.\n", encoding="utf-8")
    (folder / "b.md").write_text("# B\n\nThe door code is 5678.\n", encoding="utf-8")
    sources = tmp_path / "veracity.yaml"
    sources.write_text("sources:\n  - name: f\n    folder: f\n", encoding="utf-8")
    kb = str(tmp_path / "kb")
    runner = CliRunner()

    def sync() -> dict:
        args = ["sync", "--kb", kb, "--sources", str(sources), "--embedder", "fake", "--json"]
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["sources"][0]

    def statuses() -> dict[str, str]:
        opened = open_kb(kb)
        try:
            return {d.source_id: d.status.value for d in opened.catalog.documents()}
        finally:
            opened.catalog.store.close()

    sync()
    assert runner.invoke(main, ["withdraw", "b", "--kb", kb]).exit_code == 0  # by request: it holds
    kept = (folder / "a.md").read_bytes()
    (folder / "a.md").unlink()
    assert sync()["withdrawn"] == ["a"]
    (folder / "a.md").write_bytes(kept)
    back = sync()
    assert back["restored"] == ["a"] and back["changes"] == 1
    assert statuses() == {"a": "active", "b": "withdrawn"}
    assert sync()["changes"] == 0 and statuses() == {"a": "active", "b": "withdrawn"}
    (folder / "b.md").write_text("# B\n\nThe door code is 9999.\n", encoding="utf-8")
    edited = sync()  # an edit of a file withdrawn by request is no decision to serve it
    assert edited["kept_withdrawn"] == ["b"] and statuses() == {"a": "active", "b": "withdrawn"}
    (folder / "a.md").unlink()
    assert sync()["withdrawn"] == ["a"]
    (folder / "a.md").write_text("# A\n\nThe gate code is 4321.\n", encoding="utf-8")
    assert sync()["added"] == ["a"] and statuses()["a"] == "active"  # pruned, then back changed: served


def test_a_source_defines_the_roles_its_governance_names(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "oncall.md").write_text("# 值班\n\n值班电话是 555-0100。\n", encoding="utf-8")
    sources = tmp_path / "veracity.yaml"
    entry = "sources:\n  - name: f\n    folder: f\n    tenant: acme\n"
    governance = "    governance: {visibility: internal, allowed_roles: [staff]}\n"
    kb = str(tmp_path / "kb")
    runner = CliRunner()
    sources.write_text(entry + governance, encoding="utf-8")
    args = ["sync", "--kb", kb, "--sources", str(sources), "--embedder", "fake", "--no-progress"]
    without = runner.invoke(main, args, catch_exceptions=False)
    assert "allowed roles the tenant does not define, so nobody can use these 1" in without.output
    assert "oncall (staff)" in without.output
    sources.write_text(entry + "    roles: [staff]\n" + governance, encoding="utf-8")
    assert runner.invoke(main, [*args, "--json"], catch_exceptions=False).exit_code == 0
    staff = ["--kb", kb, "--tenant", "acme", "--role", "staff"]
    asked = runner.invoke(main, ["ask", "值班电话是多少？", *staff])
    assert asked.exit_code == 0 and "555-0100" in asked.output, asked.output


def test_a_copy_keeps_the_sync_state_so_its_first_sync_reads_nothing(tmp_path: Path) -> None:
    from veracity.kb.copy import copy_kb

    folder = tmp_path / "f"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.md").write_text(f"# {name}\n\nText of {name}.\n", encoding="utf-8")
    sources = tmp_path / "veracity.yaml"
    sources.write_text("sources:\n  - name: f\n    folder: f\n", encoding="utf-8")
    runner = CliRunner()

    def sync(kb: Path) -> dict:
        args = ["sync", "--kb", str(kb), "--sources", str(sources), "--embedder", "fake", "--json"]
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["sources"][0]

    assert sync(tmp_path / "kb")["read"] == 2
    copied = copy_kb(tmp_path / "kb", tmp_path / "copy")
    assert copied.rows["sync_files"] == 2 and copied.rows["sync_sources"] == 1
    first = sync(tmp_path / "copy")
    assert (first["read"], first["unchanged"], first["changes"]) == (0, 2, 0)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    refused = runner.invoke(main, ["kb", "copy", str(tmp_path / "kb"), str(occupied)])
    assert refused.exit_code == 1 and "is not empty; copy into a new or empty folder" in refused.output
    assert sorted(p.name for p in occupied.iterdir()) == ["notes.txt"]


def test_two_sources_with_the_same_id_do_not_replace_each_others_document(tmp_path: Path) -> None:
    for name, size in (("a", "120 MB"), ("b", "80 MB")):
        (tmp_path / name).mkdir()
        text = f"# Install\n\nThe installer is {size}.\n"
        (tmp_path / name / "install.md").write_text(text, encoding="utf-8")
    sources = tmp_path / "veracity.yaml"
    sources.write_text("sources:\n  - name: a\n    folder: a\n  - name: b\n    folder: b\n", encoding="utf-8")
    kb = str(tmp_path / "kb")
    args = ["sync", "--kb", kb, "--sources", str(sources), "--embedder", "fake", "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    first, second = json.loads(result.output)["sources"]
    assert first["added"] == ["install"] and second["added"] == []
    ((path, reason),) = second["rejected"]
    assert path == "install.md" and "id 'install' is a document of source 'a'" in reason
    again = json.loads(CliRunner().invoke(main, args, catch_exceptions=False).output)["sources"]
    assert again[0]["changes"] == 0 and again[1]["rejected"]  # still refused, nothing replaced
    opened = open_kb(kb)
    try:
        (document,) = opened.catalog.documents()
        assert "120 MB" in opened.catalog.chunks(document.document_id)[0].text
    finally:
        opened.catalog.store.close()
