"""A host socket that goes away between the moment the sandbox lists it and the moment bwrap mounts over it makes
bwrap stop before the command (it cannot make the mount point on the read-only root). ``shell.exec`` then builds
the sandbox again and runs the command, which had not run; a command that only prints the same words is not run
again."""

import inspect
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._sockets import HostSocket, outside_temp, serve, stop

import kairox.tools._builtin_shell as shell_module
from kairox.config import HooksConfig, SandboxPolicy
from kairox.config._models import HookConfig
from kairox.hooks import HookRegistry
from kairox.plugins._manifest import ToolDeclaration
from kairox.plugins._model import PluginTool
from kairox.plugins._tools import PluginToolProvider
from kairox.registry import build_registry
from kairox.sandbox import SandboxSettings
from kairox.sandbox._bwrap import SETUP_ATTEMPTS, vanished_before_start
from kairox.tools import CallContext, ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture
def host_socket(tmp_path: Path) -> Iterator[HostSocket]:
    outside = outside_temp()
    (tmp_path / "markers").mkdir()
    server = serve(outside / "service.sock", tmp_path / "markers")
    try:
        yield server
    finally:
        stop([server])
        shutil.rmtree(outside, ignore_errors=True)


def _remove_after_first_build(
    monkeypatch: pytest.MonkeyPatch, module: object, host_socket: HostSocket, *, name: str = "sandboxed_argv"
) -> list[list[str]]:
    """Wrap ``module``'s ``name`` (what builds the sandbox's command line, in a thread or awaited) so the socket is
    removed right after the first line is built, before bwrap starts; returns every line built."""
    built: list[list[str]] = []
    build = getattr(module, name)

    def remove_after_first(argv: list[str]) -> list[str]:
        built.append(argv)
        if len(built) == 1:
            assert str(host_socket.path) in argv  # listed: bwrap is to cover it
            host_socket.process.kill()
            host_socket.process.wait(10)
            host_socket.path.unlink(missing_ok=True)
        return argv

    async def build_then_remove_async(*args: object, **kwargs: object) -> list[str]:
        return remove_after_first(await build(*args, **kwargs))

    def build_then_remove_sync(*args: object, **kwargs: object) -> list[str]:
        return remove_after_first(build(*args, **kwargs))

    build_then_remove = build_then_remove_async if inspect.iscoroutinefunction(build) else build_then_remove_sync
    monkeypatch.setattr(module, name, build_then_remove)
    return built


@pytest.fixture
def removed_after_listing(monkeypatch: pytest.MonkeyPatch, host_socket: HostSocket) -> list[list[str]]:
    """Each command line ``shell.exec`` builds; after the first is built, the socket it lists is removed."""
    return _remove_after_first_build(monkeypatch, shell_module, host_socket)


async def run(tmp_path: Path, command: str) -> tuple[bool, str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    registry = await build_registry(settings(ws, sandbox=SandboxPolicy.READ_ONLY), approver=ScriptedApprover())
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": command}))
    return result.is_error, result.text_content()


async def test_the_command_runs_once_the_sandbox_is_built_again(
    tmp_path: Path, removed_after_listing: list[list[str]], host_socket: HostSocket
) -> None:
    failed, text = await run(tmp_path, "echo command-ran")

    assert (failed, text) == (False, "exit code: 0\ncommand-ran")
    # built again once, or once more when another socket of the machine (another test's) went in the meantime
    assert 2 <= len(removed_after_listing) <= SETUP_ATTEMPTS
    assert str(host_socket.path) not in removed_after_listing[-1]  # gone: no longer listed


async def test_without_the_second_start_bwrap_stops_before_the_command(
    tmp_path: Path, removed_after_listing: list[list[str]], monkeypatch: pytest.MonkeyPatch, host_socket: HostSocket
) -> None:
    monkeypatch.setattr(shell_module, "SETUP_ATTEMPTS", 1)

    failed, text = await run(tmp_path, "echo command-ran")

    assert failed and "command-ran" not in text
    assert "bwrap: " in text and str(host_socket.path) in text
    assert len(removed_after_listing) == 1


async def test_a_command_printing_the_same_words_is_not_run_again(tmp_path: Path, host_socket: HostSocket) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    counter = tmp_path / "tmp" / "runs"
    # the path it names still exists, and is no mount point bwrap was making: this was the command's own output
    line = (
        f"printf x >> {counter}; echo 'bwrap: Can'\"'\"'t create file "
        f"at {host_socket.path}: Read-only file system' >&2; exit 1"
    )
    counter.parent.mkdir(parents=True, exist_ok=True)
    registry = await build_registry(settings(ws), approver=ScriptedApprover())
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))
    assert result.is_error
    assert counter.read_text() == "x"


