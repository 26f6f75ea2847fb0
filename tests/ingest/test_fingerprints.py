"""A file whose bytes, sidecar and ingest options are as when it was last ingested is not parsed
again, and the knowledge base comes out as if it had been (veracity.ingest.fingerprints)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ingest.test_parallel_ingest import contents, report_of, write_folder
from veracity.index.embedders import FakeEmbedder
from veracity.ingest import loading
from veracity.ingest.loading import PARALLEL_MIN_FILES
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb
from veracity.kb.lifecycle import change_status, delete
from veracity.model.contracts import Status
from veracity.parse.limits import InputLimits


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files parsed in this process from now on, by path."""
    seen: list[str] = []
    real = loading.load_source

    def counting(path, **options):
        seen.append(Path(path).name)
        return real(path, **options)

    monkeypatch.setattr(loading, "load_source", counting)
    return seen


def folder_of(tmp_path: Path, count: int = 4) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(count):
        (folder / f"doc-{i}.md").write_text(
            f"---\nvalid_from: '2026-01-01'\n---\n# 主题 {i}\n\n第 {i} 篇：端口默认为 {5000 + i}。\n",
            encoding="utf-8",
        )
    return folder


def wipe_fingerprints(kb) -> None:
    kb.catalog.store.connection.execute(
        "UPDATE source_files SET fingerprint = NULL, document_id = NULL, diagnostics = NULL"
    )


def test_an_unchanged_file_is_not_parsed_and_comes_out_as_if_it_were(tmp_path: Path, parses) -> None:
    folder = folder_of(tmp_path)
    runs = {}
    for name, keep in (("fingerprints", True), ("parsed", False)):
        kb = create_kb(tmp_path / name, FakeEmbedder())
        ingest_paths(kb, [folder], tenant="acme", jobs=1)
        if not keep:
            wipe_fingerprints(kb)
        parses.clear()
        again = ingest_paths(kb, [folder], tenant="acme", jobs=1)
        runs[name] = (list(parses), report_of(again), contents(kb))
        kb.catalog.store.close()
    assert runs["fingerprints"][0] == [] and len(runs["parsed"][0]) == 4  # not vacuous
    assert runs["fingerprints"][1:] == runs["parsed"][1:]  # reports, catalog, ledger, index
    assert len(runs["fingerprints"][1][2]) == 4  # all unchanged


def test_changed_bytes_sidecar_or_options_parse_again(tmp_path: Path, parses) -> None:
    folder = folder_of(tmp_path)
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    ingest_paths(kb, [folder], tenant="acme", jobs=1)
    (folder / "doc-1.md").write_text("# 主题 1\n\n改过的说明。\n", encoding="utf-8")
    (folder / "doc-2.md.meta.yaml").write_text("title: 新标题\n", encoding="utf-8")
    parses.clear()
    report = ingest_paths(kb, [folder], tenant="acme", jobs=1)
    assert sorted(parses) == ["doc-1.md", "doc-2.md"]
    assert sorted(report.revised) == ["doc-1", "doc-2"] and sorted(report.unchanged) == ["doc-0", "doc-3"]
    parses.clear()
    ingest_paths(kb, [folder], tenant="acme", jobs=1, limits=InputLimits(max_chunks=500))
    assert len(parses) == 4  # other options: every file parsed again


def test_withdrawn_restored_and_deleted_documents_decide_as_parsed_ones(tmp_path: Path, parses) -> None:
    folder = folder_of(tmp_path)
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    ingest_paths(kb, [folder], tenant="acme", jobs=1)
    change_status(kb, tmp_path / "kb", "doc-0", Status.WITHDRAWN)
    parses.clear()
    assert ingest_paths(kb, [folder], tenant="acme", jobs=1).unchanged == ("doc-0", "doc-1", "doc-2", "doc-3")
    assert ingest_paths(kb, [folder], tenant="acme", jobs=1, restore=True).restored == ("doc-0",)
    assert parses == []
    doomed = kb.catalog.document("doc-1").document_id
    delete(kb, tmp_path / "kb", "doc-1")
    rows = kb.catalog.store.connection.execute("SELECT document_id, fingerprint FROM source_files").fetchall()
    assert all(document_id != doomed for document_id, _ in rows)  # deleting blanks it
    report = ingest_paths(kb, [folder], tenant="acme", jobs=1)
    assert parses == ["doc-1.md"] and report.skipped[0][0] == "doc-1"  # the tombstone, as before


def test_a_newer_revision_from_elsewhere_makes_the_file_parse_again(tmp_path: Path, parses) -> None:
    folder = folder_of(tmp_path, 2)
    other = tmp_path / "other"
    other.mkdir()
    (other / "doc-0.md").write_text("# 主题 0\n\n另一处的新版本。\n", encoding="utf-8")
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    ingest_paths(kb, [folder], tenant="acme", jobs=1)
    ingest_paths(kb, [other], tenant="acme", jobs=1)  # the same source id, newer content
    parses.clear()
    report = ingest_paths(kb, [folder], tenant="acme", jobs=1)
    assert parses == ["doc-0.md"] and report.revised == ("doc-0",)  # the folder's content wins again


def test_workers_skip_unchanged_files_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "docs"
    write_folder(folder, PARALLEL_MIN_FILES + 6)
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    first = ingest_paths(kb, [folder], tenant="acme", jobs=2)

    def refuse(path, **options):
        raise OSError(f"parsed {path}")

    monkeypatch.setattr(loading, "load_source", refuse)  # forked workers inherit it
    (folder / "broken.md").unlink()  # it failed: nothing was recorded of it
    (folder / "empty.md").unlink()
    again = ingest_paths(kb, [folder], tenant="acme", jobs=2)
    assert again.rejected == () and len(again.unchanged) == len(first.added) == PARALLEL_MIN_FILES + 6
