"""Plugin command tools through the real ToolRegistry: JSON arguments on stdin, result on stdout, sandboxed."""

from pathlib import Path

import pytest
from tests.plugins.conftest import make_plugin

from kairox.config import KairoxConfig, PolicyConfig, SandboxPolicy
from kairox.errors import ToolCallError
from kairox.plugins import plugin_tool_providers, route_plugins
from kairox.plugins._discovery import discover_plugins
from kairox.plugins._manifest import ToolDeclaration
from kairox.plugins._model import PluginTool
from kairox.plugins._tools import PluginToolProvider
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import CallContext, ToolCall

pytestmark = pytest.mark.anyio

_ECHO = """import json, sys
args = json.load(sys.stdin)
print(json.dumps({"got": args, "root": __import__("os").environ["KAIROX_PLUGIN_ROOT"]}))
"""
_WRITE = """import json, sys
args = json.load(sys.stdin)
open(args["path"], "w").write("x")
print("wrote " + args["path"])
"""


async def _registry(tmp_path: Path, permissions: dict[str, object] | None = None) -> tuple[ToolRegistry, Path]:
    root = make_plugin(
        tmp_path / "plugins" / "kit",
        {
            "name": "kit",
            **({"permissions": permissions} if permissions else {}),
            "tools": [
                {
                    "name": "echo",
                    "description": "Echo the arguments back.",
                    "command": "python3",
                    "args": ["${KAIROX_PLUGIN_ROOT}/tools/echo.py"],
                    "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
                },
                {
                    "name": "write",
                    "command": "python3 ${KAIROX_PLUGIN_ROOT}/tools/write.py",
                    "inputSchema": {"type": "object"},
                },
            ],
        },
        manifest_dir=".kairox-plugin",
    )
    (root / "tools").mkdir()
    (root / "tools" / "echo.py").write_text(_ECHO)
    (root / "tools" / "write.py").write_text(_WRITE)
    workspace = tmp_path / "ws"
    (workspace / "tmp").mkdir(parents=True)
    policy = PolicySettings.from_config(
        PolicyConfig(), workspace=workspace, home=tmp_path / "home", temp_dir=workspace / "tmp"
    )
    settings = RegistrySettings(
        policy=policy,
        sandbox=SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots, network_access=False),
        spill_dir=workspace / "spill",
    )
    registry = ToolRegistry(settings, approver=NonInteractiveApprover())
    found = discover_plugins(KairoxConfig.model_validate({"plugins": {"paths": [str(root)]}}), home=tmp_path / "home")
    routing = route_plugins(found.plugins)
    for provider in plugin_tool_providers(routing.tools, routing.permissions):
        await registry.add_provider(provider)
    return registry, root.resolve()


async def test_command_tool_gets_json_on_stdin_and_its_output_is_the_result(tmp_path: Path) -> None:
    registry, root = await _registry(tmp_path)

    result = await registry.call(ToolCall(name="kit__echo", arguments={"word": "hi"}))

    assert not result.is_error, result.text_content()
    assert result.structured == {"got": {"word": "hi"}, "root": str(root)}
    assert [(s.name, s.source, s.origin) for s in registry.tools()][-2:] == [
        ("kit__echo", "plugin", "kit"),
        ("kit__write", "plugin", "kit"),
    ]


async def test_command_tool_arguments_are_validated_before_it_runs(tmp_path: Path) -> None:
    registry, _ = await _registry(tmp_path)

    result = await registry.call(ToolCall(name="kit__echo", arguments={}))

    assert result.is_error
    assert "'word' is a required property" in result.text_content()


async def test_command_tool_runs_in_the_policy_sandbox(tmp_path: Path) -> None:
    registry, _ = await _registry(tmp_path)
    inside = tmp_path / "ws" / "inside.txt"
    outside = tmp_path / "outside.txt"

    allowed = await registry.call(ToolCall(name="kit__write", arguments={"path": str(inside)}))
    refused = await registry.call(ToolCall(name="kit__write", arguments={"path": str(outside)}))

    assert (allowed.is_error, inside.read_text()) == (False, "x")
    assert refused.is_error
    assert "Read-only file system" in refused.text_content()
    assert not outside.exists()


async def test_manifest_permissions_narrow_the_command_sandbox_and_cannot_widen_it(tmp_path: Path) -> None:
    registry, _ = await _registry(tmp_path, {"sandboxPolicy": "read_only"})
    greedy, _ = await _registry(tmp_path / "greedy", {"sandboxPolicy": "danger_full_access"})

    narrowed = await registry.call(ToolCall(name="kit__write", arguments={"path": str(tmp_path / "ws" / "inside.txt")}))
    widened = await greedy.call(
        ToolCall(name="kit__write", arguments={"path": str(tmp_path / "greedy" / "outside.txt")})
    )

    assert narrowed.is_error and "Read-only file system" in narrowed.text_content()
    assert widened.is_error and "Read-only file system" in widened.text_content()
    assert not (tmp_path / "ws" / "inside.txt").exists()
    assert not (tmp_path / "greedy" / "outside.txt").exists()


@pytest.mark.timeout(30)
async def test_command_that_closes_its_stdout_but_keeps_running_is_a_timeout(tmp_path: Path) -> None:
    declaration = ToolDeclaration.model_validate(
        {"name": "linger", "command": "sh", "args": ["-c", "exec >&-; sleep 20"], "timeoutSec": 0.5}
    )
    provider = PluginToolProvider("kit", [PluginTool(plugin="kit", declaration=declaration, root=tmp_path)])
    context = CallContext(
        call_id="1", workspace=tmp_path, sandbox=SandboxSettings(mode=SandboxPolicy.DANGER_FULL_ACCESS)
    )

    with pytest.raises(ToolCallError) as caught:
        await provider.call_tool("kit__linger", {}, context)

    assert (caught.value.tool, caught.value.reason) == ("kit__linger", "the command did not finish within 0.5 s")
