"""The MCP server, driven by the SDK's own client over stdio (a real `veracity mcp` process):
tools and resources work, the principal comes from the key alone, a hidden page never shows."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("mcp", reason="pip install 'veracity[mcp]'")

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.integrations.conftest import leaks, served


def _server(key: str) -> StdioServerParameters:
    folder, _ = served()
    args = ["-m", "veracity.cli.main", "mcp", "--kb", str(folder), "--key", key, "--embedder", "fake"]
    return StdioServerParameters(command=sys.executable, args=args)


def _text(result) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


async def test_tools_and_resources_over_stdio() -> None:
    _, keys = served()
    async with stdio_client(_server(keys.public)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"ask", "search"}
        for tool in tools.values():  # nothing a caller could use to widen its principal
            assert not {"tenant", "roles", "role"} & set(tool.input_schema.get("properties", {}))
        answer = json.loads(_text(await session.call_tool("ask", {"question": "3.2 的 Team 能用 SAML 吗"})))
        assert answer["status"] == "answer" and answer["citations"]
        cited = answer["citations"][0]
        uri = f"veracity://documents/{cited['document_id']}/chunks/{cited['chunk_id']}"
        resource = await session.read_resource(uri)
        assert "SAML" in resource.contents[0].text
        found = json.loads(_text(await session.call_tool("search", {"query": "SAML", "limit": 2})))
        assert 1 <= len(found["hits"]) <= 2


async def test_a_public_key_never_sees_the_staff_page() -> None:
    _, keys = served()
    async with (
        stdio_client(_server(keys.acme_public)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        asked = _text(await session.call_tool("ask", {"question": "When are salaries paid?"}))
        searched = json.loads(
            _text(await session.call_tool("search", {"query": "payroll codeword", "limit": 10}))
        )
        assert not leaks(asked + json.dumps(searched["hits"], ensure_ascii=False))  # the query echo aside
    async with stdio_client(_server(keys.acme_staff)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        searched = _text(await session.call_tool("search", {"query": "payroll codeword", "limit": 10}))
        assert "ZEBRA-42" in searched  # the same question finds it with a staff key


def test_a_bad_key_is_refused_before_serving(tmp_path) -> None:
    import subprocess

    folder, _ = served()
    result = subprocess.run(
        [sys.executable, "-m", "veracity.cli.main", "mcp", "--kb", str(folder), "--key", "vk_nope_nope"],
        capture_output=True, text=True, timeout=60, input="",
    )  # fmt: skip
    assert result.returncode != 0 and "key" in result.stderr.lower()


async def test_a_refused_call_says_why_as_the_http_api_does() -> None:
    from mcp.shared.exceptions import MCPError

    _, keys = served()
    async with stdio_client(_server(keys.public)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        empty = await session.call_tool("ask", {"question": "  "})
        assert empty.is_error and "ValidationError (422)" in _text(empty) and "empty" in _text(empty)
        version = await session.call_tool("ask", {"question": "SSO?", "version": "abc"})
        assert version.is_error and "(422)" in _text(version) and "'abc'" in _text(version)
        nothing = await session.call_tool("search", {"query": ""})
        assert nothing.is_error and "(422)" in _text(nothing)
        for limit in (0, -5, 100_000):  # refused as over HTTP, not clamped in silence
            refused = await session.call_tool("search", {"query": "SAML", "limit": limit})
            assert refused.is_error and "(422)" in _text(refused) and "from 1 to 100" in _text(refused)
        with pytest.raises(MCPError, match=r"NotFoundError \(404\)"):
            await session.read_resource("veracity://documents/nope/chunks/nope")
