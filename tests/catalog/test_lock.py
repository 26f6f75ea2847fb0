"""The writer lock: one writer per knowledge base, re-entrant, waited for, released by a dying process."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from veracity.catalog.lock import WriterInfo, current_writer, hold_writer, lock_path
from veracity.catalog.sqlite import SQLiteStore
from veracity.model.errors import WriterBusyError

HOLD = """
import sys
from veracity.catalog.lock import hold_writer
with hold_writer(sys.argv[1], "ingest"):
    print("held", flush=True)
    sys.stdin.readline()  # held until the test closes the pipe (a fixed time races a busy machine)
"""


def _holder(path: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def _release(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.close()


def test_lock_path_of_files_and_memory() -> None:
    assert lock_path("/kb/catalog.sqlite") == "/kb/catalog.sqlite.lock"
    assert lock_path(":memory:") is None


def test_reentrant_in_one_thread_and_names_its_holder(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite.lock"
    with hold_writer(str(path), "ingest"), hold_writer(str(path), "inner"):
        holder = current_writer(str(path))
    assert holder is not None and holder.command == "ingest" and "pid" in holder.describe()
    assert current_writer(str(path)) is None


def test_another_process_waits_or_refuses_with_who_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite.lock"
    process = _holder(path)
    releaser = threading.Timer(0.6, _release, (process,))
    try:
        with pytest.raises(WriterBusyError, match=r"pid \d+, ingest, since"):
            with hold_writer(str(path), "withdraw", wait=False):
                pass
        told: list[WriterInfo | None] = []
        start = time.monotonic()
        releaser.start()
        with hold_writer(str(path), "withdraw", wait=True, on_wait=told.append):
            waited = time.monotonic() - start
        assert waited > 0.3 and len(told) == 1 and told[0] is not None and told[0].command == "ingest"
    finally:
        releaser.cancel()
        _release(process)
        process.wait(timeout=30)


def test_waiting_has_a_limit(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite.lock"
    process = _holder(path)
    try:
        start = time.monotonic()
        with pytest.raises(WriterBusyError, match=r"another writer"):
            with hold_writer(str(path), "delete", wait=0.4):
                pass
        assert 0.3 < time.monotonic() - start < 2.5
    finally:
        process.kill()
        process.wait(timeout=30)


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite.lock"
    process = _holder(path)
    process.kill()  # SIGKILL: no cleanup runs, the kernel drops the lock
    process.wait(timeout=30)
    with hold_writer(str(path), "ingest", wait=2):
        pass


def test_other_threads_of_the_process_wait_their_turn(tmp_path: Path) -> None:
    path = str(tmp_path / "catalog.sqlite.lock")
    order: list[str] = []
    inside = threading.Event()

    def second() -> None:
        inside.wait()
        with hold_writer(path, "second"):
            order.append("second")

    thread = threading.Thread(target=second)
    thread.start()
    with hold_writer(path, "first"):
        inside.set()
        time.sleep(0.3)
        order.append("first")
    thread.join(timeout=10)
    assert order == ["first", "second"]


def test_store_writes_wait_for_the_writer_and_reads_do_not(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "catalog.sqlite", writer_wait=False)
    process = _holder(tmp_path / "catalog.sqlite.lock")
    try:
        with store.read():
            assert store.find_documents() == []
        with pytest.raises(WriterBusyError):
            store.put_roles("acme", {"public"})
        assert store.roles("acme") == frozenset()
    finally:
        _release(process)
        process.wait(timeout=30)
    store.put_roles("acme", {"public"})
    assert store.roles("acme") == {"public"}
    store.close()
