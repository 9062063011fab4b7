"""Kairox's own MCP session serves every stdio server, in the era it speaks, without importing the SDK (the stack
is chosen by the transport before connecting, never handed over); the protocol versions it negotiates are the
SDK's."""

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.events import RecordingSink
from kairox.mcp import McpClient, McpServerStarting
from kairox.mcp._session import HANDSHAKE_VERSIONS, LATEST_MODERN_VERSION, MODERN_VERSIONS

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SERVERS = Path(__file__).resolve().parents[1] / "servers"

USE_LEAN_SERVER = """
import json, sys, tempfile
from pathlib import Path
import anyio
from kairox.config import McpServerConfig
from kairox.mcp import McpClient

async def main() -> None:
    config = McpServerConfig(command=sys.executable, args=[sys.argv[1], "--extra-tools", "30", "--page-size", "7"])
    async with McpClient("lean", config, workspace=Path(tempfile.mkdtemp())) as client:
        echo = await client.call_tool("echo", {"message": "hi"})
        loaded = sorted({name.split(".")[0] for name in sys.modules} & {"mcp", "mcp_types", "httpx2", "starlette"})
        print(json.dumps({"status": str(client.status), "kind": client.session_kind, "tools": len(client.tools),
                          "echo": echo.text_content(), "loaded": loaded}))

anyio.run(main)
"""


