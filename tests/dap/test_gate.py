"""LSP and DAP tools through the real ToolRegistry gate: reading code is allowed under any sandbox, debugging
(which runs programs) needs workspace_write or wider."""

from pathlib import Path

import pytest
from tests.dap._fixtures import debugpy_config
from tests.lsp._fixtures import jedi_config

from kairox.config import PolicyConfig, SandboxPolicy
from kairox.dap import DapToolProvider
from kairox.errors import ToolCallError
from kairox.lsp import LspToolProvider
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import RegistrySettings, ToolRegistry
from kairox.tools import CallContext, SandboxSettings, ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def registry(workspace: Path, sandbox: SandboxPolicy) -> ToolRegistry:
    policy = PolicySettings.from_config(
        PolicyConfig(sandbox_policy=sandbox), workspace=workspace, home=workspace / "home"
    )
    settings = RegistrySettings(
        policy=policy,
        sandbox=SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots),
        spill_dir=workspace / "spill",
    )
    return ToolRegistry(settings, approver=NonInteractiveApprover())


async def test_read_only_sandbox_allows_lsp_tools_and_stops_debugging(workspace: Path) -> None:
    gate = registry(workspace, SandboxPolicy.READ_ONLY)
    async with (
        LspToolProvider({"jedi": jedi_config()}, workspace=workspace) as lsp,
        DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as dap,
    ):
        await gate.add_provider(lsp)
        await gate.add_provider(dap)
        symbols = await gate.call(ToolCall(name="lsp.document_symbols", arguments={"path": "program.py"}))
        launch = await gate.call(ToolCall(name="dap.launch", arguments={"program": "program.py"}))
        sessions = dict(dap.sessions)
    assert not symbols.is_error, symbols.text_content()
    assert "function compute" in symbols.text_content()
    assert launch.is_error
    # the gate denies it before the adapter is asked (the provider would refuse too)
    assert launch.text_content() == (
        "dap.launch was not run: dap.launch runs a program outside Kairox's OS sandbox, which the read_only sandbox policy forbids"
    )
    assert sessions == {}


async def test_workspace_write_sandbox_lets_a_debug_session_run(workspace: Path) -> None:
    gate = registry(workspace, SandboxPolicy.WORKSPACE_WRITE)
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as dap:
        await gate.add_provider(dap)
        launch = await gate.call(ToolCall(name="dap.launch", arguments={"program": "program.py"}))
    assert not launch.is_error, launch.text_content()
    assert launch.text_content().splitlines()[:2] == [
        "Debug session s1 (debugpy): program.py",
        "The program ended with exit code 0; debug session s1 is closed.",
    ]


async def test_attaching_to_another_host_needs_network_access(workspace: Path) -> None:
    closed = CallContext(call_id="t", workspace=workspace)
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as dap:
        with pytest.raises(ToolCallError) as caught:
            await dap.call_tool("dap.attach", {"host": "192.0.2.7", "port": 5678}, closed)
        sessions = dict(dap.sessions)
    assert caught.value.message == (
        "dap.attach failed: attaching to 192.0.2.7 reaches the network, which policy.network_access forbids"
    )
    assert sessions == {}
