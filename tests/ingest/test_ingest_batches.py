"""An ingest writes many files per catalog statement: the outcome is still each file's own.

The ingest decides a part of files from one read of the catalog and writes them
together (``veracity.ingest.file_parts.write_part``); these check, on both backends, that a file
refused when it is written is rejected alone, that two files of one source in one part
still make a revision, and that a run spanning parts and a re-run report what a
file-by-file ingest reports.
"""

from __future__ import annotations

from pathlib import Path

from veracity.catalog.ledger import history, latest_states
from veracity.catalog.sources import source_paths
from veracity.index.embedders import FakeEmbedder
from veracity.ingest.run import FILES_PER_PART, ingest_paths
from veracity.kb.directory import create_kb
from veracity.model.contracts import Status

HEAD = "---\nid: {id}\nrevision: '{revision}'\ntitle: {title}\ntenant: {tenant}\nvalid_from: 2026-01-01\n"
TAIL = "status: {status}\nvisibility: public\ntrust: official\n---\n\n{body}\n"


def _write(folder: Path, name: str, *, id: str, tenant: str = "acme", revision: str = "1",
           status: str = "active", body: str = "正文内容。", title: str = "T") -> None:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    text = HEAD.format(id=id, revision=revision, tenant=tenant, title=title)
    text += TAIL.format(status=status, body=body)
    (folder / name).write_text(text, "utf-8")


def _kb(tmp_path: Path, kb_backend: str, request) -> tuple[object, object]:
    location = tmp_path / "kb" if kb_backend == "sqlite" else request.getfixturevalue("pg_url")
    return create_kb(location, FakeEmbedder()), location


def test_a_file_the_catalog_refuses_is_rejected_alone(tmp_path, kb_backend, request, monkeypatch) -> None:
    from veracity.catalog import queries
    from veracity.model.errors import ValidationError

    real = queries.check_new

    def refusing(document, chunks, stored, owner):  # the catalog's last word on one put of a part
        if document.source_id == "shared":
            raise ValidationError("refused by the catalog", document="shared", field="id")
        return real(document, chunks, stored, owner)

    monkeypatch.setattr(queries, "check_new", refusing)
    docs = tmp_path / "docs"
    _write(docs, "a.md", id="a")
    _write(docs, "b.md", id="shared")
    _write(docs, "c.md", id="c")
    kb, _ = _kb(tmp_path, kb_backend, request)
    report = ingest_paths(kb, [docs], roles=["public"])
    assert report.added == ("a", "c")
    [(source, reason)] = report.rejected
    assert source == "b.md" and "refused by the catalog" in reason
    connection = kb.catalog.store.connection  # type: ignore[attr-defined]
    assert [step["state"] for step in history(connection, "b.md")] == ["discovered", "failed"]
    assert set(source_paths(connection)) == {("acme", "a"), ("acme", "c")}
    assert {d.source_id for d in kb.catalog.documents()} == {"a", "c"}  # type: ignore[attr-defined]
    again = ingest_paths(kb, [docs])
    assert again.unchanged == ("a", "c") and [s for s, _ in again.rejected] == ["b.md"]


def test_the_same_file_for_two_tenants_goes_in_for_both(tmp_path, kb_backend, request) -> None:
    docs = tmp_path / "docs"
    _write(docs, "a.md", id="shared")
    _write(docs, "b.md", id="shared", tenant="other")  # the same path, revision and text, another tenant
    kb, _ = _kb(tmp_path, kb_backend, request)
    report = ingest_paths(kb, [docs], roles=["public"])
    assert report.added == ("shared", "shared") and not report.rejected
    assert sorted(d.tenant for d in kb.catalog.documents()) == ["acme", "other"]  # type: ignore[attr-defined]


def test_two_files_of_one_source_make_a_revision(tmp_path, kb_backend, request) -> None:
    docs = tmp_path / "docs"
    _write(docs, "a1.md", id="guide", revision="1", body="第一版。")
    _write(docs, "a2.md", id="guide", revision="2", body="第二版。")
    kb, _ = _kb(tmp_path, kb_backend, request)
    report = ingest_paths(kb, [docs], roles=["public"])
    assert report.added == ("guide",) and report.revised == ("guide",) and not report.rejected
    stored = kb.catalog.documents()  # type: ignore[attr-defined]
    assert [(d.revision, d.status) for d in stored] == [("1", Status.RETIRED), ("2", Status.ACTIVE)]


def test_a_run_over_several_parts_reports_each_file(tmp_path, kb_backend, request) -> None:
    docs = tmp_path / "docs"
    count = FILES_PER_PART + 9
    for n in range(count):
        status = "gone" if n == FILES_PER_PART - 1 else "active"  # the last file of the first part
        _write(docs, f"doc-{n:03d}.md", id=f"doc-{n:03d}", status=status, body=f"第 {n} 篇。")
    kb, _ = _kb(tmp_path, kb_backend, request)
    report = ingest_paths(kb, [docs], roles=["public"], jobs=1)
    bad = f"doc-{FILES_PER_PART - 1:03d}.md"
    assert len(report.added) == count - 1 and [s for s, _ in report.rejected] == [bad]
    assert report.chunks_added == count - 1
    connection = kb.catalog.store.connection  # type: ignore[attr-defined]
    assert latest_states(connection) == {"active": count - 1, "failed": 1}
    assert [step["state"] for step in history(connection, "doc-000.md")] == [
        "discovered", "parsed", "chunked", "embedded", "indexed", "active",
    ]  # fmt: skip
    assert len(source_paths(connection)) == count - 1
    again = ingest_paths(kb, [docs], jobs=1)
    assert len(again.unchanged) == count - 1 and not again.added and [s for s, _ in again.rejected] == [bad]
    assert latest_states(connection) == {"failed": 1, "unchanged": count - 1}
