"""Editing a document: numbered revisions, only new chunks embedded, progress after every embedding call."""

from __future__ import annotations

import os
from pathlib import Path

from veracity.index.embedders import FakeEmbedder
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb
from veracity.model.contracts import Status


class CountingEmbedder(FakeEmbedder):
    """The default FakeEmbedder (same model id) counting the passages it embeds and its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0
        self.calls = 0

    def embed_batch(self, texts, *, kind="passage"):
        if kind == "passage":
            self.texts += len(texts)
            self.calls += 1
        return super().embed_batch(texts, kind=kind)


def _manual(sections: int, changed: int | None = None) -> str:
    parts = ["# Operations manual"]
    for number in range(sections):
        detail = "now at 03:00 UTC" if number == changed else "at 02:00 UTC"
        parts.append(
            f"## Task {number}\n\nTask {number} runs every night {detail}. "
            f"It writes its log to /var/log/task-{number}.log and keeps {number + 3} days of history."
        )
    return "\n\n".join(parts)


def _write(path: Path, text: str, mtime: float) -> None:
    path.write_text(text, "utf-8")
    os.utime(path, (mtime, mtime))


def test_editing_one_line_embeds_only_the_changed_chunk_and_numbers_the_revision(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manual = docs / "manual.md"
    _write(manual, _manual(40), 1_767_225_600)
    embedder = CountingEmbedder()
    kb = create_kb(tmp_path / "kb", embedder)
    first = ingest_paths(kb, [docs])
    assert first.added == ("manual",) and first.chunks_added > 10
    assert embedder.texts == first.chunks_added

    _write(manual, _manual(40), 1_767_312_000)  # touched, not changed: nothing to do
    touched = ingest_paths(kb, [docs])
    assert touched.unchanged == ("manual",) and embedder.texts == first.chunks_added

    before = embedder.texts
    _write(manual, _manual(40, changed=17), 1_767_398_400)
    second = ingest_paths(kb, [docs])
    assert second.revised == ("manual",)
    assert embedder.texts - before == 1 == second.index.embedded_chunks
    assert second.index.reused_chunks == second.chunks_added - 1
    revisions = [(d.revision, d.status) for d in kb.catalog.documents() if d.source_id == "manual"]
    assert revisions == [("1", Status.RETIRED), ("2", Status.ACTIVE)]
    vectors = kb.snapshot.stats().vectors
    assert vectors == first.chunks_added + second.chunks_added  # every chunk has its vector

    _write(manual, _manual(40), 1_767_484_800)  # back to the first text: a new revision, 3
    third = ingest_paths(kb, [docs])
    assert third.revised == ("manual",) and third.index.embedded_chunks == 0
    assert [d.revision for d in kb.catalog.documents() if d.status is Status.ACTIVE] == ["3"]


def test_reused_vectors_pass_index_verification(tmp_path) -> None:
    from veracity.index.sqlite.verify import verify_version

    docs = tmp_path / "docs"
    docs.mkdir()
    _write(docs / "manual.md", _manual(12), 1_767_225_600)
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    ingest_paths(kb, [docs])
    _write(docs / "manual.md", _manual(12, changed=3), 1_767_312_000)
    ingest_paths(kb, [docs])
    verification = verify_version(kb.snapshot, kb.catalog, kb.embedder)
    assert verification.passed, verification.failures()


def test_progress_moves_after_every_embedding_call(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    _write(docs / "manual.md", _manual(150), 1_767_225_600)
    embedder = CountingEmbedder()
    kb = create_kb(tmp_path / "kb", embedder)
    seen: list[tuple[int, int]] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "index":
            seen.append((done, total))

    ingest_paths(kb, [docs], progress=progress)
    total = seen[-1][1]
    assert embedder.calls > 1 and len(seen) >= embedder.calls  # not one jump from 0 to done
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert seen[0][0] < total and seen[-1] == (total, total)


def test_a_value_given_instead_of_defaulted_makes_no_new_revision(tmp_path) -> None:
    """Only the provenance changed (the tenant given where it was the default, a field written
    out with its default value): the document is unchanged, not revised."""
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    page = docs / "guide" / "retention.md"
    _write(page, "# Retention\n\nDaily snapshots are kept for thirty days.\n", 1_767_225_600)
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    assert ingest_paths(kb, [docs], tenant="acme").added == ("guide/retention",)  # acme: the default
    assert ingest_paths(kb, [docs]).unchanged == ("guide/retention",)
    assert ingest_paths(kb, [docs], tenant="acme").unchanged == ("guide/retention",)
    front = "---\nstatus: active\nvisibility: public\ntrust: official\n---\n"
    _write(page, front + page.read_text("utf-8"), 1_767_225_600)
    assert ingest_paths(kb, [docs]).unchanged == ("guide/retention",)
    assert [d.revision for d in kb.catalog.documents()] == ["1"]

    _write(page, "---\ntrust: community\n---\n# Retention\n\nDaily snapshots are kept for thirty days.\n",
           1_767_225_600)  # fmt: skip
    assert ingest_paths(kb, [docs]).revised == ("guide/retention",)  # the governance changed
