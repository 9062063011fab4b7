"""What a process that hosts an MCP server over stdio imports: the server's config model and the client, nothing
that only other commands need (bench/import_time.py measures the time; this guards the list)."""

import json
import subprocess
import sys
from pathlib import Path

HOST_IMPORT = "from kairox.config import McpServerConfig; from kairox.mcp import McpClient"

HEAVY = [
    # the SDK and the HTTP stack: a stdio server that speaks the handshake era needs neither
    "mcp", "mcp_types", "httpx", "httpx2", "httpcore", "starlette", "uvicorn",
    # other commands' libraries
    "jsonschema", "yaml", "tomlkit", "typer", "click", "rich", "textual", "openai", "anthropic",
    # pydantic's plugin entry-point scan (package metadata, email parsing, zip files): paid when a validator is
    # first built, not at import
    "pydantic.plugin._loader", "importlib.metadata", "email", "zipfile", "csv",
    # standard modules only some paths use (asyncio brings ssl along, so ssl is not in this list)
    "tomllib", "difflib", "tempfile", "http.client", "urllib.request",
    # Kairox's own modules a host of one server does not run
    "kairox.config._models", "kairox.config._resolve", "kairox.config._writer", "kairox.config._trust",
    "kairox.config._field_docs", "kairox.mcp._manager", "kairox.mcp._adapter", "kairox.mcp._sdk",
    "kairox.mcp._oauth", "kairox.tools._builtin", "kairox.tools._sandbox", "kairox._rpc._connection",
    "kairox.registry", "kairox.policy", "kairox.hooks",
]  # fmt: skip

PROBE = f"""
import json, sys
{HOST_IMPORT}
from kairox.config._servers import DapServerConfig, LspServerConfig
heavy = sorted(set(sys.modules) & set(json.loads(sys.argv[1])))
built = [m.__name__ for m in (McpServerConfig, LspServerConfig, DapServerConfig) if m.__pydantic_complete__]
config = McpServerConfig(command="server", args=["--stdio"])
print(json.dumps({{"heavy": heavy, "built": built, "transport": config.transport}}))
"""


def test_an_mcp_host_imports_no_module_only_other_paths_need() -> None:
    run = subprocess.run([sys.executable, "-c", PROBE, json.dumps(HEAVY)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == {"heavy": [], "built": [], "transport": "stdio"}


def test_the_probe_sees_a_heavy_module_when_one_is_loaded() -> None:
    # the guard above would pass vacuously if the probe could not see imports: load two on purpose
    run = subprocess.run(
        [sys.executable, "-c", "import tomlkit, email.message\n" + PROBE, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)["heavy"] == ["email", "tomlkit"]


def test_the_host_guard_starts_on_modules_built_into_the_interpreter() -> None:
    """The first server waits for the guard to start: beyond what the interpreter loads to run ``import os``, it loads
    only modules written in C (no ``json``, ``socket``, ``ctypes``, ``typing``), and still serves: it answers a spawn
    request with a pid."""
    import marshal
    import os
    import socket

    from kairox._rpc import GUARD_SCRIPT

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    guard = subprocess.Popen(
        [sys.executable, "-I", "-S", "-X", "importtime", str(GUARD_SCRIPT), "--host", str(os.getpid())],
        stdin=theirs.fileno(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    theirs.close()
    with ours:
        ends = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
        socket.send_fds(ours, [marshal.dumps({"argv": ["true"], "env": {"PATH": os.defpath}, "cwd": None})], ends)
        for fd in ends:
            os.close(fd)
        ours.settimeout(30)
        assert "pid" in marshal.loads(ours.recv(1 << 16))
    _, stderr = guard.communicate(timeout=30)
    bare = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", "-c", "import os"], capture_output=True, text=True, timeout=30
    )
    extra = set(_imported(stderr)) - set(_imported(bare.stderr))
    assert {"_socket", "select"} <= extra  # (it sees the modules the guard does load)
    assert extra <= {"_signal", "_socket", "marshal", "select", "_ctypes"}, f"the guard imports more: {sorted(extra)}"


def _imported(importtime: str) -> list[str]:
    return [
        line.rsplit("|", 1)[-1].strip()
        for line in importtime.splitlines()
        if line.startswith("import time:") and "|" in line
    ]


def test_a_stdio_client_starts_the_guard_before_its_server_is_asked_for(tmp_path: Path) -> None:
    """The guard boots while the client gets ready, so the first spawn does not wait for it; a client of an HTTP
    server starts none."""
    probe = """
import sys
from pathlib import Path
from kairox._rpc import running_host_guard
from kairox.config import McpServerConfig
from kairox.mcp import McpClient
McpClient("web", McpServerConfig(url="http://127.0.0.1:9/mcp"), workspace=Path.cwd(), home=Path(sys.argv[1]))
print(running_host_guard() is not None)
McpClient("local", McpServerConfig(command="server"), workspace=Path.cwd(), home=Path(sys.argv[1]))
print(running_host_guard() is not None)
"""
    run = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]
