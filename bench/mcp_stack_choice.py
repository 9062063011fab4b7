"""The figures behind Kairox's MCP stack choice: its own session for stdio servers, the SDK's ``Client`` only for
remote ones. On one stdio server (``tests/servers/lean_server.py`` of the handshake era, or ``--server
basic_server.py`` which speaks the 2026 era too; its ``echo`` tool), each stack as
``McpClient`` would run it: ``native`` (what it does) and ``sdk`` (the SDK's ``Client`` on every connection, what a
single SDK stack would do), beside ``raw`` (a bare JSON-lines client on pipes).

- start-up: a fresh process importing the client, spawning the server and listing its tools; rounds interleaved,
  medians, and the sdk/native ratio paired per round (wall time: read it on a quiet machine);
- ``--calls``: instructions per tool call in the client process, counted by ``valgrind --tool=callgrind`` (a count,
  not a time: the same on a busy machine), through the gate (a ``ToolRegistry`` as ``bench/gate_call.py`` builds it)
  for both stacks and bare for ``raw``; per call = (count after N2 calls - count after N1) / (N2 - N1).

Run: .venv/bin/python bench/mcp_stack_choice.py [--rounds 7] [--calls [--against OTHER_CHECKOUT]]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SERVERS = BENCH.parent / "tests" / "servers"
SERVER = SERVERS / "lean_server.py"

WORKER = r"""
import time, sys, json
began = time.monotonic()
import anyio
from pathlib import Path
kind, server, folder, calls = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])

async def raw() -> None:
    import asyncio
    proc = await asyncio.create_subprocess_exec(sys.executable, server, stdin=-1, stdout=-1)
    async def ask(ident, method, params):
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        proc.stdin.write((json.dumps(message) + "\n").encode())
        while json.loads(await proc.stdout.readline()).get("id") != ident:
            pass
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    await ask(0, "initialize", hello)
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    for i in range(calls):
        await ask(i + 1, "tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    proc.stdin.close()
    await proc.wait()

def sdk_only():
    from kairox.mcp import McpClient
    from kairox.mcp._connection import McpConnection

    class SdkConnection(McpConnection):
        async def _open(self):  # the SDK's Client on this connection too
            from mcp import StdioServerParameters
            from kairox.mcp._callbacks import ClientCallbacks
            from kairox.mcp._sdk import SdkSession, sdk_client
            owner = self.owner
            callbacks = ClientCallbacks(owner.name, owner.features, owner.events)
            params = StdioServerParameters(command=owner.config.command, args=owner.config.args)
            sdk = sdk_client(params, mode="auto", callbacks=callbacks, on_tools_changed=owner.relist_soon,
                             on_violation=owner.violation)
            await self._stack.enter_async_context(sdk)
            return SdkSession(sdk, server=owner.name, callbacks=callbacks)

    class SdkOnly(McpClient):
        def _new_client(self):
            return SdkConnection(self)

    return SdkOnly

async def kairox() -> None:
    sys.path.insert(0, sys.argv[5])
    from kairox.config import McpServerConfig
    from kairox._rpc._status import ServerStatus
    from kairox.mcp import McpClient, McpToolAdapter
    from kairox.tools import ToolCall
    from gate_call import gate_registry

    imported = time.monotonic()
    cls = sdk_only() if kind == "sdk" else McpClient
    # valgrind runs the client some fifty times slower than usual
    config = McpServerConfig(command=sys.executable, args=[server], cache_tools=False, startup_timeout_sec=900)
    async with cls("lean", config, workspace=folder, home=folder) as client:
        assert client.status == ServerStatus.READY, client.reason
        listed = time.monotonic()
        if calls:
            registry, _ = await gate_registry(folder, folder, McpToolAdapter(client))
            for _ in range(calls):
                result = await registry.call(ToolCall(name="mcp__lean__echo", arguments={"message": "hi"}))
                assert not result.is_error, result.text_content()
        print(json.dumps({"began": began, "imported": imported, "listed": listed}))

anyio.run(raw if kind == "raw" else kairox)
"""


def once(
    kind: str, folder: Path, calls: int = 0, *, counted: bool = False, checkout: Path = BENCH.parent
) -> dict[str, float]:
    """One fresh process (importing Kairox from ``checkout``); with ``counted``, under callgrind, and its count."""
    bench = checkout / "bench"
    folder = Path(tempfile.mkdtemp(dir=folder))  # a home of its own: what one run remembers, the next does not see
    command = [sys.executable, "-c", WORKER, kind, str(SERVER), str(folder), str(calls), str(bench)]
    env = {**os.environ, "PYTHONPATH": str(checkout / "src"), "KAIROX_HOME": str(folder)}
    if counted:
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.out", *command]
    spawned = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if run.returncode != 0:
        raise SystemExit(f"{kind}: {run.stderr[-2000:]}")
    if counted:
        found = re.search(r"Collected : (\d+)", run.stderr)
        assert found is not None, run.stderr[-2000:]
        return {"instructions": float(found.group(1))}
    if kind == "raw":
        return {}
    got = json.loads(run.stdout.strip().splitlines()[-1])
    return {"import": got["imported"] - got["began"], "listed": got["listed"] - spawned}


def startup(rounds: int, folder: Path) -> None:
    once("native", folder), once("sdk", folder)  # warm the file cache
    rows: dict[str, list[dict[str, float]]] = {"native": [], "sdk": []}
    for index in range(rounds):
        for kind in ("native", "sdk") if index % 2 == 0 else ("sdk", "native"):
            rows[kind].append(once(kind, folder))
    print(f"start-up, cores: {os.cpu_count()}, rounds: {rounds} (medians), server: {SERVER.name}")
    for kind, runs in rows.items():
        imported = statistics.median(r["import"] for r in runs) * 1000
        listed = statistics.median(r["listed"] for r in runs) * 1000
        print(f"  {kind:7} import {imported:6.0f} ms   spawn -> tools listed {listed:6.0f} ms")
    ratio = statistics.median(s["listed"] / n["listed"] for s, n in zip(rows["sdk"], rows["native"], strict=True))
    print(f"  sdk / native (spawn -> tools listed, paired per round): {ratio:.2f}x")


def instructions(folder: Path, against: Path | None, low: int = 20, high: int = 220) -> None:
    per_call = {}
    runs = [("raw", BENCH.parent), ("native", BENCH.parent), ("sdk", BENCH.parent)]
    for kind, checkout in [*runs, *([("against", against)] if against is not None else [])]:
        what = "native" if kind == "against" else kind
        counts = [once(what, folder, n, counted=True, checkout=checkout)["instructions"] for n in (low, high)]
        per_call[kind] = (counts[1] - counts[0]) / (high - low)
    print(f"instructions per call in the client process (callgrind, {low} and {high} calls):")
    for kind, count in per_call.items():
        where = "bare" if kind == "raw" else "through the gate"
        print(f"  {kind:7} {where:17} {count / 1000:8.0f} k   {count / per_call['raw']:.2f}x raw")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", action="store_true", help="count instructions per call instead of start-up")
    parser.add_argument("--against", type=Path, help="with --calls: also another checkout's own stack (its src/)")
    parser.add_argument("--server", default="lean_server.py", help="basic_server.py speaks the 2026 era too")
    args = parser.parse_args()
    global SERVER
    SERVER = SERVERS / args.server
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KAIROX_HOME"] = tmp
        if args.calls:
            instructions(Path(tmp), args.against)
        else:
            startup(args.rounds, Path(tmp))


if __name__ == "__main__":
    main()