def test_what_counts_as_bwrap_stopping_before_the_command(tmp_path: Path) -> None:
    gone = tmp_path / "gone.sock"
    here = tmp_path / "here.sock"
    here.touch()
    bwrap = [
        shutil.which("bwrap") or "/usr/bin/bwrap",
        "--ro-bind-try",
        "/dev/null",
        str(gone),
        "--ro-bind-try",
        "/dev/null",
        str(here),
        "--",
        "true",
    ]
    stopped = f"bwrap: Can't create file at {gone}: Read-only file system\n".encode()

    assert vanished_before_start(bwrap, 1, b"", stopped)
    assert vanished_before_start(
        bwrap, 1, b"", f"bwrap: Can't mkdir parents for {gone}: Read-only file system".encode()
    )
    assert not vanished_before_start(
        bwrap, 1, b"", f"bwrap: Can't create file at {here}: Read-only file system".encode()
    )
    assert not vanished_before_start(bwrap, 1, b"printed\n", stopped)  # the command ran: it printed
    assert not vanished_before_start(bwrap, 2, b"", stopped)
    assert not vanished_before_start(
        [sys.executable, "-c", "pass"], 1, b"", stopped
    )  # no sandbox: nothing to build again
    assert not vanished_before_start(bwrap, 1, b"", f"warning\nbwrap: Can't create file at {gone}".encode())
    assert not vanished_before_start(
        bwrap, 1, b"", f"bwrap: Can't create file at {gone}x: Read-only file system".encode()
    )


@pytest.mark.parametrize("attempts", [3, 1])
async def test_a_hook_command_runs_once_the_sandbox_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_socket: HostSocket, attempts: int
) -> None:
    import kairox.hooks._runner as runner

    built = _remove_after_first_build(monkeypatch, runner, host_socket)
    monkeypatch.setattr(runner, "SETUP_ATTEMPTS", attempts)
    ws = tmp_path / "ws"
    ws.mkdir()
    hooks = HooksConfig(session_start=[HookConfig(command="echo hook-ran >&2; exit 1")])
    registry = HookRegistry.from_config(hooks, workspace=ws, sandbox=SandboxSettings(mode=SandboxPolicy.READ_ONLY))

    outcome = await registry.session_start()

    reasons = " ".join(d.reason for d in outcome.diagnostics)
    if attempts == 3:  # it ran: its own exit code and stderr
        assert 2 <= len(built) <= 3 and "hook-ran" in reasons and "bwrap" not in reasons  # 3: another socket went
    else:  # bwrap stopped before it
        assert len(built) == 1 and "hook-ran" not in reasons and str(host_socket.path) in reasons


@pytest.mark.parametrize("attempts", [3, 1])
async def test_a_plugin_command_tool_runs_once_the_sandbox_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_socket: HostSocket, attempts: int
) -> None:
    import kairox.plugins._tools as plugin_tools

    built = _remove_after_first_build(monkeypatch, plugin_tools, host_socket)
    monkeypatch.setattr(plugin_tools, "SETUP_ATTEMPTS", attempts)
    ws = tmp_path / "ws"
    ws.mkdir()
    declaration = ToolDeclaration.model_validate({"name": "echo", "command": "sh", "args": ["-c", "echo tool-ran"]})
    provider = PluginToolProvider("kit", [PluginTool(plugin="kit", declaration=declaration, root=ws)])
    context = CallContext(call_id="1", workspace=ws, sandbox=SandboxSettings(mode=SandboxPolicy.READ_ONLY))

    result = await provider.call_tool("kit__echo", {}, context)

    if attempts == 3:
        assert (result.is_error, result.text_content()) == (False, "tool-ran\n")
        assert 2 <= len(built) <= 3  # 3: another socket of the machine went in the meantime
    else:
        assert result.is_error and "bwrap: " in result.text_content() and len(built) == 1


@pytest.mark.parametrize("attempts", [3, 1])
async def test_a_debug_launch_starts_its_adapter_once_the_sandbox_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_socket: HostSocket, attempts: int
) -> None:
    from tests.dap._fixtures import PROGRAM, debugpy_config

    import kairox.dap._provider as dap_provider
    from kairox.dap import DapToolProvider

    built = _remove_after_first_build(monkeypatch, dap_provider, host_socket, name="adapter_sandbox")
    monkeypatch.setattr(dap_provider, "SETUP_ATTEMPTS", attempts)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "program.py").write_text(PROGRAM)
    registry = await build_registry(settings(ws), approver=ScriptedApprover())
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        await registry.add_provider(dap)
        result = await registry.call(ToolCall(name="dap.launch", arguments={"program": "program.py"}))

    text = result.text_content()
    if attempts == 3:
        assert not result.is_error and "The program ended with exit code 0" in text and "total 43" in text, text
        assert 2 <= len(built) <= 3  # 3: another socket of the machine went in the meantime
    else:
        assert result.is_error and "bwrap: " in text and str(host_socket.path) in text and len(built) == 1
