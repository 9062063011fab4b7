"""A server that dies: the call in flight fails as a tool error, then Failed, restart, Ready again (M7)."""

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.events import RecordingSink
from kairox.mcp import McpClient, McpServerFailed, McpServerReady, McpServerRestarting, McpServerStarting

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


async def test_server_killed_mid_call_fails_that_call_then_restarts(
    python_server: Callable[..., McpServerConfig], tmp_path: Path, groups: Callable[[int], list[int]]
) -> None:
    sink = RecordingSink()
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path, events=sink) as client:
        first_pid = client.pid
        assert first_pid is not None
        result = await client.call_tool("die")
        with anyio.fail_after(20):
            await client.wait_for(lambda status: status == ServerStatus.READY)
        again = await client.call_tool("echo", {"message": "back"})
        assert client.pid != first_pid
        assert groups(first_pid) == []
    assert result.is_error is True
    assert result.text_content() == (
        "MCP server 'basic' went away during the call to 'die' (the server exited with code 17); "
        "Kairox restarts it, so the call can be tried again"
    )
    assert again.text_content() == "back"
    lifecycle = [
        e
        for e in sink.events
        if isinstance(e, McpServerStarting | McpServerReady | McpServerFailed | McpServerRestarting)
    ]
    assert [type(e).__name__ for e in lifecycle] == [
        "McpServerStarting",
        "McpServerReady",
        "McpServerFailed",
        "McpServerRestarting",
        "McpServerStarting",
        "McpServerReady",
    ]
    failed = sink.of_type(McpServerFailed)[0]
    assert (failed.reason, failed.will_restart) == ("the server exited with code 17", True)
    assert "dying in the middle of a call" in failed.stderr_tail
    assert sink.of_type(McpServerRestarting) == [McpServerRestarting(server="basic", attempt=1, delay_sec=0.25)]


async def test_restarts_stop_after_max_restarts(python_server: Callable[..., McpServerConfig], tmp_path: Path) -> None:
    from kairox.mcp import McpToolAdapter

    sink = RecordingSink()
    config = python_server("basic_server.py", max_restarts=1)
    replaced: list[int] = []
    async with McpClient("basic", config, workspace=tmp_path, events=sink) as client:
        adapter = McpToolAdapter(client)
        adapter.on_tools_changed(lambda provider, specs: replaced.append(len(specs)))
        await client.call_tool("die")
        with anyio.fail_after(20):
            await client.wait_for(lambda status: status == ServerStatus.READY)
        await client.call_tool("die")
        with anyio.fail_after(20):
            await client.wait_for(lambda status: status == ServerStatus.FAILED and not client.restarting)
        after = await client.call_tool("echo", {"message": "x"})
        offered = await adapter.list_tools()
    assert (offered, replaced[-1]) == ((), 0)
    assert client.reason == "the server exited with code 17; not restarted again after 1 restart(s) (max_restarts)"
    assert after.is_error is True
    assert [e.will_restart for e in sink.of_type(McpServerFailed)] == [True, False]
