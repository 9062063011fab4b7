"""A hostile MCP server cannot flood the model or the disk, and cannot hide its good tools behind a bad one:
descriptions and tool counts are capped per server, a tool with an unusable schema is left out alone (at listing
time, not when it is called), and its stderr log is capped and rotated."""

import sys
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings

from kairox._rpc._status import ServerStatus
from kairox._util._logfile import LOG_LIMIT_BYTES
from kairox.config import McpServerConfig
from kairox.errors import Diagnostic, ExtensionLoadFailure
from kairox.mcp import McpServerManager, McpToolAdapter
from kairox.policy import ApprovalAnswer
from kairox.registry import ToolRegistry
from kairox.tools import ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SERVER = Path(__file__).resolve().parents[1] / "servers" / "hostile_server.py"


def hostile(*args: str, **settings: object) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[str(SERVER), *args], **settings)  # type: ignore[arg-type]


def left_out(name: str, reason: str) -> ExtensionLoadFailure:
    return ExtensionLoadFailure(
        kind="tool",
        name=name,
        source="server:h",
        reason=f"left out: {reason}",
        hint="the server's other tools are offered; report the schema to the server's authors",
    )


async def test_a_megabyte_description_reaches_the_model_cut_to_the_cap_with_a_diagnostic(tmp_path: Path) -> None:
    async with McpServerManager(
        {"h": hostile("--description-chars", "1000000")}, workspace=tmp_path, home=tmp_path
    ) as manager:
        adapter = McpToolAdapter(manager.clients["h"])
        specs = {spec.name: spec for spec in await adapter.list_tools()}
    assert specs["mcp__h__t0"].description == "d" * 2048
    assert specs["mcp__h__t1"].description == "tool 1"
    assert adapter.diagnostics == [
        Diagnostic(
            kind="tool",
            name="t0",
            source="server:h",
            reason="its description has 1000000 characters; the model sees the first 2048",
            hint="raise mcp_servers.h.max_description_chars to show more",
        )
    ]


async def test_the_description_cap_is_a_setting_of_the_server(tmp_path: Path) -> None:
    config = hostile("--description-chars", "500", max_description_chars=100)
    async with McpServerManager({"h": config}, workspace=tmp_path, home=tmp_path) as manager:
        adapter = McpToolAdapter(manager.clients["h"])
        specs = {spec.name: spec for spec in await adapter.list_tools()}
    assert specs["mcp__h__t0"].description == "d" * 100


async def test_three_thousand_tools_are_capped_per_server_with_a_diagnostic(tmp_path: Path) -> None:
    servers = {"h": hostile("--tools", "3000"), "small": hostile("--tools", "3000", max_tools=5)}
    async with McpServerManager(servers, workspace=tmp_path, home=tmp_path) as manager:
        big, small = McpToolAdapter(manager.clients["h"]), McpToolAdapter(manager.clients["small"])
        offered = [spec.name for spec in await big.list_tools()]
        few = [spec.name for spec in await small.list_tools()]
        counted = {state.name: state.tools for state in manager.states()}
    assert counted == {"h": 200, "small": 5}  # what status reports is what the model sees
    assert len(manager.clients["h"].tools) == 3000
    assert offered == [f"mcp__h__t{i}" for i in range(200)]
    assert few == [f"mcp__small__t{i}" for i in range(5)]
    assert big.diagnostics == [
        Diagnostic(
            kind="mcp_server",
            name="h",
            source="server:h",
            reason="lists more than 200 tools; 2800 were left out",
            hint="pick the ones you need with mcp_servers.h.enabled_tools, or raise mcp_servers.h.max_tools",
        )
    ]


async def test_one_invalid_tool_schema_leaves_out_only_that_tool(tmp_path: Path) -> None:
    async with McpServerManager({"h": hostile("--bad-schema")}, workspace=tmp_path, home=tmp_path) as manager:
        client = manager.clients["h"]
        adapter = McpToolAdapter(client)
        offered = [spec.name for spec in await adapter.list_tools()]
        result = await client.call_tool("t1", {"x": "y"})
        assert client.status is ServerStatus.READY
        assert [state.tools for state in manager.states()] == [3]
    assert offered == ["mcp__h__t0", "mcp__h__t1", "mcp__h__t2"]
    assert result.text_content() == "ok t1"
    assert adapter.diagnostics == [
        left_out("bad_type", "the server listed it with invalid fields: inputSchema"),
        left_out("no_schema", "the server listed it with invalid fields: inputSchema"),
    ]


async def test_looping_dangling_and_remote_refs_are_refused_when_listed_not_when_called(tmp_path: Path) -> None:
    approver = ScriptedApprover([ApprovalAnswer(approved=True)])
    registry = ToolRegistry(settings(tmp_path), approver=approver)
    async with McpServerManager({"h": hostile("--refs")}, workspace=tmp_path, home=tmp_path) as manager:
        adapter = McpToolAdapter(manager.clients["h"])
        await registry.add_provider(adapter)
        visible = [spec.name for spec in registry.visible_tools()]
        good = await registry.call(ToolCall(name="mcp__h__t0", arguments={"x": "y"}))
    assert visible == ["mcp__h__t0", "mcp__h__t1", "mcp__h__t2"]
    assert good.text_content() == "ok t0"
    assert adapter.diagnostics == [
        left_out(
            "loop",
            "its input schema refers to itself at '/$defs/node' without descending into the arguments (a $ref loop)",
        ),
        left_out("dangling", "its input schema cannot be used: $ref '#/$defs/missing' points to nothing in the schema"),
        left_out(
            "remote",
            "its input schema cannot be used: $ref 'http://127.0.0.1:9/schema.json' refers to another document; "
            "only references inside the schema are followed",
        ),
    ]


async def test_a_stderr_flood_fills_at_most_two_capped_log_files(tmp_path: Path) -> None:
    async with McpServerManager({"h": hostile("--stderr-mb", "20")}, workspace=tmp_path, home=tmp_path) as manager:
        client = manager.clients["h"]
        assert client.status is ServerStatus.READY
        log = client.log_path
    files = sorted(p.name for p in log.parent.iterdir())
    assert files == ["h.log", "h.log.1"]
    assert log.with_name("h.log.1").stat().st_size == LOG_LIMIT_BYTES
    # 20 MiB went through: two full files were written, the older one was replaced, the rest is in h.log
    assert log.stat().st_size == 20 * 1024 * 1024 - 2 * LOG_LIMIT_BYTES
