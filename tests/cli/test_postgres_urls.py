"""Every command that takes a knowledge base takes a ``postgresql://`` URL: its ``--help``
and one real call against a database.

The commands are found by walking the ``veracity`` group: any option named
``--kb`` and any parameter of the knowledge-base type (``kb copy``'s SOURCE and
DESTINATION). A new command fails :func:`test_every_command_taking_a_kb_has_a_call`
until it gets a call in ``CALLS`` (or a test of its own in ``OWN_TESTS``).

Most calls run through click's runner on one demo database (``init-demo`` into
an empty one, once for the module). Each call sets up what it needs itself
(``publish`` builds an unpublished version first, ``rollback`` a newer
published one), so any one of them can run alone. The two commands that block:

- ``serve`` runs with uvicorn's loop replaced by a recorder, so the command
  opens and checks the database and builds the application it would serve;
  the test then asks that application ``/readyz`` and ``/v1/search`` with a key.
- ``mcp`` runs as a real process on the URL, driven over stdio by the MCP SDK's
  own client, which calls its ``search`` tool.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from veracity.cli.common import KnowledgeBaseLocation
from veracity.cli.main import main


def _commands_taking_a_kb(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    """``(name, command)`` of every command and subcommand with a knowledge-base parameter."""
    for name, command in sorted(group.commands.items()):
        full = f"{prefix}{name}"
        if isinstance(command, click.Group):
            yield from _commands_taking_a_kb(command, f"{full} ")
            continue
        takes_kb = any(
            isinstance(param.type, KnowledgeBaseLocation) or "--kb" in getattr(param, "opts", ())
            for param in command.params
        )
        if takes_kb:
            yield full, command


COMMANDS = dict(_commands_taking_a_kb(main))


@dataclass(frozen=True)
class Call:
    """One real call: ``args`` after the command's name, and a text its output must hold.

    ``before``: commands run first (each must succeed), so the call has what it
    acts on; ``exits``: the exit statuses that count as done. In any argument
    ``{kb}`` is the demo database's URL, ``{empty}`` a fresh empty database's,
    ``{tmp}`` a fresh directory.
    """

    args: tuple[str, ...]
    expect: str
    before: tuple[tuple[str, ...], ...] = ()
    exits: tuple[int, ...] = (0,)


CALLS: dict[str, Call] = {
    "ask": Call(("SSO 在 Team 计划可用吗", "--kb", "{kb}", "--json"), '"status"'),
    "search": Call(("SSO 在 Team 计划可用吗", "--kb", "{kb}", "--json"), '"rerank"'),
    "chunk": Call(("admin-invites-3.2", "--kb", "{kb}", "--tenant", "starship"), "── #0 paragraph"),
    "composer": Call(  # stores a model, then forgets it (the other calls answer without one)
        ("--kb", "{kb}", "--composer", "extractive"),
        "composer: extractive",
        before=(("composer", "--kb", "{kb}", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"),),
    ),
    "delete": Call(("plans-2.8", "--kb", "{kb}"), "deleted"),
    "docs list": Call(("--kb", "{kb}", "--json"), "admin-invites-3.2"),
    "docs show": Call(("admin-invites-3.2", "--kb", "{kb}", "--tenant", "starship"), "邀请成员与管理席位"),
    "eval": Call(  # exit 1 when a case fails: the other calls withdraw, retire and delete demo pages
        ("--kb", "{kb}", "--out", "{tmp}", "--embedder", "fake"),
        "20 cases · conformance passed",
        exits=(0, 1),
    ),
    "ingest": Call(("{tmp}", "--kb", "{kb}", "--tenant", "acme", "--no-progress"), "added 1"),
    "init-demo": Call(("--kb", "{empty}", "--embedder", "fake"), "18 documents"),
    "kb copy": Call(("{kb}", "{empty}"), "copied"),
    "keys create": Call(("--kb", "{kb}", "--tenant", "starship", "--roles", "public"), "vk_"),
    "keys list": Call(("--kb", "{kb}", "--json"), "["),
    "keys revoke": Call(
        ("revoked-by-test", "--kb", "{kb}"),
        "revoked",
        before=(("keys", "create", "--kb", "{kb}", "--tenant", "starship", "--roles", "public", "--name",
                 "revoked-by-test"),),
    ),
    "settings": Call(("--kb", "{kb}", "--set", "retrieval.top_k=7"), "retrieval.top_k = 7 (default 6)"),
    "publish": Call(
        ("--kb", "{kb}"),
        "published index version",
        before=(("reindex", "--kb", "{kb}", "--no-publish", "--no-progress"),),
    ),
    "reindex": Call(("--kb", "{kb}", "--no-progress"), "published index version"),
    "retire": Call(("faq-2.8-sso", "--kb", "{kb}"), "retired"),
    "rollback": Call(
        ("--kb", "{kb}"), "published index version", before=(("reindex", "--kb", "{kb}", "--no-progress"),)
    ),
    "status": Call(("--kb", "{kb}", "--json"), '"index"'),
    "feedback list": Call(("--kb", "{kb}", "--rating", "all"), "no feedback"),
    "feedback export": Call(("--kb", "{kb}", "--out", "{tmp}/feedback.jsonl"), "0 cases"),
    "sync": Call(  # the sources file names the folder ingest reads ({tmp})
        ("--kb", "{kb}", "--sources", "{tmp}/veracity.yaml", "--work", "{tmp}/sync", "--no-progress"),
        "notes (folder): 1 files · read 1",
    ),
    "withdraw": Call(("community-qa-injection", "--kb", "{kb}"), "withdrawn"),
}
OWN_TESTS = {"serve": "test_serve_answers_from_a_database", "mcp": "test_mcp_answers_from_a_database"}


def run(*args: str, exits: tuple[int, ...] | None = (0,)) -> Result:
    """``veracity ARGS`` through click's runner, its exit status one of ``exits`` (any when ``None``)."""
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if exits is not None:
        assert result.exit_code in exits, f"veracity {' '.join(args)}\n{result.output}"
    return result


