"""Start-up concurrency: ten MCP servers that each delay initialize by 300 ms, against one such server.

Every server starts in its own supervisor task under its own timeout, so ten should be Ready in about the
time of one (the target is under 2x). Measured with a standard-library server (tests/servers/lean_server.py)
so the figure is about Kairox, and again with the SDK-based test server for reference (its Python import time
is CPU-bound and shares the machine's cores). Also: a workspace with one good and four broken servers, two of
which hang until their 1 s startup timeout, settles in about that timeout, not the sum.
Run: .venv/bin/python bench/mcp_startup.py
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.mcp import McpServerManager

SERVERS = Path(__file__).resolve().parents[1] / "tests" / "servers"
ROUNDS = 5


async def start(count: int, script: str, workspace: Path) -> float:
    config = McpServerConfig(command=sys.executable, args=[str(SERVERS / script), "--delay-init-ms", "300"])
    servers = {f"s{i}": config for i in range(count)}
    began = time.perf_counter()
    async with McpServerManager(servers, workspace=workspace) as manager:
        elapsed = time.perf_counter() - began
        assert all(state.status == ServerStatus.READY for state in manager.states()), manager.states()
    return elapsed


async def measure(script: str, workspace: Path) -> tuple[float, float]:
    await start(1, script, workspace)  # warm the file cache
    one = statistics.median([await start(1, script, workspace) for _ in range(ROUNDS)])
    ten = statistics.median([await start(10, script, workspace) for _ in range(ROUNDS)])
    return one, ten


async def mixed(workspace: Path) -> float:
    """One good server and four broken ones (two of them hang until the 1 s startup timeout)."""

    def server(script: str, *args: str, timeout: float = 30.0) -> McpServerConfig:
        return McpServerConfig(command=sys.executable, args=[str(SERVERS / script), *args], startup_timeout_sec=timeout)

    servers = {
        "good": server("lean_server.py"),
        "crash": server("crash_at_start.py"),
        "hang": server("hang_initialize.py", timeout=1.0),
        "garbage": server("garbage_stdout.py", timeout=1.0),
        "flood": server("stderr_flood.py", "--exit"),
    }
    began = time.perf_counter()
    async with McpServerManager(servers, workspace=workspace) as manager:
        elapsed = time.perf_counter() - began
        assert [s.status for s in manager.states()].count(ServerStatus.READY) == 1
    return elapsed


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("KAIROX_HOME", tmp)
        print(f"cores: {os.cpu_count()}, rounds: {ROUNDS} (medians)")
        for script in ("lean_server.py", "basic_server.py"):
            one, ten = await measure(script, Path(tmp))
            print(f"{script:16} one: {one * 1000:7.1f} ms   ten: {ten * 1000:7.1f} ms   ten/one: {ten / one:.2f}x")
        broken = statistics.median([await mixed(Path(tmp)) for _ in range(ROUNDS)])
        print(
            "good + crash + hang + garbage + flood (1 s startup timeout): "
            f"{broken * 1000:7.1f} ms = {broken:.2f}x the timeout"
        )


if __name__ == "__main__":
    anyio.run(main)
