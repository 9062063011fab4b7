"""McpServerManager: concurrent start-up, one failure never blocks the others, required servers, no leaks."""

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from tests._rpc._procs import process_gone

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.errors import McpStartupError
from kairox.events import RecordingSink
from kairox.mcp import McpServerFailed, McpServerManager
from kairox.mcp._events import McpStartupSummary

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def _mixed(python_server: Callable[..., McpServerConfig]) -> dict[str, McpServerConfig]:
    return {
        "good": python_server("basic_server.py"),
        "crash": python_server("crash_at_start.py"),
        "hang": python_server("hang_initialize.py", startup_timeout_sec=3),
        "garbage": python_server("garbage_stdout.py", startup_timeout_sec=3),
        "flood": python_server("stderr_flood.py", "--exit"),
    }


async def test_failed_servers_leave_the_good_one_ready(
    python_server: Callable[..., McpServerConfig], tmp_path: Path, groups: Callable[[int], list[int]]
) -> None:
    sink = RecordingSink()
    pids: list[int] = []
    async with McpServerManager(_mixed(python_server), workspace=tmp_path, events=sink) as manager:
        states = {state.name: state for state in manager.states()}
        pids = [pid for c in manager.clients.values() if (pid := c.pid) is not None]
    assert {name: state.status for name, state in states.items()} == {
        "good": ServerStatus.READY,
        "crash": ServerStatus.FAILED,
        "hang": ServerStatus.FAILED,
        "garbage": ServerStatus.FAILED,
        "flood": ServerStatus.FAILED,
    }
    assert states["good"].tools == 10
    assert states["crash"].error == "the server exited with code 3 before finishing the MCP handshake"
    assert "missing API key" in states["crash"].stderr_tail
    assert states["hang"].error == "did not finish the MCP handshake within 3s (startup_timeout_sec)"
    assert "thinking..." in states["hang"].stderr_tail
    assert states["garbage"].error == (
        "did not finish the MCP handshake within 3s (startup_timeout_sec); "
        "its stdout is not JSON-RPC, e.g. 'Welcome to the garbage server v1.0'"
    )
    assert states["flood"].error == "the server exited with code 4 before finishing the MCP handshake"
    assert states["flood"].stderr_tail.endswith("stderr_flood: last line before answering\n")
    assert len(states["flood"].stderr_tail) <= 4_000
    summary = sink.of_type(McpStartupSummary)
    assert [(s.ready, s.failed) for s in summary] == [(("good",), ("crash", "hang", "garbage", "flood"))]
    assert {e.server for e in sink.of_type(McpServerFailed)} == {"crash", "hang", "garbage", "flood"}
    assert pids and all(groups(pid) == [] for pid in pids)


