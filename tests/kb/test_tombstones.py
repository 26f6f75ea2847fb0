"""Deletion sticks (tombstones, --restore) and folders can be synced (--prune, --prune --delete)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import open_kb
from veracity.kb.lifecycle import status_report
from veracity.model.contracts import Status


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keep.md").write_text("# 保留\n\n这一篇一直都在。", "utf-8")
    (docs / "gone.md").write_text("# 临时\n\n这一篇稍后会被删掉，其中的暗号是 ZEBRA-42。", "utf-8")
    return docs


def ingest(docs: Path, kb_dir: Path, *options: str):
    return run("ingest", str(docs), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress", *options)


def test_a_deleted_document_stays_deleted_until_restored(tmp_path) -> None:
    docs, kb_dir = _folder(tmp_path), tmp_path / "kb"
    ingest(docs, kb_dir)
    assert "gone (tenant default): deleted" in run("delete", "gone", "--kb", str(kb_dir)).output
    again = ingest(docs, kb_dir)
    assert "added 0" in again.output and "skipped 1" in again.output
    assert "  skipped gone: deleted earlier" in again.output and "--restore ingests it again" in again.output
    kb = open_kb(kb_dir, FakeEmbedder())
    assert [d.source_id for d in kb.catalog.documents()] == ["keep"]
    report = status_report(kb, kb_dir)
    assert report["tombstones"] == 1 and report["ingestion"] == {"skipped": 1, "unchanged": 1}
    raw = (kb_dir / "catalog.sqlite").read_bytes()
    assert b"ZEBRA-42" not in raw  # the tombstone names nothing in clear
    kb.catalog.store.close()
    status = run("status", "--kb", str(kb_dir)).output
    assert "deleted sources remembered: 1" in status and "1 skipped" in status

    restored = ingest(docs, kb_dir, "--restore")
    assert "added 1" in restored.output
    kb = open_kb(kb_dir, FakeEmbedder())
    assert sorted(d.source_id for d in kb.catalog.documents()) == ["gone", "keep"]
    assert status_report(kb, kb_dir)["tombstones"] == 0


def test_delete_records_the_file_state_in_the_ledger(tmp_path) -> None:
    docs, kb_dir = _folder(tmp_path), tmp_path / "kb"
    ingest(docs, kb_dir)
    run("delete", "gone", "--kb", str(kb_dir))
    kb = open_kb(kb_dir, FakeEmbedder())
    assert status_report(kb, kb_dir)["ingestion"] == {"active": 1, "deleted": 1}
    ids = kb.catalog.store.connection.execute(
        "SELECT count(*) FROM ingestion_steps WHERE source = 'gone.md' AND source_id IS NOT NULL"
    ).fetchone()
    assert ids == (0,)  # the ledger keeps the file's way, not the deleted document's ids


def test_prune_withdraws_documents_whose_files_are_gone(tmp_path) -> None:
    docs, kb_dir = _folder(tmp_path), tmp_path / "kb"
    ingest(docs, kb_dir)
    (docs / "gone.md").unlink()
    assert "withdrew" not in ingest(docs, kb_dir).output  # without --prune nothing happens
    pruned = ingest(docs, kb_dir, "--prune")
    assert "  pruned (file gone), withdrew 1: gone" in pruned.output.splitlines()
    kb = open_kb(kb_dir, FakeEmbedder())
    assert {d.source_id: d.status for d in kb.catalog.documents()} == {
        "gone": Status.WITHDRAWN,
        "keep": Status.ACTIVE,
    }
    assert status_report(kb, kb_dir)["ingestion"] == {"unchanged": 1, "withdrawn": 1}
    indexed = {d.source_id: d.status for d in kb.snapshot.documents.values()}
    assert indexed["gone"] is Status.WITHDRAWN  # the index knows before any question


def test_prune_delete_removes_them(tmp_path) -> None:
    docs, kb_dir = _folder(tmp_path), tmp_path / "kb"
    ingest(docs, kb_dir)
    (docs / "gone.md").unlink()
    bad = CliRunner().invoke(main, ["ingest", str(docs), "--kb", str(kb_dir), "--delete"])
    assert bad.exit_code == 2 and "--prune" in bad.output
    pruned = ingest(docs, kb_dir, "--prune", "--delete")
    assert "  pruned (file gone), deleted 1: gone" in pruned.output.splitlines()
    kb = open_kb(kb_dir, FakeEmbedder())
    assert [d.source_id for d in kb.catalog.documents()] == ["keep"]
    assert b"ZEBRA-42" not in (kb_dir / "catalog.sqlite").read_bytes()
    kb.catalog.store.close()
    (docs / "gone.md").write_text("# 临时\n\n又回来了。", "utf-8")
    assert "added 1" in ingest(docs, kb_dir).output  # no tombstone: a returning file is new


def test_lifecycle_commands_never_take_one_tenants_document_for_anothers(tmp_path) -> None:
    kb_dir = tmp_path / "kb"
    for tenant, text in (("default", "# 退款\n\n七天内可退款。"), ("acme", "# 退款\n\n三十天内可退款。")):
        folder = tmp_path / tenant
        folder.mkdir()
        (folder / "refunds.md").write_text(text, "utf-8")
        assert ingest(folder, kb_dir, "--tenant", tenant).exit_code == 0

    def statuses() -> dict[str, str]:
        kb = open_kb(kb_dir, FakeEmbedder())
        try:
            return {d.tenant: d.status.value for d in kb.catalog.documents()}
        finally:
            kb.catalog.store.close()

    for command in ("withdraw", "retire", "delete"):
        refused = CliRunner().invoke(main, [command, "refunds", "--kb", str(kb_dir)])
        assert refused.exit_code != 0 and "is in 2 tenants (acme, default); name one" in refused.output
    shown = CliRunner().invoke(main, ["docs", "show", "refunds", "--kb", str(kb_dir)])
    assert shown.exit_code != 0 and "name one" in shown.output
    assert statuses() == {"acme": "active", "default": "active"}  # nothing was touched
    withdrawn = run("withdraw", "refunds", "--kb", str(kb_dir), "--tenant", "acme").output
    assert "refunds (tenant acme): withdrawn" in withdrawn
    assert statuses() == {"acme": "withdrawn", "default": "active"}
    deleted = run("delete", "refunds", "--kb", str(kb_dir), "--tenant", "default").output
    assert "refunds (tenant default): deleted" in deleted
    assert statuses() == {"acme": "withdrawn"}
    missing = CliRunner().invoke(main, ["withdraw", "refunds", "--kb", str(kb_dir), "--tenant", "nobody"])
    assert missing.exit_code != 0 and "no document or source 'refunds' in tenant 'nobody'" in missing.output