def test_a_handshake_era_server_over_stdio_loads_no_sdk() -> None:
    run = subprocess.run(
        [sys.executable, "-c", USE_LEAN_SERVER, str(SERVERS / "lean_server.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    said = json.loads(run.stdout)
    assert said == {"status": "ready", "kind": "kairox", "tools": 31, "echo": "hi", "loaded": []}


USE_2026_SERVER = """
import json, sys, tempfile
from pathlib import Path
import anyio
from kairox.config import McpServerConfig
from kairox.mcp import McpClient

async def main() -> None:
    config = McpServerConfig(command=sys.executable, args=[sys.argv[1]])
    async with McpClient("basic", config, workspace=Path(tempfile.mkdtemp())) as client:
        echo = await client.call_tool("echo", {"message": "in the 2026 era"})
        loaded = sorted({name.split(".")[0] for name in sys.modules} & {"mcp", "mcp_types", "httpx2", "starlette"})
        print(json.dumps({"version": client.protocol_version, "kind": client.session_kind,
                          "echo": echo.text_content(), "loaded": loaded}))

anyio.run(main)
"""


def test_a_2026_era_server_over_stdio_is_served_in_its_era_without_the_sdk() -> None:
    run = subprocess.run(
        [sys.executable, "-c", USE_2026_SERVER, str(SERVERS / "basic_server.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    said = json.loads(run.stdout)
    assert said == {"version": LATEST_MODERN_VERSION, "kind": "kairox", "echo": "in the 2026 era", "loaded": []}


async def test_a_2026_era_server_starts_once_and_is_never_handed_over(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    sink = RecordingSink()
    async with McpClient("basic", python_server("basic_server.py"), workspace=tmp_path, events=sink) as client:
        assert (client.status, client.session_kind) == (ServerStatus.READY, "kairox")
        assert client.protocol_version == LATEST_MODERN_VERSION
        session = await client.ready_session()
        echo = await client.call_tool("echo", {"message": "on the first connection"})
        assert await client.ready_session() is session
    assert echo.text_content() == "on the first connection"
    assert sink.of_type(McpServerStarting) == [McpServerStarting(server="basic", transport="stdio", attempt=0)]


async def test_legacy_mode_keeps_a_2026_era_server_on_kairoxs_session(
    python_server: Callable[..., McpServerConfig], tmp_path: Path
) -> None:
    async with McpClient(
        "basic", python_server("basic_server.py", protocol_mode="legacy"), workspace=tmp_path
    ) as client:
        assert (client.session_kind, client.protocol_version) == ("kairox", HANDSHAKE_VERSIONS[-1])


def test_the_protocol_versions_are_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
    from mcp_types.version import LATEST_MODERN_VERSION as SDK_LATEST

    assert (HANDSHAKE_VERSIONS, MODERN_VERSIONS, LATEST_MODERN_VERSION) == (
        HANDSHAKE_PROTOCOL_VERSIONS,
        MODERN_PROTOCOL_VERSIONS,
        SDK_LATEST,
    )


async def test_a_2026_server_slower_than_the_probe_timeout_is_still_served_in_its_era(
    python_server: Callable[..., McpServerConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the probe gives up before the server reads it; the server then answers it, turns modern, and refuses the
    # initialize that followed (-32022): that refusal is modern evidence, not a failure, and the probe is sent again
    monkeypatch.setattr("kairox.mcp._native.DISCOVER_TIMEOUT_SEC", 0.3)
    config = python_server("basic_server.py", "--delay-init-ms", "1500")
    async with McpClient("slow", config, workspace=tmp_path) as client:
        assert (client.status, client.session_kind) == (ServerStatus.READY, "kairox"), client.reason
        assert client.protocol_version == LATEST_MODERN_VERSION


CRASHES_AT_ONCE = "import sys; sys.stderr.write('missing API key\\n'); sys.exit(3)"
CLOSES_ITS_INPUT = "import os, time; os.close(0); time.sleep(30)"


async def test_a_server_that_exited_is_told_from_one_that_only_closed_its_input() -> None:
    """A server that crashes at once can be seen first as a closed input (a send fails) and only later as the end
    of its output: both mean it ended by itself, and its exit code is what the failure names. A server that merely
    closed its input and was then stopped by Kairox did not end by itself."""
    import anyio

    from kairox._rpc._process import ChildProcess
    from kairox.mcp._connection import exited_on_its_own
    from kairox.mcp._native import StdioChannel
    from kairox.mcp._session import CONNECTION_CLOSED, SessionError

    outcomes = []
    for script in (CRASHES_AT_ONCE, CLOSES_ITS_INPUT):
        child = await ChildProcess(
            [sys.executable, "-c", script], guarded=True, stdin_grace=0.0, stop_timeout=1.0
        ).start()
        channel = StdioChannel(child)
        if script == CRASHES_AT_ONCE:
            assert await child.wait(10) == 3
        with anyio.fail_after(10):
            while not channel._transport.is_closing():  # the write end notices the closed pipe
                await anyio.sleep(0.01)
        with pytest.raises(SessionError) as raised:
            await channel.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        assert raised.value.code == CONNECTION_CLOSED and channel.input_closed and not channel.eof
        code = await child.stop()
        outcomes.append((code, exited_on_its_own(channel, code)))
    assert outcomes == [(3, True), (-15, False)]


SOURCE = Path(__file__).resolve().parents[2] / "src" / "kairox"


def _imported_modules(path: Path) -> set[str]:
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_no_private_module_of_the_sdk_is_imported_anywhere() -> None:
    private = {
        f"{path.relative_to(SOURCE)}: {module}"
        for path in SOURCE.rglob("*.py")
        for module in _imported_modules(path)
        if module.split(".")[0] in ("mcp", "mcp_types") and any(part.startswith("_") for part in module.split(".")[1:])
    }
    assert private == set()


def test_the_native_session_keeps_its_tasks_in_a_task_group() -> None:
    text = (SOURCE / "mcp" / "_native.py").read_text(encoding="utf-8")
    import re

    assert re.findall(r"\b(?:create_task|ensure_future)\(", text) == []
    assert "anyio.create_task_group()" in text


async def test_closing_the_session_leaves_no_task_of_it_behind(tmp_path: Path) -> None:
    import asyncio

    before = set(asyncio.all_tasks())
    config = McpServerConfig(command=sys.executable, args=[str(SERVERS / "lean_server.py")])
    async with McpClient("lean", config, workspace=tmp_path, home=tmp_path) as client:
        assert client.session_kind == "kairox"
        assert any(task.get_name().startswith("mcp-reader-lean") for task in asyncio.all_tasks())
    await asyncio.sleep(0)
    left = [task for task in asyncio.all_tasks() - before if not task.done() and task is not asyncio.current_task()]
    assert left == []
