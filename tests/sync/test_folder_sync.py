"""``veracity sync`` of a folder source, on each backend: only changed files are read, removals
are withdrawn, a folder that vanished withdraws nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from veracity.cli.main import main
from veracity.kb.directory import open_kb


def test_folder_sync_on_each_backend(kb_backend: str, tmp_path: Path, request) -> None:
    location = str(tmp_path / "kb") if kb_backend == "sqlite" else request.getfixturevalue("pg_url")
    handbook = tmp_path / "handbook"
    (handbook / "guide").mkdir(parents=True)
    (handbook / "guide" / "setup.md").write_text("# Setup\n\nInstall the agent first.\n", encoding="utf-8")
    (handbook / "faq.md").write_text("# FAQ\n\nAsk support.\n", encoding="utf-8")
    (handbook / "notes.txt").write_text("Left out by the include glob.\n", encoding="utf-8")
    sources = tmp_path / "veracity.yaml"
    sources.write_text(
        "sources:\n  - name: handbook\n    folder: handbook\n    include: ['**/*.md']\n"
        "    governance: {trust: community}\n",
        encoding="utf-8",
    )
    args = ["sync", "--kb", location, "--sources", str(sources), "--embedder", "fake", "--json", "--work",
            str(tmp_path / "work")]  # fmt: skip
    runner = CliRunner()

    def sync() -> dict:
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.output)["sources"][0]

    first = sync()
    assert (first["files"], first["read"], sorted(first["added"])) == (2, 2, ["faq", "guide/setup"])
    assert sync()["changes"] == 0 and sync()["read"] == 0
    (handbook / "faq.md").write_text("# FAQ\n\nAsk support, or the forum.\n", encoding="utf-8")
    (handbook / "guide" / "setup.md").unlink()
    third = sync()
    assert (third["read"], third["revised"], third["withdrawn"]) == (1, ["faq"], ["guide/setup"])
    kb = open_kb(location)
    try:
        active = {d.source_id: d for d in kb.catalog.documents() if d.status.value == "active"}
        assert set(active) == {"faq"} and active["faq"].trust.value == "community"
    finally:
        kb.catalog.store.close()
    shutil.rmtree(handbook)
    gone = sync()
    assert gone["error"] and "does not exist" in gone["error"] and gone["changes"] == 0
