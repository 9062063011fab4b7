"""``kairox serve --search`` from the SDK's own client, over Streamable HTTP and over stdio: three tools listed,
search finds the served tools (never a denied or hidden one), add/remove change this session's list and say so,
and a found tool is called through the gate."""

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from tests.gateway.conftest import SERVERS, Served, kairox_env, start_gateway, trust

from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

META = ["kairox_search_tools", "kairox_add_tools", "kairox_remove_tools"]


def write_workspace(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "kairox.toml").write_text(
        f"""
[mcp_servers.basic]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(SERVERS / "basic_server.py"))}, "--name", "basic"]

[policy.rules]
allow = ["mcp__basic__*"]
deny = ["mcp__basic__add"]
"""
    )
    return root


@pytest.fixture(scope="module")
def searching(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("search-home")
    workspace = write_workspace(tmp_path_factory.mktemp("search-ws") / "ws")
    trust(workspace, home)
    served = start_gateway(workspace, home, "--search", "--hide", "mcp__basic__slow")
    try:
        yield served
    finally:
        served.stop()


class Changes:
    """Counts the tools/list_changed notifications a client heard."""

    def __init__(self) -> None:
        self.count = 0
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self.event.set()

    async def settle(self) -> None:
        """Until a second passes without a notice (an upstream registering at start sends one), then count anew."""
        while True:
            self.event = anyio.Event()
            with anyio.move_on_after(1):
                await self.event.wait()
            if not self.event.is_set():
                break
        self.count = 0

    async def wait(self) -> None:
        with anyio.fail_after(30):
            await self.event.wait()
        self.event = anyio.Event()


@contextlib.asynccontextmanager
async def over_http(served: Served, changes: Changes) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=300)) as http,
        Client(streamable_http_client(served.url, http_client=http), mode="legacy", message_handler=changes) as client,
    ):
        yield client


def payload(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    data = json.loads(block.text)
    assert data == result.structured_content
    return data  # type: ignore[no-any-return]


def found(result: types.CallToolResult) -> list[str]:
    return [tool["name"] for tool in payload(result)["tools"]]


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def search_add_call_remove(client: Client, changes: Changes) -> dict[str, Any]:
    """The whole round: what was listed and found at each step."""
    seen: dict[str, Any] = {"listed": [t.name for t in (await client.list_tools()).tools]}
    await changes.settle()
    echo = payload(await client.call_tool("kairox_search_tools", {"query": "return my message unchanged"}))
    seen["echo_top"] = echo["tools"][0]
    seen["denied"] = found(await client.call_tool("kairox_search_tools", {"query": "add two integers", "limit": 20}))
    seen["hidden"] = found(
        await client.call_tool("kairox_search_tools", {"query": "report progress steps delay", "limit": 20})
    )
    added = payload(await client.call_tool("kairox_add_tools", {"names": ["mcp__basic__echo"]}))
    await changes.wait()
    seen["added"] = added
    seen["listed_after_add"] = {t.name: t for t in (await client.list_tools()).tools}
    seen["call"] = await client.call_tool("mcp__basic__echo", {"message": "found and called"})
    seen["refused_add"] = await client.call_tool("kairox_add_tools", {"names": ["mcp__basic__add"]})
    removed = payload(await client.call_tool("kairox_remove_tools", {"names": ["mcp__basic__echo"]}))
    await changes.wait()
    seen["removed"] = removed
    seen["listed_after_remove"] = [t.name for t in (await client.list_tools()).tools]
    with pytest.raises(MCPError) as hidden:
        await client.call_tool("mcp__basic__slow", {"steps": 1, "delay": 0})
    seen["hidden_call"] = str(hidden.value)
    return seen


def check_round(seen: dict[str, Any], changes: Changes) -> None:
    assert seen["listed"] == META
    top = seen["echo_top"]
    assert (top["name"], top["input_schema"]["required"]) == ("mcp__basic__echo", ["message"])
    assert "unchanged (description)" in top["matched"]
    assert seen["denied"] and "mcp__basic__add" not in seen["denied"]  # denied by name: never found
    assert "mcp__basic__slow" not in seen["hidden"]  # --hide: never found (the CLI, not hiding it, finds it)
    assert seen["added"] == {"listed": ["mcp__basic__echo"], "changed": True}
    listed = seen["listed_after_add"]
    assert list(listed) == [*META, "mcp__basic__echo"]
    assert listed["mcp__basic__echo"].input_schema["properties"]["message"]["type"] == "string"
    call = seen["call"]
    assert (text(call), call.is_error) == ("found and called", False)
    refused = seen["refused_add"]
    assert refused.is_error and "no tool named 'mcp__basic__add' is served here" in text(refused)
    assert seen["removed"] == {"listed": [], "changed": True}
    assert seen["listed_after_remove"] == META
    assert (
        seen["hidden_call"]
        == "no tool named 'mcp__basic__slow' is served here; kairox_search_tools finds the served tools"
    )
    assert changes.count == 2


async def test_search_add_call_and_remove_over_streamable_http(searching: Served) -> None:
    changes = Changes()
    async with over_http(searching, changes) as client:
        seen = await search_add_call_remove(client, changes)
    check_round(seen, changes)
    records = [(r["tool"], r["decision"], r["rule"], r["outcome"]) for r in searching.audit_records()]
    assert ("mcp__basic__echo", "allow", "mcp__basic__*", "ok") in records  # the found tool went through the gate
    assert ("kairox_add_tools", "allow", None, "ok") in records
    assert "kairox serve: serving MCP on" in "".join(searching.stderr)
    assert any("tools behind kairox_search_tools" in line for line in searching.stderr)
    # the same query without --hide finds the hidden tool first: the gateway's search left it out
    unhidden = subprocess.run(
        [sys.executable, "-m", "kairox", "tools", "search", "report progress steps delay", "--json"],
        cwd=searching.workspace,
        env=kairox_env(searching.home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(unhidden.stdout)["matches"][0]["name"] == "mcp__basic__slow", unhidden.stderr


async def test_what_one_session_added_is_not_listed_for_another(searching: Served) -> None:
    first, second = Changes(), Changes()
    async with over_http(searching, first) as one, over_http(searching, second) as other:
        await one.call_tool("kairox_add_tools", {"names": ["mcp__basic__echo"]})
        await first.wait()
        mine = [t.name for t in (await one.list_tools()).tools]
        theirs = [t.name for t in (await other.list_tools()).tools]
    assert (mine, theirs) == ([*META, "mcp__basic__echo"], META)


async def test_bad_arguments_to_the_search_tools_are_errors_the_client_can_read(searching: Served) -> None:
    async with over_http(searching, Changes()) as client:
        empty = await client.call_tool("kairox_search_tools", {"query": "  "})
        no_names = await client.call_tool("kairox_add_tools", {"names": []})
    assert empty.is_error and "needs a `query`" in text(empty)
    assert no_names.is_error and "needs `names`" in text(no_names)


def test_search_add_call_and_remove_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = write_workspace(tmp_path / "ws")
    trust(workspace, home)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kairox", "--workspace", str(workspace), "serve", "--search", "--hide", "mcp__basic__slow"],
        env=kairox_env(home),
        cwd=str(workspace),
    )
    changes = Changes()

    async def main() -> dict[str, Any]:
        async with Client(params, mode="legacy", message_handler=changes) as client:
            return await search_add_call_remove(client, changes)

    seen = anyio.run(main)
    check_round(seen, changes)
