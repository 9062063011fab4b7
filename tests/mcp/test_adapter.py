"""McpToolAdapter: registry names, filters, permissions, atomic replacement after list_changed (M5)."""

from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import pytest

from kairox.config import McpServerConfig
from kairox.mcp import McpClient, McpToolAdapter, permission_for
from kairox.tools import (
    Access,
    CallContext,
    PermissionProfile,
    ToolAnnotations,
    ToolProvider,
    ToolSource,
    ToolSpec,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def _ctx() -> CallContext:
    return CallContext(call_id="a", workspace=Path("."))


@pytest.fixture
def python_server(either_session_server: Callable[..., McpServerConfig]) -> Callable[..., McpServerConfig]:
    """Every test here holds with the SDK's session and with Kairox's own."""
    return either_session_server


async def test_tools_get_prefixed_names_source_origin_and_hints(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path) as client:
        adapter = McpToolAdapter(client)
        specs = {spec.name: spec for spec in await adapter.list_tools()}
        result = await adapter.call_tool("mcp__basic__echo", {"message": "via adapter"}, _ctx())
    echo = specs["mcp__basic__echo"]
    assert (echo.source, echo.origin, echo.description) == (ToolSource.MCP, "basic", "Return the message unchanged.")
    assert echo.annotations == ToolAnnotations(read_only_hint=True, open_world_hint=False)
    # read-only by its own word, but the server's annotations are not trusted: held as a write
    assert (echo.permission, echo.annotations_trusted) == (
        PermissionProfile(access=Access.EXTERNAL, destructive=True, open_world=True),
        False,
    )
    assert specs["mcp__basic__add"].permission == PermissionProfile(
        access=Access.EXTERNAL, destructive=True, open_world=True
    )
    assert specs["mcp__basic__add"].output_schema is not None
    assert echo.meta == {"mcp_server": "basic", "mcp_tool": "echo"}
    assert result.text_content() == "via adapter"


def test_annotations_only_narrow_what_a_tool_may_do_and_only_when_trusted() -> None:
    write = PermissionProfile(access=Access.EXTERNAL, destructive=True, open_world=True)
    assert permission_for(ToolAnnotations()) == write
    assert permission_for(ToolAnnotations(destructive_hint=False, open_world_hint=False)) == write
    assert permission_for(ToolAnnotations(read_only_hint=True, open_world_hint=False)) == write
    assert permission_for(ToolAnnotations(destructive_hint=False), trusted=True) == write
    assert permission_for(ToolAnnotations(read_only_hint=True), trusted=True) == PermissionProfile(
        access=Access.EXTERNAL, destructive=False, open_world=True
    )
    assert permission_for(
        ToolAnnotations(read_only_hint=True, open_world_hint=False), trusted=True
    ) == PermissionProfile(access=Access.EXTERNAL, destructive=False, open_world=False)


async def test_a_server_whose_annotations_are_trusted_gives_read_only_tools(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    config = python_server("basic_server.py").model_copy(update={"trust_annotations": True})
    async with McpClient("basic", config, workspace=tmp_path) as client:
        specs = {spec.name: spec for spec in await McpToolAdapter(client).list_tools()}
    echo = specs["mcp__basic__echo"]
    assert (echo.permission, echo.annotations_trusted) == (
        PermissionProfile(access=Access.EXTERNAL, destructive=False, open_world=False),
        True,
    )
    assert specs["mcp__basic__add"].permission == PermissionProfile(
        access=Access.EXTERNAL, destructive=True, open_world=True
    )


async def test_enabled_then_disabled_tools_filter(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    config = python_server("basic_server.py", enabled_tools=["echo", "add", "log"], disabled_tools=["log"])
    async with McpClient("basic", config, workspace=tmp_path) as client:
        adapter = McpToolAdapter(client)
        names = [spec.name for spec in await adapter.list_tools()]
        hidden = await adapter.call_tool("mcp__basic__log", {"message": "x"}, _ctx())
    assert names == ["mcp__basic__echo", "mcp__basic__add", "mcp__basic__list_resources", "mcp__basic__read_resource"]
    assert hidden.is_error is True


async def test_list_changed_burst_replaces_the_tools_at_once(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    replacements: list[list[str]] = []

    def listener(provider: ToolProvider, specs: Sequence[ToolSpec]) -> None:
        replacements.append([spec.name for spec in specs])

    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path) as client:
        adapter = McpToolAdapter(client)
        adapter.on_tools_changed(listener)
        await adapter.call_tool("mcp__basic__burst", {"count": 5}, _ctx())
        with anyio.fail_after(10):
            while not replacements or "mcp__basic__extra_4" not in replacements[-1]:
                await anyio.sleep(0.02)
        await adapter.call_tool("mcp__basic__burst", {"count": 2}, _ctx())
        with anyio.fail_after(10):
            while "mcp__basic__extra_4" in replacements[-1]:
                await anyio.sleep(0.02)
        await anyio.sleep(0.3)  # let the burst's last notifications land
        offered = [spec.name for spec in await adapter.list_tools()]
        current = [tool.name for tool in await client.refresh_tools()]
        extra = await adapter.call_tool("mcp__basic__extra_1", {}, _ctx())
        gone = await adapter.call_tool("mcp__basic__extra_4", {}, _ctx())
    tools = [name for name in offered if not name.endswith(("list_resources", "read_resource"))]
    assert tools == [f"mcp__basic__{name}" for name in current]
    assert tools[-2:] == ["mcp__basic__extra_0", "mcp__basic__extra_1"]
    assert all(offered == r for r in replacements[-1:])
    assert extra.text_content() == "extra 1"
    assert gone.is_error is True and "no longer" in gone.text_content()


async def test_the_registry_holds_exactly_the_current_tools_after_a_burst(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    from kairox.config import resolve_config
    from kairox.policy import NonInteractiveApprover
    from kairox.registry import build_registry
    from kairox.tools import ToolCall

    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    resolved = resolve_config(workspace, cli_overrides=['policy.rules.allow=["mcp__basic__*"]'])
    async with McpClient("basic", python_server("basic_server.py"), workspace=workspace) as client:
        registry = await build_registry(resolved, approver=NonInteractiveApprover())
        await registry.add_provider(McpToolAdapter(client))
        await registry.call(ToolCall(name="mcp__basic__burst", arguments={"count": 6}))
        await registry.call(ToolCall(name="mcp__basic__burst", arguments={"count": 3}))
        with anyio.fail_after(10):
            while "mcp__basic__extra_5" in {s.name for s in registry.tools()} or "mcp__basic__extra_2" not in {
                s.name for s in registry.tools()
            }:
                await anyio.sleep(0.02)
        await anyio.sleep(0.3)
        held = sorted(s.name for s in registry.tools() if s.origin == "basic")
        current = await client.refresh_tools()
        called = await registry.call(ToolCall(name="mcp__basic__extra_2", arguments={}))
    helpers = ["mcp__basic__list_resources", "mcp__basic__read_resource"]
    assert held == sorted([f"mcp__basic__{tool.name}" for tool in current] + helpers)
    assert called.text_content() == "extra 2"
