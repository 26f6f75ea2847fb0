"""Faults of the storage: one clear error each, the documented exit status, nothing half-written.

Portable tests make SQLite itself fail (a page cap gives a real SQLITE_FULL,
``query_only`` a real SQLITE_READONLY) or inject an ``OSError``; where the
machine allows it (root with ``mount``), a small tmpfs gives a really full and
a really read-only file system, and ``setpriv`` a user without permission.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from veracity.catalog import lock as lock_module
from veracity.catalog.faults import storage_error
from veracity.index.embedders import make_embedder
from veracity.kb.directory import MANIFEST_FILE, open_kb
from veracity.kb.local import open_local
from veracity.model.errors import (
    CorruptStorageError,
    DiskFullError,
    NewerFormatError,
    ReadOnlyStorageError,
    StoragePermissionError,
)
from veracity.testing.concurrency import consistency, write_corpus


def _cli(*args: object, user: str | None = None) -> subprocess.CompletedProcess[str]:
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if user else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "veracity.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _one_clean_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr and "savepoint" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def _big_folder(root: Path, files: int = 60, words: int = 600) -> Path:
    root.mkdir(parents=True)
    for i in range(files):
        body = " ".join(f"term{(i * 7919 + j * 104729) % 99991}" for j in range(words))
        (root / f"big{i:03d}.md").write_text(f"# Big {i}\n\n{body}\n", encoding="utf-8")
    return root


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    with open_local(tmp_path / "kb", embedder=make_embedder("fake")) as kb:
        kb.ingest(write_corpus(tmp_path / "docs", 1, 5))
    return tmp_path / "kb"


def test_disk_full_rolls_the_batch_back_and_says_so(kb_dir: Path, tmp_path: Path) -> None:
    folder = _big_folder(tmp_path / "big")
    with open_local(kb_dir, create=False) as kb:
        connection = kb.engine.catalog.store.connection  # type: ignore[attr-defined]
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages + 4}")  # SQLite answers SQLITE_FULL past it
        with pytest.raises(DiskFullError, match=r"is full .*nothing of this change was written") as caught:
            kb.ingest(folder)
        assert "savepoint" not in str(caught.value) and str(kb_dir) in str(caught.value)
        connection.execute("PRAGMA max_page_count = 1073741823")
    state = consistency(kb_dir)
    assert state.consistent and state.documents == 5
    with open_local(kb_dir, create=False) as kb:
        assert len(kb.ingest(folder).added) == 60  # after space is freed, the same ingest completes
    assert consistency(kb_dir).consistent


def test_a_read_only_database_is_named(kb_dir: Path) -> None:
    with open_local(kb_dir, create=False) as kb:
        kb.engine.catalog.store.connection.execute("PRAGMA query_only = ON")  # type: ignore[attr-defined]
        with pytest.raises(ReadOnlyStorageError, match="read-only"):
            kb.ingest(write_corpus(kb_dir.parent / "more", 1, 2))
        assert kb.ask("What is the retention code of folder 0 page 1?").citations  # reading still works


def test_permission_denied_on_the_lock_file_is_named(kb_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: str, *args: object) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(lock_module.os, "open", refuse)
    with open_local(kb_dir, create=False) as kb, pytest.raises(StoragePermissionError, match="permission"):
        kb.ingest(write_corpus(kb_dir.parent / "more", 1, 2))


def test_a_full_disk_when_rewriting_the_manifest_says_the_data_is_in(
    kb_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    more = write_corpus(kb_dir.parent / "more", 2, 2)[1]  # two pages the knowledge base lacks
    with open_local(kb_dir, create=False) as kb:
        monkeypatch.setattr(Path, "write_bytes", full)  # every whole-file write (replace_file)
        with pytest.raises(DiskFullError, match="the knowledge base itself is up to date"):
            kb.ingest(more)
        monkeypatch.undo()
    assert consistency(kb_dir).documents == 7  # the ingest committed; only the derived manifest lags
    assert open_kb(kb_dir) is not None  # and the next open rewrites it


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (errno.ENOSPC, DiskFullError),
        (errno.EROFS, ReadOnlyStorageError),
        (errno.EACCES, StoragePermissionError),
    ],
)
def test_os_errors_map_to_storage_errors(code: int, kind: type) -> None:
    assert isinstance(storage_error(OSError(code, os.strerror(code), "/kb/x"), "/kb"), kind)
    assert storage_error(OSError(errno.ENOENT, "gone"), "/kb") is None


def test_written_by_a_newer_veracity(kb_dir: Path) -> None:
    store_file = kb_dir / "catalog.sqlite"
    import apsw

    connection = apsw.Connection(str(store_file))
    connection.execute("INSERT INTO _migrations (name, applied_at) VALUES ('9999_future', 'x')")
    connection.close()
    with pytest.raises(NewerFormatError, match="newer veracity"):
        open_kb(kb_dir)
    result = _cli("status", "--kb", kb_dir)
    assert result.returncode == 5 and "upgrade veracity" in _one_clean_line(result)


def test_a_manifest_of_a_newer_format(kb_dir: Path) -> None:
    manifest = json.loads((kb_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["format_version"] = 99
    (kb_dir / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    result = _cli("docs", "list", "--kb", kb_dir)
    assert result.returncode == 5 and "v99" in _one_clean_line(result)


def test_a_damaged_file_is_found_by_check(kb_dir: Path) -> None:
    sound = _cli("status", "--kb", kb_dir, "--check")
    assert sound.returncode == 0 and sound.stdout.startswith("integrity check: ok\n")
    data = bytearray((kb_dir / "catalog.sqlite").read_bytes())
    data[4096 * 2 : 4096 * 5] = os.urandom(4096 * 3)
    (kb_dir / "catalog.sqlite").write_bytes(bytes(data))
    result = _cli("status", "--kb", kb_dir, "--check")
    assert result.returncode == 5 and "damaged" in _one_clean_line(result)
    with pytest.raises(CorruptStorageError):
        open_kb(kb_dir, check=True)


@pytest.fixture
def small_mount(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs (skipped where this process may not mount one)."""
    point = tmp_path / "mnt"
    point.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(point)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_cli_on_a_full_then_read_only_file_system(small_mount: Path, tmp_path: Path) -> None:
    kb = small_mount / "kb"
    first = _cli("ingest", write_corpus(tmp_path / "docs", 1, 5)[0], "--kb", kb, "--embedder", "fake",
                 "--no-progress")  # fmt: skip
    assert first.returncode == 0, first.stderr
    full = _cli("ingest", _big_folder(tmp_path / "big", files=100), "--kb", kb, "--no-progress")
    assert full.returncode == 4 and "is full" in _one_clean_line(full)
    state = consistency(kb)
    assert state.consistent and state.documents == 5
    subprocess.run(["mount", "-o", "remount,ro", str(small_mount)], check=True)
    refused = _cli("withdraw", "f0-page0001", "--kb", kb)
    assert refused.returncode == 4 and "read-only" in _one_clean_line(refused)
    asked = _cli("ask", "What is the retention code of folder 0 page 1?", "--kb", kb)
    assert asked.returncode == 0 and "R0x1" in asked.stdout


def test_cli_as_a_user_without_permission(kb_dir: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("running as another user needs root and setpriv")
    shared = Path(tempfile.mkdtemp(prefix="veracity-perm-"))  # pytest's own folders are private to root
    try:
        os.chmod(shared, 0o755)
        shutil.copytree(kb_dir, shared / "kb")
        result = _cli("withdraw", "f0-page0001", "--kb", shared / "kb", user="nobody")
    finally:
        shutil.rmtree(shared)
    if "No module named" in result.stderr or "Permission denied: '/" in result.stderr:
        pytest.skip("the other user cannot read this Python environment")
    assert result.returncode == 4 and "permission denied" in _one_clean_line(result)
