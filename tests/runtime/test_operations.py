"""Operations on a running context: restart and disable act on the running MCP manager, and the toggles are
written to the configuration layer that declares the server."""

import os
import sys
import tomllib
from pathlib import Path

import pytest
from tests.agent._support import SERVERS

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig, trust_workspace
from kairox.runtime import (
    add_mcp_server,
    build_extension_context,
    restart_mcp_server,
    set_mcp_server_enabled,
    set_mcp_tool_enabled,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


async def test_restart_disable_and_tool_toggle_act_on_the_running_manager_and_persist_in_the_declaring_layer(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    project = workspace / "kairox.toml"
    project.write_text(
        f'[mcp_servers.basic]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n',
        encoding="utf-8",
    )
    user = isolated_home / "kairox.toml"
    user.write_text(
        f'[mcp_servers.other]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n',
        encoding="utf-8",
    )
    trust_workspace(workspace)
    async with build_extension_context(workspace) as context:
        assert context.mcp is not None
        client = context.mcp.clients["basic"]
        first_pid = client.pid
        tools = [spec.name for spec in context.tools() if spec.origin == "basic"]
        assert first_pid is not None and tools

        await restart_mcp_server(context, "basic")
        assert client.status is ServerStatus.READY and client.pid not in (None, first_pid)
        assert [spec.name for spec in context.tools() if spec.origin == "basic"] == tools

        one = client.tools[0].name
        file = await set_mcp_tool_enabled(context, "basic", one, False)
        assert file == project
        assert tomllib.loads(project.read_text())["mcp_servers"]["basic"]["disabled_tools"] == [one]
        assert len([s for s in context.tools() if s.origin == "basic"]) == len(tools) - 1

        file = await set_mcp_server_enabled(context, "other", False)
        assert file == user
        assert tomllib.loads(user.read_text())["mcp_servers"]["other"]["enabled"] is False
        assert context.mcp.clients["other"].status is ServerStatus.STOPPED
        assert not [s for s in context.tools() if s.origin == "other"]
        assert context.mcp.clients["basic"].status is ServerStatus.READY  # the others keep running

        await set_mcp_server_enabled(context, "other", True)
        assert context.mcp.clients["other"].status is ServerStatus.READY
        assert [s for s in context.tools() if s.origin == "other"]


async def test_a_server_added_to_the_running_context_starts_and_offers_its_tools(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.first]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n',
        encoding="utf-8",
    )
    async with build_extension_context(workspace) as context:
        assert context.mcp is not None
        await add_mcp_server(
            context, "late", McpServerConfig(command=sys.executable, args=[str(SERVERS / "basic_server.py")])
        )
        late = context.mcp.clients["late"]
        assert late.status is ServerStatus.READY and late.pid is not None
        first = sorted(s.name.removeprefix("mcp__first__") for s in context.tools() if s.origin == "first")
        added = sorted(s.name.removeprefix("mcp__late__") for s in context.tools() if s.origin == "late")
        assert added == first and added
        pid = late.pid
    assert late.status is ServerStatus.STOPPED and late.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_server_can_be_added_to_a_session_that_started_without_any(tmp_path: Path, isolated_home: Path) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    async with build_extension_context(workspace) as context:
        assert not [s for s in context.tools() if s.source == "mcp"]
        assert context.mcp is not None
        await add_mcp_server(
            context, "late", McpServerConfig(command=sys.executable, args=[str(SERVERS / "lean_server.py")])
        )
        assert context.mcp.clients["late"].status is ServerStatus.READY
        assert [s.name for s in context.tools() if s.origin == "late"] == ["mcp__late__echo"]
