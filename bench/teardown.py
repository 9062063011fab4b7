"""Teardown: how long Kairox takes to stop its MCP servers, against a bare client stopping the same servers.

Each case starts the servers, waits until every one has listed its tools, then times only the stop:

- Kairox: leaving ``McpServerManager`` (every supervisor closes its session and stops its process group).
- Baseline: the same servers started with plain asyncio pipes and a JSON-lines handshake; the stop closes
  stdin of all of them at once and waits; a server still running after 100 ms gets SIGTERM (the time a bare
  client would need to notice a server that ignores end-of-input, as server-everything does once a client
  declares roots).

Cases: one stdlib server, ten stdlib servers, one server-everything (Node). Rounds alternate Kairox and baseline;
the ratio is the median of paired ratios. Run: .venv/bin/python bench/teardown.py [--rounds N]
"""

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.mcp import McpServerManager

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ROOT / "tests" / "servers"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
GRACE_SEC = 0.1


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    count: int


def cases() -> list[Case]:
    lean = [sys.executable, str(SERVERS / "lean_server.py")]
    found = [Case("1 stdlib server", lean, 1), Case("10 stdlib servers", lean, 10)]
    if EVERYTHING.exists():
        found.append(Case("1 server-everything", ["node", str(EVERYTHING), "stdio"], 1))
    return found


async def kairox_stop(case: Case, workspace: Path) -> float:
    config = McpServerConfig(command=case.argv[0], args=case.argv[1:])
    servers = {f"s{i}": config for i in range(case.count)}
    async with AsyncExitStack() as stack:
        manager = await stack.enter_async_context(McpServerManager(servers, workspace=workspace))
        states = manager.states()
        if not all(state.status == ServerStatus.READY for state in states):
            raise SystemExit(f"{case.name}: not every server is ready: {states}")
        began = time.perf_counter()
    return time.perf_counter() - began


async def _request(process: asyncio.subprocess.Process, message: dict[str, object]) -> None:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    await process.stdin.drain()
    if "id" not in message:
        return
    while True:
        line = await process.stdout.readline()
        if not line:
            raise SystemExit(f"server exited during {message['method']}")
        if json.loads(line).get("id") == message["id"]:
            return


async def _start_raw(case: Case, workspace: Path) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        *case.argv,
        cwd=workspace,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "bench", "version": "1"},
    }
    await _request(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    await _request(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    await _request(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    return process


async def _stop_raw(process: asyncio.subprocess.Process) -> None:
    assert process.stdin is not None
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), GRACE_SEC)
    except TimeoutError:
        os.killpg(process.pid, signal.SIGTERM)
        await process.wait()


async def raw_stop(case: Case, workspace: Path) -> float:
    processes = await asyncio.gather(*(_start_raw(case, workspace) for _ in range(case.count)))
    began = time.perf_counter()
    await asyncio.gather(*(_stop_raw(process) for process in processes))
    return time.perf_counter() - began


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("KAIROX_HOME", str(Path(tmp) / "home"))
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        print(f"cores: {os.cpu_count()}, rounds: {options.rounds} (medians; ratio = median of paired ratios)")
        print(f"{'case':22} {'kairox ms':>10} {'baseline ms':>12} {'ratio':>7}")
        for case in cases():
            await kairox_stop(case, workspace)  # warm the file cache and the protocol cache
            kairox_times: list[float] = []
            raw_times: list[float] = []
            for _ in range(options.rounds):
                kairox_times.append(await kairox_stop(case, workspace))
                raw_times.append(await raw_stop(case, workspace))
            ratio = statistics.median(k / r for k, r in zip(kairox_times, raw_times, strict=True))
            print(
                f"{case.name:22} {statistics.median(kairox_times) * 1000:10.1f}"
                f" {statistics.median(raw_times) * 1000:12.1f} {ratio:6.2f}x"
            )


if __name__ == "__main__":
    asyncio.run(main())
