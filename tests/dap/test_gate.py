"""LSP and DAP tools through the real ToolRegistry gate: reading code is allowed under any sandbox; a launched
program is debugged inside the sandbox (read-only under read_only); attaching to a program no sandbox holds is
refused under read_only."""

from pathlib import Path

import pytest
from tests.dap._fixtures import debugpy_config
from tests.lsp._fixtures import jedi_config

from kairox.config import PolicyConfig, SandboxPolicy
from kairox.dap import DapToolProvider
from kairox.errors import ToolCallError
from kairox.lsp import LspToolProvider
from kairox.policy import NonInteractiveApprover, PolicySettings
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import CallContext, ToolCall

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


async def test_read_only_sandbox_debugs_in_a_read_only_sandbox_and_refuses_attaching(workspace: Path) -> None:
    (workspace / "writer.py").write_text("open('made.txt', 'w').write('x')\n")
    gate = registry(workspace, SandboxPolicy.READ_ONLY)
    async with (
        LspToolProvider({"jedi": jedi_config()}, workspace=workspace) as lsp,
        DapToolProvider({"debugpy": debugpy_config()}, workspace=workspace) as dap,
    ):
        await gate.add_provider(lsp)
        await gate.add_provider(dap)
        symbols = await gate.call(ToolCall(name="lsp.document_symbols", arguments={"path": "program.py"}))
        launch = await gate.call(ToolCall(name="dap.launch", arguments={"program": "program.py"}))
        writer = await gate.call(ToolCall(name="dap.launch", arguments={"program": "writer.py"}))
        attach = await gate.call(ToolCall(name="dap.attach", arguments={"port": 5678}))
        sessions = sorted(dap.sessions)
    assert not symbols.is_error, symbols.text_content()
    assert "function compute" in symbols.text_content()
    # the adapter and the debuggee run in the read-only sandbox: debugging works, writing does not
    assert launch.text_content().splitlines()[1:] == [
        "The program ended with exit code 0; debug session s1 is closed.",
        "Program output:",
        "total 43",
    ]
    assert writer.text_content().splitlines()[1] == "The program ended with exit code 1; debug session s2 is closed."
    assert "Read-only file system" in writer.text_content()
    assert not (workspace / "made.txt").exists()
    # no sandbox holds a program attached to: the gate denies it before the provider is asked
    assert attach.text_content() == (
        "dap.attach was not run: dap.attach runs a program outside "
        "Kairox's OS sandbox, which the read_only sandbox policy forbids"
    )
    assert sessions == ["s1", "s2"]


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
