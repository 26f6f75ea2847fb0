"""Many processes, one knowledge base: writers take turns, readers never wait and see one snapshot.

Small sizes here; ``benchmarks/bench_concurrency.py`` runs the full ones
(20 repetitions, 30 s of held lock, 200 asks) and prints the numbers.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from veracity.index.embedders import make_embedder
from veracity.kb.directory import open_kb
from veracity.kb.local import open_local
from veracity.kb.status import folder_status
from veracity.testing.concurrency import consistency, hold_writer_script, run_ingests, write_corpus

FILES = 12


def _location(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Path | str:
    return tmp_path / "kb" if backend == "sqlite" else str(request.getfixturevalue("pg_url"))


@pytest.mark.parametrize("writers", [2, 4])
def test_concurrent_ingests_of_overlapping_folders_land_every_file_once(
    tmp_path: Path, writers: int, kb_backend: str, request: pytest.FixtureRequest
) -> None:
    folders = write_corpus(tmp_path / "docs", writers, FILES)
    plan = [[folders[i], folders[(i + 1) % writers]] for i in range(writers)]  # each folder twice
    location = _location(tmp_path, kb_backend, request)
    runs = run_ingests(location, plan)
    assert [run.returncode for run in runs] == [0] * writers, [run.stderr for run in runs]
    assert not any(run.traceback for run in runs)
    state = consistency(location)
    assert state.consistent, state.problems
    assert (state.documents, state.sources, state.chunks) == (writers * FILES,) * 3
    assert state.by_status == (("active", writers * FILES),)
    assert all(count == writers * FILES for _, count in state.index_documents)
    added = sum(int(run.stdout.split("added ")[1].split()[0]) for run in runs)
    assert added == writers * FILES  # each file added by exactly one of the writers


@pytest.fixture
def small_kb(tmp_path: Path, kb_backend: str, request: pytest.FixtureRequest) -> Path | str:
    folders = write_corpus(tmp_path / "docs", 2, 8)
    location = _location(tmp_path, kb_backend, request)
    with open_local(location, embedder=make_embedder("fake")) as kb:
        kb.ingest(folders)
    return location


def _cited_sources(answer: object) -> set[str]:
    return {citation.document_id for citation in answer.citations}  # type: ignore[attr-defined]


def test_asks_during_a_held_write_read_one_snapshot_and_never_wait(small_kb: Path | str) -> None:
    question = "What is the retention code of folder 1 page 3?"
    with open_local(small_kb, embedder=make_embedder("fake"), create=False) as kb:
        target = kb.engine.catalog.document("f1-page0003")
        before = kb.ask(question)
        assert target.document_id in _cited_sources(before)
        holder = subprocess.Popen(
            hold_writer_script(small_kb, "f1-page0003", 2.5), stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        seconds: list[float] = []
        asked: list[tuple[float, bool]] = []  # (when the ask ended, whether it cited the target)
        while holder.poll() is None and len(seconds) < 40:
            start = time.perf_counter()
            answer = kb.ask(question)
            seconds.append(time.perf_counter() - start)
            # catalog and index read from one snapshot: the return gate never disagrees with recall
            assert (answer.trace.gate_rejections, answer.trace.gate_hidden) == ((), 0)
            asked.append((time.time(), target.document_id in _cited_sources(answer)))
        before_commit, committed = map(float, holder.stdout.read().split()[-2:])
        holder.wait(timeout=30)
        # every ask that ended before the commit read the state before it (the process may
        # live on after its commit: asks meanwhile may already see the withdraw)
        held = [cited for ended, cited in asked if ended < before_commit]
        assert len(held) >= 3 and all(held)
        assert max(seconds) < 2.0
        after = kb.ask(question)
        assert time.time() > committed and target.document_id not in _cited_sources(after)
        assert (after.trace.gate_rejections, after.trace.gate_hidden) == ((), 0)


def test_opening_while_a_writer_holds_the_write_lock_does_not_wait(small_kb: Path | str) -> None:
    holder = subprocess.Popen(
        hold_writer_script(small_kb, "f0-page0001", 6), stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        start = time.perf_counter()
        kb = open_kb(small_kb, make_embedder("fake"))
        kb.catalog.store.close()  # type: ignore[attr-defined]
        assert time.perf_counter() - start < 2.0
        assert "test-hold, since" in (folder_status(small_kb)["writer"] or "")
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert consistency(small_kb).consistent
    assert folder_status(small_kb)["writer"] is None
