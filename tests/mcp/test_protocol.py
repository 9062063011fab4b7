"""Protocol negotiation and pagination against the standard-library test server (M2)."""

import sys
from pathlib import Path

import pytest

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.events import RecordingSink
from kairox.mcp import McpClient, McpServerFailed, McpServerReady, McpServerStarting

LEAN = Path(__file__).resolve().parents[1] / "servers" / "lean_server.py"

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


async def test_server_that_exits_on_the_probe_is_restarted_once_in_legacy_mode(tmp_path: Path) -> None:
    sink = RecordingSink()
    config = McpServerConfig(command=sys.executable, args=[str(LEAN), "--exit-on-discover"])
    async with McpClient("old", config, workspace=tmp_path, events=sink) as client:
        status = client.status
        echoed = await client.call_tool("echo", {"message": "legacy"})
    assert (status, echoed.text_content()) == (ServerStatus.READY, "legacy")
    assert [e for e in sink.events if isinstance(e, McpServerStarting | McpServerReady | McpServerFailed)] == [
        McpServerStarting(server="old", transport="stdio", attempt=0),
        McpServerStarting(server="old", transport="stdio", attempt=1),
        McpServerReady(server="old", tools=1, protocol_version="2025-11-25"),
    ]


async def test_the_legacy_answer_is_remembered_for_the_next_run(tmp_path: Path, isolated_home: Path) -> None:
    config = McpServerConfig(command=sys.executable, args=[str(LEAN), "--exit-on-discover"])
    async with McpClient("old", config, workspace=tmp_path, home=isolated_home):
        pass
    sink = RecordingSink()
    async with McpClient("old", config, workspace=tmp_path, home=isolated_home, events=sink) as client:
        status = client.status
    changed = McpServerConfig(command=sys.executable, args=[str(LEAN), "--exit-on-discover", "--extra-tools", "1"])
    probed = RecordingSink()
    async with McpClient("old", changed, workspace=tmp_path, home=isolated_home, events=probed):
        pass
    assert status == ServerStatus.READY
    assert len(sink.of_type(McpServerStarting)) == 1  # straight to the classic handshake
    assert len(probed.of_type(McpServerStarting)) == 2  # a changed command is probed again


async def test_every_page_of_tools_is_listed(tmp_path: Path) -> None:
    config = McpServerConfig(command=sys.executable, args=[str(LEAN), "--extra-tools", "24", "--page-size", "10"])
    async with McpClient("paged", config, workspace=tmp_path) as client:
        names = [tool.name for tool in client.tools]
    assert names == ["echo", *(f"tool_{i:03d}" for i in range(24))]


async def test_legacy_mode_skips_the_probe(tmp_path: Path) -> None:
    sink = RecordingSink()
    config = McpServerConfig(command=sys.executable, args=[str(LEAN), "--exit-on-discover"], protocol_mode="legacy")
    async with McpClient("old", config, workspace=tmp_path, events=sink) as client:
        status = client.status
    assert status == ServerStatus.READY
    assert len(sink.of_type(McpServerStarting)) == 1
