"""``--restore`` keeps the status a file declares, and files of one ingest that come to one id are
rejected instead of overwriting each other (veracity.ingest.file_parts)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb, open_kb
from veracity.kb.lifecycle import change_status
from veracity.model.contracts import Status
from veracity.pipeline.engine import Engine

WITHDRAWN_BY_FILE = (
    "---\nstatus: withdrawn\n---\n# W\n\nthe recalled walrus firmware must never be installed.\n"
)


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def ingest(folder: Path, kb_dir: Path, *options: str):
    return run("ingest", str(folder), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress", *options)


def statuses(kb: Engine, source_id: str) -> list[tuple[str, Status]]:
    """``(revision, status)`` of every stored revision of ``source_id``, oldest first."""
    return [(d.revision, d.status) for d in kb.catalog.store.find_documents(source_id=source_id)]


def folder_with(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file_name, text in files.items():
        (folder / file_name).write_text(text, "utf-8")
    return folder


def test_restore_keeps_withdrawn_a_document_its_own_file_declares_withdrawn(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, "docs", {"wd.md": WITHDRAWN_BY_FILE, "ok.md": "# OK\n\nstill current.\n"})
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    ingest_paths(kb, [folder], jobs=1)
    assert statuses(kb, "wd") == [("1", Status.WITHDRAWN)]
    for _ in range(2):  # the second one decides from the recorded fingerprint, not a parse
        report = ingest_paths(kb, [folder], jobs=1, restore=True)
        assert report.restored == () and sorted(report.unchanged) == ["ok", "wd"]
        assert statuses(kb, "wd") == [("1", Status.WITHDRAWN)]


def test_restore_through_the_cli_neither_revives_nor_cites_a_file_withdrawn_document(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, "docs", {"wd.md": WITHDRAWN_BY_FILE})
    kb_dir = tmp_path / "kb"
    ingest(folder, kb_dir)
    restored = ingest(folder, kb_dir, "--restore")
    assert restored.exit_code == 0 and "restored" not in restored.output
    listed = json.loads(run("docs", "list", "--kb", str(kb_dir), "--json").output)
    assert [(d["id"], d["status"]) for d in listed] == [("wd", "withdrawn")]
    asked = run(
        "ask", "What about the recalled walrus firmware?", "--kb", str(kb_dir), "--embedder", "fake", "--json"
    )
    answer = json.loads(asked.output)
    assert answer["citations"] == [] and answer["status"] == "abstain"


def test_restore_still_revives_what_a_command_withdrew_and_says_so(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, "docs", {"doc.md": "# Doc\n\nthe pump runs at noon.\n"})
    kb_dir = tmp_path / "kb"
    ingest(folder, kb_dir)
    kb = open_kb(kb_dir, FakeEmbedder())
    change_status(kb, kb_dir, "doc", Status.WITHDRAWN)
    kb.catalog.store.close()
    restored = ingest(folder, kb_dir, "--restore")
    assert "  restored 1: doc" in restored.output
    kb = open_kb(kb_dir, FakeEmbedder())
    assert statuses(kb, "doc") == [("1", Status.ACTIVE)]


def test_a_file_edited_to_declare_withdrawn_withdraws_its_stored_document(tmp_path: Path) -> None:
    text = "# Doc\n\nthe pump runs at noon.\n"
    folder = folder_with(tmp_path, "docs", {"doc.md": text})
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    ingest_paths(kb, [folder], jobs=1)
    (folder / "doc.md").write_text("---\nstatus: withdrawn\n---\n" + text, "utf-8")
    for restore in (False, True):  # and --restore does not take it back: the file says withdrawn
        report = ingest_paths(kb, [folder], jobs=1, restore=restore)
        assert report.unchanged == ("doc",) and report.revised == () and report.restored == ()
        assert statuses(kb, "doc") == [("1", Status.WITHDRAWN)]


def test_two_files_with_one_default_id_reject_the_later_and_a_rerun_adds_nothing(tmp_path: Path) -> None:
    folder = folder_with(
        tmp_path,
        "docs",
        {"guide.md": "# A\n\nguide in markdown.\n", "guide.txt": "B text", "other.md": "# O\n\no.\n"},
    )
    kb_dir = tmp_path / "kb"
    for _ in range(3):
        result = ingest(folder, kb_dir)
        assert result.exit_code == 1 and "revised 0" in result.output and "rejected 1" in result.output
        assert "rejected guide.txt: document 'guide', field 'id': guide.md of this ingest" in result.output
        assert "give one of them its own id" in result.output
    kb = open_kb(kb_dir, FakeEmbedder())
    assert statuses(kb, "guide") == [("1", Status.ACTIVE)] and statuses(kb, "other") == [("1", Status.ACTIVE)]
    assert kb.catalog.document("guide").title == "A"


def test_an_id_given_through_metadata_that_another_file_has_is_rejected(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, "docs", {"a.md": "# A\n\nfirst.\n", "b.md": "# B\n\nsecond.\n"})
    mapping = tmp_path / "map.yaml"
    mapping.write_text('"b.md": {id: a}\n', "utf-8")
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    for _ in range(2):
        report = ingest_paths(kb, [folder], metadata_file=mapping, jobs=1)
        assert [source for source, _ in report.rejected] == ["b.md"]
        assert "a.md of this ingest already has this id" in report.rejected[0][1]
        assert report.revised == ()
    assert statuses(kb, "a") == [("1", Status.ACTIVE)] and kb.catalog.document("a").title == "A"


def test_one_id_and_revision_declared_twice_is_rejected_but_distinct_revisions_go_in(tmp_path: Path) -> None:
    def declaring(revision: str, body: str) -> str:
        return f"---\nid: guide\nrevision: '{revision}'\n---\n# Guide\n\n{body}\n"

    folder = folder_with(
        tmp_path,
        "docs",
        {"a.md": declaring("1", "one"), "b.md": declaring("2", "two"), "c.md": declaring("2", "dup")},
    )
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    for _ in range(2):
        report = ingest_paths(kb, [folder], jobs=1)
        assert [source for source, _ in report.rejected] == ["c.md"]
        assert "b.md of this ingest already has this id" in report.rejected[0][1]
    assert statuses(kb, "guide") == [("1", Status.RETIRED), ("2", Status.ACTIVE)]


def test_one_path_in_two_folders_of_one_ingest_is_rejected_naming_both_files(tmp_path: Path) -> None:
    first = folder_with(tmp_path, "one", {"guide.md": "# One\n\nfirst folder.\n"})
    second = folder_with(tmp_path, "two", {"guide.md": "# Two\n\nsecond folder.\n"})
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    report = ingest_paths(kb, [first, second], jobs=1)
    assert report.added == ("guide",) and len(report.rejected) == 1
    reason = report.rejected[0][1]
    assert str(first / "guide.md") in reason and str(second / "guide.md") in reason
    assert statuses(kb, "guide") == [("1", Status.ACTIVE)]


def test_separate_ingests_of_two_folders_still_revise_one_id(tmp_path: Path) -> None:
    first = folder_with(tmp_path, "one", {"guide.md": "# One\n\nfirst folder.\n"})
    second = folder_with(tmp_path, "two", {"guide.md": "# Two\n\nsecond folder.\n"})
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    assert ingest_paths(kb, [first], jobs=1).added == ("guide",)
    later = ingest_paths(kb, [second], jobs=1)
    assert later.revised == ("guide",) and later.rejected == ()
    assert statuses(kb, "guide") == [("1", Status.RETIRED), ("2", Status.ACTIVE)]


def test_one_file_goes_in_for_two_tenants_and_neither_learns_of_the_other(tmp_path: Path) -> None:
    """The same path and bytes for acme and globex are two documents: no rejection that would
    tell globex's operator that acme holds the file."""
    runner, kb = CliRunner(), str(tmp_path / "kb")
    for tenant in ("acme", "globex"):
        folder = tmp_path / tenant
        folder.mkdir()
        (folder / "terms.md").write_text("# Terms\n\nProvided as is.\n", "utf-8")
        args = ["ingest", str(folder), "--kb", kb, "--tenant", tenant, "--no-progress", "--embedder", "fake"]
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and "rejected 0" in result.output, result.output
    rows = json.loads(runner.invoke(main, ["docs", "list", "--kb", kb, "--json"]).output)
    assert sorted((row["tenant"], row["id"], row["status"]) for row in rows) == [
        ("acme", "terms", "active"), ("globex", "terms", "active")
    ]  # fmt: skip