STUBBORN = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write(f"stubborn: pid {os.getpid()}, ignoring end of input and SIGTERM\\n")
    sys.stderr.flush()
    time.sleep(120)
    """
)


async def test_servers_failing_while_starting_settle_failed_with_their_stderr_and_are_gone(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    # one that exits on the protocol probe and then hangs in the classic handshake, one that ignores end of
    # input and SIGTERM, one that crashes: each settles Failed on its own clock, with what it wrote to stderr
    stubborn = tmp_path / "stubborn.py"
    stubborn.write_text(STUBBORN)
    servers = {
        "probe": python_server(
            "lean_server.py", "--exit-on-discover", "--delay-init-ms", "60000", startup_timeout_sec=3
        ),
        "stubborn": McpServerConfig(command=sys.executable, args=[str(stubborn)], startup_timeout_sec=3),
        "crash": python_server("crash_at_start.py"),
    }
    async with McpServerManager(servers, workspace=tmp_path, raise_on_required=False) as manager:
        states = {state.name: state for state in manager.states()}
    # 3 s: long enough for a Python server to start and say something on a busy machine
    timed_out = "did not finish the MCP handshake within 3s (startup_timeout_sec)"
    assert {name: (state.status, state.error) for name, state in states.items()} == {
        "probe": (ServerStatus.FAILED, timed_out),
        "stubborn": (ServerStatus.FAILED, timed_out),
        "crash": (ServerStatus.FAILED, "the server exited with code 3 before finishing the MCP handshake"),
    }
    assert "ignoring end of input and SIGTERM" in states["stubborn"].stderr_tail
    assert "missing API key" in states["crash"].stderr_tail
    assert manager.clients["probe"].attempt == 1  # the probe, then the classic handshake
    pid = int(states["stubborn"].stderr_tail.split("pid ")[1].split(",")[0])
    assert process_gone(pid)


async def test_required_server_failure_fails_start_up_after_all_settle(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    servers = {"good": python_server("basic_server.py"), "crash": python_server("crash_at_start.py", required=True)}
    manager = McpServerManager(servers, workspace=tmp_path)
    with pytest.raises(McpStartupError) as caught:
        async with manager:
            pass
    assert caught.value.server == "crash"
    assert caught.value.reason == "the server exited with code 3 before finishing the MCP handshake"
    assert manager.clients["good"].status == ServerStatus.STOPPED


async def test_disabled_and_untrusted_servers_are_not_started(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    servers = {
        "on": python_server("basic_server.py"),
        "off": python_server("basic_server.py", enabled=False),
        "project": python_server("basic_server.py"),
    }
    sink = RecordingSink()
    async with McpServerManager(
        servers, workspace=tmp_path, events=sink, is_pending=lambda n: n == "project"
    ) as manager:
        statuses = {state.name: state.status for state in manager.states()}
    assert statuses == {"on": ServerStatus.READY, "off": ServerStatus.DISABLED, "project": ServerStatus.HELD_BACK}
    summary = sink.of_type(McpStartupSummary)[0]
    assert (summary.ready, summary.failed, summary.disabled, summary.pending_trust) == (
        ("on",),
        (),
        ("off",),
        ("project",),
    )


async def test_garbage_lines_do_not_break_a_working_server(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    from kairox.mcp._events import McpProtocolViolation

    sink = RecordingSink()
    servers = {"garbage": python_server("garbage_stdout.py", "--then-serve")}
    async with McpServerManager(servers, workspace=tmp_path, events=sink) as manager:
        result = await manager.clients["garbage"].call_tool("echo", {"message": "fine"})
    assert result.text_content() == "fine"
    details = [e.detail for e in sink.of_type(McpProtocolViolation)]
    assert details == [
        "stdout line is not JSON-RPC: 'Welcome to the garbage server v1.0'",
        "stdout line is not JSON-RPC: '{not json at all'",
    ]


async def test_endless_garbage_is_reported_a_bounded_number_of_times(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    from kairox.mcp._events import McpProtocolViolation

    sink = RecordingSink()
    servers = {"chatty": python_server("garbage_stdout.py", "--lines", "500", "--then-serve")}
    async with McpServerManager(servers, workspace=tmp_path, events=sink) as manager:
        result = await manager.clients["chatty"].call_tool("echo", {"message": "still works"})
    details = [e.detail for e in sink.of_type(McpProtocolViolation)]
    assert result.text_content() == "still works"
    assert len(details) == 21
    assert details[-1] == "more stdout lines are not JSON-RPC; no longer reported"


HOST = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    from kairox.config import McpServerConfig
    from kairox.mcp import McpServerManager

    async def main() -> None:
        servers = {
            f"s{i}": McpServerConfig(command=sys.executable, args=[sys.argv[1]]) for i in range(3)
        }
        # a server behind a shell wrapper has a grandchild the kernel's parent-death signal does not reach
        servers["wrapped"] = McpServerConfig(command="/bin/sh", args=["-c", f"{sys.executable} {sys.argv[1]}; exit 0"])
        async with McpServerManager(servers, workspace=Path(sys.argv[2])) as manager:
            print(" ".join(str(c.pid) for c in manager.clients.values()), flush=True)
            await anyio.sleep(60)

    anyio.run(main)
    """
)


@pytest.mark.timeout(60)
async def test_no_server_survives_a_sigkilled_host(tmp_path: Path, groups: Callable[[int], list[int]]) -> None:
    script = tmp_path / "host.py"
    script.write_text(HOST)
    server = Path(__file__).resolve().parents[1] / "servers" / "basic_server.py"
    host = subprocess.Popen(
        [sys.executable, str(script), str(server), str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert host.stdout is not None
        pids = [int(pid) for pid in host.stdout.readline().split()]
        assert len(pids) == 4
        assert all(groups(pid) for pid in pids) and len(groups(pids[-1])) >= 2  # the wrapper and its server
        host.send_signal(signal.SIGKILL)
        host.wait(10)
        with anyio.fail_after(10):
            while any(groups(pid) for pid in pids):
                await anyio.sleep(0.05)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    assert [groups(pid) for pid in pids] == [[], [], [], []]


async def test_configured_servers_start_kairox_toml_and_mcp_json_servers_once_trusted(tmp_path: Path) -> None:
    import json

    from kairox.config import ResolvedConfig, resolve_config, trust_workspace
    from kairox.mcp import configured_servers

    server = Path(__file__).resolve().parents[1] / "servers" / "lean_server.py"
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "kairox.toml").write_text(f'[mcp_servers.toml]\ncommand = "{sys.executable}"\nargs = ["{server}"]\n')
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"json": {"command": sys.executable, "args": [str(server)]}}})
    )

    def manager_of(resolved: ResolvedConfig) -> McpServerManager:
        servers, diagnostics = configured_servers(resolved)
        assert diagnostics == ()
        return McpServerManager.from_configured(servers, workspace=resolved.workspace, home=resolved.home)

    async with manager_of(resolve_config(workspace)) as manager:
        before = {s.name: s.status for s in manager.states()}
    trust_workspace(workspace)
    async with manager_of(resolve_config(workspace)) as manager:
        after = {s.name: s.status for s in manager.states()}
    assert before == {"toml": ServerStatus.HELD_BACK, "json": ServerStatus.HELD_BACK}
    assert after == {"toml": ServerStatus.READY, "json": ServerStatus.READY}
