"""No process outlives Kairox: an MCP server, a language server and a debug adapter, each started through a
wrapper that leaves a helper process of its own, all die with a host that is SIGKILLed (no chance to clean up).

The guarantee is the guard's (``kairox/_rpc/_guard.py``) together with ``PR_SET_PDEATHSIG``; whichever way the
guard is arranged (one per server or one per host), this test holds it to zero orphans."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests._rpc._procs import _command, children_of, process_gone

from kairox._rpc._guarded import guarded_argv

SERVERS = Path(__file__).resolve().parents[1] / "servers"
WRAPPER = SERVERS / "forking_wrapper.sh"
LSP_SERVER = Path(__file__).resolve().parents[1] / "lsp" / "servers" / "busy_server.py"
ROUNDS = 20

HOST = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    from kairox.config import DapServerConfig, LspServerConfig, McpServerConfig
    from kairox.dap._client import DapClient
    from kairox.dap._lifecycle import DapServerLifecycle
    from kairox.lsp import LspServerLifecycle
    from kairox.mcp import McpServerManager

    async def main(workspace: Path, wrapper: str, mcp_server: str, lsp_server: str, pids: str) -> None:
        env = {"HELPER_PIDS": pids}
        python = sys.executable
        mcp = McpServerConfig(command=wrapper, args=[python, mcp_server], env=env)
        lsp = LspServerConfig(command=wrapper, args=[python, lsp_server], env=env, file_patterns=["*.py"])
        dap = DapServerConfig(command=wrapper, args=[python, "-m", "debugpy.adapter"], env=env, languages=["python"])
        async with (
            anyio.create_task_group() as group,
            McpServerManager({"wrapped": mcp}, workspace=workspace),
            LspServerLifecycle("wrapped", lsp, workspace=workspace) as language_server,
        ):
            await language_server.ensure_running()
            adapter = DapServerLifecycle(
                "wrapped",
                lambda: DapClient("wrapped", dap, workspace=workspace),
                session="s1",
                task_group=group,
                confinement_state={"confined": False, "sandbox": "none", "reason": "no sandbox"},
            )
            await adapter.start()
            print("ready", flush=True)
            await anyio.sleep(120)

    anyio.run(main, Path(sys.argv[1]), *sys.argv[2:])
    """
)


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children_of(stack.pop()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def one_round(tmp_path: Path, index: int) -> tuple[set[int], list[tuple[int, str]]]:
    """Start a host with the three wrapped servers, SIGKILL it; the processes it had and those still running."""
    workspace = tmp_path / f"ws{index}"
    workspace.mkdir()
    pids_file = tmp_path / f"helpers{index}.txt"
    host = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOST,
            str(workspace),
            str(WRAPPER),
            str(SERVERS / "lean_server.py"),
            str(LSP_SERVER),
            str(pids_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None
        line = host.stdout.readline()
        assert line.strip() == "ready", host.stderr.read() if host.stderr else ""
        helpers = [int(pid) for pid in pids_file.read_text().split()]
        assert len(helpers) == 3  # one helper per wrapper: the MCP, LSP and DAP servers all started through one
        tree = descendants(host.pid)
        assert set(helpers) <= tree
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(process_gone(pid) for pid in tree):
        time.sleep(0.05)
    left = [pid for pid in tree if not process_gone(pid)]
    return tree, [(pid, _command(pid)) for pid in left]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_wrapped_servers_and_their_helpers_die_with_a_sigkilled_host_in_every_round(tmp_path: Path) -> None:
    orphans: list[tuple[int, str]] = []
    started = 0
    try:
        for index in range(ROUNDS):
            tree, left = one_round(tmp_path, index)
            started += len(tree)
            orphans += left
    finally:
        for pid, _ in orphans:  # processes this test started: never leave them running
            if not process_gone(pid):
                os.kill(pid, signal.SIGKILL)
    assert orphans == []
    # per round at least: 3 wrappers, 3 helpers, 3 servers (and the guards)
    assert started >= 9 * ROUNDS


MANY_HOST = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    from kairox.config import McpServerConfig
    from kairox._rpc._status import ServerStatus
    from kairox.mcp import McpServerManager

    async def main(workspace: Path, wrapper: str, server: str, pids: str, count: str) -> None:
        config = McpServerConfig(command=wrapper, args=[sys.executable, server], env={"HELPER_PIDS": pids})
        async with McpServerManager({f"s{i}": config for i in range(int(count))}, workspace=workspace) as manager:
            assert all(state.status == ServerStatus.READY for state in manager.states()), manager.states()
            print("ready", flush=True)
            await anyio.sleep(120)

    anyio.run(main, Path(sys.argv[1]), *sys.argv[2:])
    """
)
MANY = 8


@pytest.mark.timeout(300)
def test_many_wrapped_mcp_servers_and_their_helpers_die_with_a_sigkilled_host(tmp_path: Path) -> None:
    orphans: list[tuple[int, str]] = []
    try:
        for index in range(3):
            workspace = tmp_path / f"ws{index}"
            workspace.mkdir()
            pids_file = tmp_path / f"helpers{index}.txt"
            argv = [str(workspace), str(WRAPPER), str(SERVERS / "lean_server.py"), str(pids_file), str(MANY)]
            host = subprocess.Popen(
                [sys.executable, "-c", MANY_HOST, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            try:
                assert host.stdout is not None
                assert host.stdout.readline().strip() == "ready", host.stderr.read() if host.stderr else ""
                helpers = {int(pid) for pid in pids_file.read_text().split()}
                tree = descendants(host.pid)
                # every server: its wrapper, the wrapper's helper and the server itself (and what guards them)
                assert len(helpers) == MANY and helpers <= tree and len(tree) >= 3 * MANY
            finally:
                host.send_signal(signal.SIGKILL)
                host.wait()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not all(process_gone(pid) for pid in tree):
                time.sleep(0.05)
            orphans += [(pid, _command(pid)) for pid in tree if not process_gone(pid)]
    finally:
        for pid, _ in orphans:  # processes this test started: never leave them running
            if not process_gone(pid):
                os.kill(pid, signal.SIGKILL)
    assert orphans == []


COMMANDS_HOST = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    from kairox.config import SandboxPolicy
    from kairox.plugins._manifest import ToolDeclaration
    from kairox.plugins._model import PluginTool
    from kairox.plugins._tools import PluginToolProvider, plugin_tool_name
    from kairox.tools import BuiltinToolProvider, CallContext
    from kairox.sandbox import SandboxSettings

    async def main(workspace: Path, pids: str) -> None:
        command = f"sleep 300 & echo $! >> {pids}; sleep 300"
        declaration = ToolDeclaration(name="wait", command="/bin/sh", args=["-c", command], timeoutSec=600)
        plugin = PluginToolProvider("kit", [PluginTool(plugin="kit", declaration=declaration, root=workspace)])
        shell = BuiltinToolProvider()
        async with anyio.create_task_group() as group:
            for mode in (SandboxPolicy.DANGER_FULL_ACCESS, SandboxPolicy.WORKSPACE_WRITE):
                context = CallContext(call_id="c", workspace=workspace, sandbox=SandboxSettings(mode=mode, writable_roots=(workspace,)))
                group.start_soon(shell.call_tool, "shell.exec", {"command": command, "timeout_sec": 600}, context)
                group.start_soon(plugin.call_tool, plugin_tool_name("kit", "wait"), {}, context)

    anyio.run(main, Path(sys.argv[1]), sys.argv[2])
    """  # noqa: E501
)


@pytest.mark.timeout(120)
def test_shell_exec_and_plugin_tools_in_and_out_of_the_sandbox_die_with_a_sigkilled_host(tmp_path: Path) -> None:
    pids_file = tmp_path / "helpers.txt"
    host = subprocess.Popen(
        [sys.executable, "-c", COMMANDS_HOST, str(tmp_path), str(pids_file)], stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while len(pids_file.read_text().split() if pids_file.exists() else []) < 4:
            assert host.poll() is None and time.monotonic() < deadline, host.stderr.read() if host.stderr else ""
            time.sleep(0.05)
        tree = descendants(host.pid)
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(process_gone(pid) for pid in tree):
        time.sleep(0.05)
    left = [(pid, _command(pid)) for pid in tree if not process_gone(pid)]
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
    # two commands in each mode: the sandboxed helpers live in bwrap's pid namespace, so only those outside it
    # are in the list of helper pids; the tree holds them all
    assert len(tree) >= 8


def test_what_a_server_leaves_in_its_group_ends_when_it_ends(tmp_path: Path) -> None:
    # the host's pipes close as it dies, so a server may end before the guard learns of the host's death: the
    # guard then still takes what the server left behind with it
    guard = subprocess.run(
        guarded_argv(["/bin/sh", "-c", "sleep 300 & echo $!; exit 3"]),
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    helper = int(guard.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not process_gone(helper):
        time.sleep(0.05)
    gone = process_gone(helper)
    if not gone:
        os.kill(helper, signal.SIGKILL)
    assert (guard.returncode, gone) == (3, True)


def test_a_guard_that_does_not_lead_its_group_leaves_its_callers_group_alone() -> None:
    sibling = subprocess.Popen(["sleep", "30"])  # in the caller's group, as the guard below is
    try:
        guard = subprocess.run(guarded_argv(["/bin/sh", "-c", "exit 0"]), timeout=60)
        assert (guard.returncode, sibling.poll()) == (0, None)
    finally:
        sibling.kill()
        sibling.wait()