@pytest.fixture(scope="module")
def demo_url(pg_server) -> Iterator[str]:
    """The demo, written by ``init-demo`` into a database of its own for this module."""
    import psycopg

    name = f"t_cli_urls_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = pg_server.url(name)
    run("init-demo", "--kb", url, "--embedder", "fake")
    yield url
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_every_command_taking_a_kb_has_a_call() -> None:
    assert {"mcp", "serve", "ask", "kb copy", "keys list"} <= set(COMMANDS)  # the walk finds them
    assert set(COMMANDS) == set(CALLS) | set(OWN_TESTS), "give each new command a call here"
    assert all(name in globals() for name in OWN_TESTS.values())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help(name: str) -> None:
    assert "Usage:" in run(*name.split(), "--help").output


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_call_on_a_database_url(name: str, demo_url: str, request, tmp_path) -> None:
    call = CALLS[name]
    empty = request.getfixturevalue("pg_url") if any("{empty}" in a for a in call.args) else ""
    (tmp_path / "gateway.md").write_text(  # what ingest reads ({tmp})
        "---\nid: gw\ntitle: Gateway\nvalid_from: 2026-01-01\n---\n\n# Gateway\n\n"
        "The gateway timeout defaults to 30 seconds.\n",
        "utf-8",
    )
    (tmp_path / "veracity.yaml").write_text(
        "sources:\n  - {name: notes, folder: ., tenant: acme, include: ['*.md']}\n", "utf-8"
    )

    def filled(args: tuple[str, ...]) -> list[str]:
        return [a.format(kb=demo_url, empty=empty, tmp=str(tmp_path)) for a in args]

    for before in call.before:
        run(*filled(before))
    result = run(*name.split(), *filled(call.args), exits=call.exits)
    assert call.expect in result.output, result.output


def _key(url: str) -> str:
    return run("keys", "create", "--kb", url, "--tenant", "starship", "--roles", "public").stdout.strip()


def test_serve_answers_from_a_database(demo_url: str, monkeypatch) -> None:
    from fastapi.testclient import TestClient

    import veracity.service.server as server

    served: list[object] = []
    monkeypatch.setattr(server.uvicorn, "run", lambda app, **_: served.append(app))
    run("serve", "--kb", demo_url, "--port", "0")
    (app,) = served
    key = _key(demo_url)
    try:
        with TestClient(app) as client:  # type: ignore[arg-type]
            assert client.get("/readyz").status_code == 200
            bearer = {"Authorization": f"Bearer {key}"}
            found = client.post("/v1/search", json={"query": "SSO"}, headers=bearer)
            assert found.status_code == 200 and found.json()["hits"], found.text
    finally:
        app.state.gateway.close()  # type: ignore[attr-defined]


async def test_mcp_answers_from_a_database(demo_url: str) -> None:
    pytest.importorskip("mcp", reason="pip install 'veracity[mcp]'")
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    key = _key(demo_url)
    args = ["-m", "veracity.cli.main", "mcp", "--kb", demo_url, "--key", key, "--embedder", "fake"]
    server = StdioServerParameters(command=sys.executable, args=args)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("search", {"query": "SSO", "limit": 2})
        found = json.loads("".join(getattr(part, "text", "") for part in result.content))
        assert 1 <= len(found["hits"]) <= 2, found


def test_a_directory_that_is_not_there_is_still_refused(tmp_path: Path) -> None:
    refused = run("mcp", "--kb", str(tmp_path / "nowhere"), "--key", "vk_x", exits=None)
    assert refused.exit_code == 2 and "does not exist" in refused.output
