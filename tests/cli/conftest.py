"""Shared by the command tests: a small knowledge base of tenant acme ingested from given files."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.cli.main import main

AcmeKb = Callable[[Path, Mapping[str, str]], Path]


@pytest.fixture(scope="module")
def acme_kb() -> AcmeKb:
    """``make(root, files)``: ``files`` (name → text) written under ``root/docs`` and ingested for
    tenant acme with roles public and support on the fake embedder; returns the knowledge base."""

    def make(root: Path, files: Mapping[str, str]) -> Path:
        docs = root / "docs"
        docs.mkdir()
        for name, text in files.items():
            (docs / name).write_text(text, "utf-8")
        result = CliRunner().invoke(main, [
            "ingest", str(docs), "--kb", str(root / "kb"), "--tenant", "acme", "--roles", "public,support",
            "--embedder", "fake", "--no-progress",
        ])  # fmt: skip
        assert result.exit_code == 0, result.output
        return root / "kb"

    return make
