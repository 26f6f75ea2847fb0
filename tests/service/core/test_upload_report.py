"""What an uploader reads of a rejection: file names, never the server's paths, however the
knowledge base was opened (by an absolute path or a relative one)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from veracity.cli.main import main
from veracity.kb.local import open_local
from veracity.service.core.operate import upload_files


@pytest.mark.parametrize("relative", [False, True])
def test_a_rejected_upload_is_named_without_the_upload_folder(tmp_path, monkeypatch, relative) -> None:
    made = CliRunner().invoke(main, ["init-demo", "--kb", str(tmp_path / "kb2"), "--embedder", "fake"])
    assert made.exit_code == 0, made.output
    monkeypatch.chdir(tmp_path)
    with open_local("kb2" if relative else tmp_path / "kb2", create=False) as kb:
        report = upload_files(kb, "starship", [("x.exe", b"MZ")])
    (rejected,) = report["rejected"]
    assert rejected["file"] == "x.exe"
    assert rejected["reason"].startswith("document 'x.exe': unknown format")
    assert "kb2" not in rejected["reason"] and os.sep + "uploads" not in rejected["reason"]
