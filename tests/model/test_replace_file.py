"""Whole-file writes (:func:`veracity.model.contracts.replace_file`): the new bytes or the old
file, never half of one, and no staged file left behind."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from veracity.model.contracts import replace_file


def test_the_file_holds_the_new_bytes_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "cache.json"
    target.write_bytes(b"old")
    replace_file(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["cache.json"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_staged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "cache.json"
    target.write_bytes(b"old")
    real = Path.write_bytes

    def half_then_full(self: Path, data: bytes) -> int:
        real(self, data[:1])  # part of it reached the staged file
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        replace_file(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["cache.json"]
