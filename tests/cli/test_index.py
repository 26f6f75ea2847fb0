"""``veracity reindex / publish / rollback / status`` on a knowledge-base directory."""

from __future__ import annotations

import json

from click.testing import CliRunner

from veracity.cli.main import main


def run(*args: str, ok: bool = True, env: dict[str, str] | None = None):
    result = CliRunner().invoke(main, list(args), env=env)
    assert (result.exit_code == 0) is ok, result.output
    return result


def test_reindex_publish_rollback_and_status(tmp_path, kb_backend, request) -> None:
    kb = str(tmp_path / "kb") if kb_backend == "sqlite" else request.getfixturevalue("pg_url")
    run("init-demo", "--kb", kb, "--embedder", "fake")
    built = run("reindex", "--kb", kb, "--no-progress").output
    assert "built index version 2: 18 documents, 73 chunks" in built
    assert "ok   probes" in built and "published index version 2 (was 1)" in built
    status = run("status", "--kb", kb).output
    assert "index: version 2 (verified, published " in status
    assert "index versions: 1 retired, 2 published" in status

    staged = json.loads(run("reindex", "--kb", kb, "--no-publish", "--json").output)
    assert (staged["version"], staged["published"], staged["verification"]["passed"]) == (3, False, True)
    assert "index versions: 1 retired, 2 published, 3 verified" in run("status", "--kb", kb).output
    assert "published index version 3 (was 2)" in run("publish", "--kb", kb).output
    assert "published index version 2 (was 3)" in run("rollback", "--kb", kb).output
    assert "published index version 1 (was 2)" in run("rollback", "--kb", kb).output  # one more step back
    refused = run("rollback", "--kb", kb, ok=False)
    assert "no earlier index version to roll back to" in refused.output and refused.exit_code == 1
    assert "'veracity publish --version N'" in refused.output
    assert "published index version 3 (was 1)" in run("publish", "--kb", kb, "--version", "3").output
    report = json.loads(run("status", "--kb", kb, "--json").output)
    assert report["index"]["version"] == 3 and report["index"]["verification_passed"] is True
    assert [v["state"] for v in report["versions"]] == ["retired", "rolled-back", "published"]


def test_bad_requests_are_clean_errors(tmp_path) -> None:
    kb = str(tmp_path / "kb")
    run("init-demo", "--kb", kb, "--embedder", "fake")
    assert "no index version 7" in run("publish", "--kb", kb, "--version", "7", ok=False).output
    assert "already the published one" in run("publish", "--kb", kb, "--version", "1", ok=False).output
    assert "Invalid value for '--keep'" in run("reindex", "--kb", kb, "--keep", "0", ok=False).output
    assert "does not exist" in run("reindex", "--kb", str(tmp_path / "nowhere"), ok=False).output
    for command in ("reindex", "publish", "rollback"):
        assert "--kb" in run(command, "--help").output


def test_a_database_url_from_veracity_kb_serves_every_command(tmp_path, pg_url) -> None:
    """``VERACITY_KB=postgresql://…``: ingest, ask, docs, withdraw, reindex and status without --kb."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gateway.md").write_text(
        "---\nid: gw\ntitle: Gateway\nvalid_from: 2026-01-01\n---\n\n# Gateway\n\n"
        "The gateway timeout defaults to 30 seconds; raise it with gateway.timeout.\n",
        "utf-8",
    )
    env = {"VERACITY_KB": pg_url}
    ingested = run("ingest", str(docs), "--tenant", "acme", "--embedder", "fake", "--no-progress", env=env)
    assert "added 1 ·" in ingested.output, ingested.output
    asked = run("ask", "what is the gateway timeout", "--tenant", "acme", "--json", env=env).output
    answer = json.loads(asked)
    assert answer["status"] == "answer" and answer["citations"][0]["source_id"] == "gw"
    assert "gw" in run("docs", "list", "--json", env=env).output
    assert "withdrawn" in run("withdraw", "gw", env=env).output
    assert "published index version 2 (was 1)" in run("reindex", "--no-progress", env=env).output
    report = json.loads(run("status", "--json", env=env).output)
    assert report["index"]["version"] == 2 and report["index"]["documents"] == 1


def test_status_says_when_the_index_is_behind_the_catalog(tmp_path) -> None:
    import apsw

    from veracity.index.sqlite.tables import IndexTables

    kb = tmp_path / "kb"
    run("init-demo", "--kb", str(kb), "--embedder", "fake")
    assert "index behind the catalog" not in run("status", "--kb", str(kb)).output
    (database,) = kb.glob("*.sqlite")
    connection = apsw.Connection(str(database))
    # what an ingest killed between its catalog and its index transactions leaves behind
    connection.execute(f"DELETE FROM {IndexTables(1).documents} WHERE rowid IN (SELECT rowid FROM "
                       f"{IndexTables(1).documents} LIMIT 5)")  # fmt: skip
    connection.close()
    behind = run("status", "--kb", str(kb)).output
    said = "index behind the catalog: it holds 13 of the catalog's 18 documents (an ingest was interrupted)"
    assert said in behind
    report = json.loads(run("status", "--kb", str(kb), "--json").output)["index"]
    assert (report["documents"], report["catalog_documents"]) == (13, 18)
    run("reindex", "--kb", str(kb), "--no-progress")
    assert "index behind the catalog" not in run("status", "--kb", str(kb)).output
