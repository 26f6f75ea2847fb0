"""Many processes on one knowledge base: the workloads the concurrency tests and benchmark share.

- :func:`write_corpus`: folders of small Markdown files, each saying which
  folder and file it is, so an answer shows where it came from;
- :func:`run_ingests`: ``veracity ingest`` processes started together, each on
  its own list of folders (overlapping lists make them race for the same files);
- :func:`consistency`: what the catalog file holds, read with SQL, and whether
  catalog and every kept index version agree (documents, chunks, statuses);
- :func:`hold_writer_script`: a process that takes the writer lock and SQLite's
  write lock, withdraws a document without committing, waits, then commits.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..catalog.state import chunk_count, document_statuses, source_count
from ..index.sqlite.tables import indexed_counts, indexed_statuses
from ..index.sqlite.versions import live_versions
from ..kb.backends import open_store

__all__ = [
    "Consistency",
    "IngestRun",
    "consistency",
    "hold_writer_script",
    "run_ingests",
    "write_corpus",
]


def write_corpus(root: Path, folders: int, files: int) -> list[Path]:
    """``folders`` folders of ``files`` Markdown files each under ``root``; their paths."""
    made = []
    for f in range(folders):
        folder = root / f"folder{f}"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(files):
            (folder / f"f{f}-page{i:04d}.md").write_text(
                f"# Folder {f} page {i}\n\nThe retention code of folder {f} page {i} is R{f}x{i}. "
                f"Pages of folder {f} are about topic{f} and subject{i % 7}.\n",
                encoding="utf-8",
            )
        made.append(folder)
    return made


@dataclass(frozen=True, slots=True)
class IngestRun:
    """One ``veracity ingest`` process: its folders, exit status, output and wall time."""

    folders: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def traceback(self) -> bool:
        """Whether the process printed a Python traceback."""
        return "Traceback (most recent call last)" in self.stderr


def run_ingests(
    kb: Path | str, plan: Sequence[Sequence[Path]], *, embedder: str = "fake", timeout: float = 600
) -> list[IngestRun]:
    """Start one ``veracity ingest FOLDERS --kb kb`` per entry of ``plan`` at once; wait for all."""
    started: list[tuple[tuple[str, ...], subprocess.Popen[str], float]] = []
    for folders in plan:
        command = [
            sys.executable, "-m", "veracity.cli.main", "ingest", *map(str, folders), "--kb", str(kb),
            "--embedder", embedder, "--no-progress",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append((tuple(map(str, folders)), process, time.perf_counter()))
    runs = []
    for names, process, start in started:
        out, err = process.communicate(timeout=timeout)
        runs.append(IngestRun(names, process.returncode, out, err, time.perf_counter() - start))
    return runs


@dataclass(frozen=True, slots=True)
class Consistency:
    """Counts read from the catalog file, and every disagreement between catalog and index versions."""

    documents: int
    sources: int
    chunks: int
    by_status: tuple[tuple[str, int], ...]
    index_documents: tuple[tuple[int, int], ...]
    problems: tuple[str, ...]

    @property
    def consistent(self) -> bool:
        """True when the catalog and every kept index version hold the same documents and chunks."""
        return not self.problems


def consistency(kb: Path | str) -> Consistency:
    """Compare the catalog with every kept index version of the knowledge base in ``kb`` (a folder or URL)."""
    store = open_store(kb)
    try:
        with store.read():
            connection = store.connection
            catalog = document_statuses(connection)
            sources = source_count(connection)
            chunks = chunk_count(connection)
            problems: list[str] = []
            counted: list[tuple[int, int]] = []
            for tables in live_versions(connection):
                indexed = indexed_statuses(connection, tables)
                counted.append((tables.version, len(indexed)))
                if set(indexed) != set(catalog):
                    problems.append(
                        f"version {tables.version}: {len(set(catalog) - set(indexed))} catalog documents "
                        f"missing, {len(set(indexed) - set(catalog))} extra"
                    )
                stale = sum(indexed[d] != catalog[d] for d in set(indexed) & set(catalog))
                if stale:
                    problems.append(f"version {tables.version}: {stale} documents with another status")
                _, in_index = indexed_counts(connection, tables)
                if in_index != chunks:
                    problems.append(f"version {tables.version}: {in_index} chunks, catalog {chunks}")
    finally:
        store.close()
    statuses: dict[str, int] = {}
    for status in catalog.values():
        statuses[status] = statuses.get(status, 0) + 1
    return Consistency(
        documents=len(catalog),
        sources=sources,
        chunks=chunks,
        by_status=tuple(sorted(statuses.items())),
        index_documents=tuple(counted),
        problems=tuple(problems),
    )


def hold_writer_script(
    kb: Path | str, source_id: str, seconds: float, *, embedder: str = "fake"
) -> list[str]:
    """A command line: hold ``kb``'s writer lock and an uncommitted withdraw of ``source_id``.

    It prints ``held`` once the withdraw is written (not committed), keeps the
    locks for ``seconds``, commits, then prints ``committed BEFORE AFTER``
    (``time.time()`` just before the commit and just after it: the commit lies
    between them; the process itself may live on a while after).
    """
    script = f"""
import sys, time
from veracity.kb.directory import open_kb
from veracity.index.embedders import make_embedder
kb = open_kb({str(kb)!r}, make_embedder({embedder!r}))
store = kb.catalog.store
with store.writer("test-hold"):
    with store.transaction():
        document = kb.catalog.document({source_id!r})
        kb.catalog.withdraw(document.document_id)
        kb.snapshot.sync(kb.catalog, kb.embedder)
        print("held", flush=True)
        time.sleep({float(seconds)!r})
        before = time.time()
    print("committed", before, time.time(), flush=True)
"""
    return [sys.executable, "-c", script]
