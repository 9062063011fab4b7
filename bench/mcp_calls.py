"""Per-call latency of an MCP tool call: through Kairox's ToolRegistry, with the SDK's Client directly, and with a
bare JSON-lines client on pipes. Same server (tests/servers/basic_server.py), same ``echo`` call, medians.

The registry path adds the gate (argument validation, policy, events, output cap) and the McpClient (idle
timeout scope, result mapping). Run: .venv/bin/python bench/mcp_calls.py
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from kairox.config import McpServerConfig, resolve_config
from kairox.mcp import McpClient, McpToolAdapter
from kairox.policy import NonInteractiveApprover
from kairox.registry import build_registry
from kairox.tools import ToolCall
from mcp import Client, StdioServerParameters

SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "basic_server.py"
CALLS = 300
WARMUP = 30


async def through_registry(workspace: Path) -> list[float]:
    resolved = resolve_config(workspace, cli_overrides=['policy.rules.allow=["mcp__bench__*"]'])
    server = McpServerConfig(command=sys.executable, args=[str(SERVER)], protocol_mode="legacy")
    async with McpClient("bench", server, workspace=workspace, home=resolved.home) as client:
        registry = await build_registry(resolved, approver=NonInteractiveApprover())
        await registry.add_provider(McpToolAdapter(client))
        times = []
        for _ in range(WARMUP + CALLS):
            began = time.perf_counter()
            result = await registry.call(ToolCall(name="mcp__bench__echo", arguments={"message": "hi"}))
            times.append(time.perf_counter() - began)
            assert result.text_content() == "hi", result
    return times[WARMUP:]


async def with_sdk_client() -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        times = []
        for _ in range(WARMUP + CALLS):
            began = time.perf_counter()
            result = await client.call_tool("echo", {"message": "hi"})
            times.append(time.perf_counter() - began)
            assert result.content[0].text == "hi"  # type: ignore[union-attr]
    return times[WARMUP:]


def with_bare_pipes() -> list[float]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def answer(message_id: int) -> dict[str, object]:
        assert proc.stdout is not None
        while True:
            reply = json.loads(proc.stdout.readline())
            if reply.get("id") == message_id:
                return reply

    send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bare", "version": "1"},
            },
        }
    )
    answer(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    try:
        for i in range(1, WARMUP + CALLS + 1):
            began = time.perf_counter()
            send(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": "hi"}},
                }
            )
            reply = answer(i)
            times.append(time.perf_counter() - began)
            assert reply["result"]["content"][0]["text"] == "hi"  # type: ignore[index]
    finally:
        proc.stdin.close()
        proc.wait(5)
    return times[WARMUP:]


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KAIROX_HOME"] = str(Path(tmp) / "home")
        workspace = Path(tmp) / "ws"
        (workspace / ".git").mkdir(parents=True)
        registry = statistics.median(await through_registry(workspace))
        sdk = statistics.median(await with_sdk_client())
        bare = statistics.median(with_bare_pipes())
    print(f"median per call over {CALLS} calls (echo, stdio, classic handshake):")
    print(f"  bare JSON lines on pipes : {bare * 1e6:8.0f} us")
    print(f"  SDK Client directly      : {sdk * 1e6:8.0f} us   {sdk / bare:.2f}x bare")
    print(
        f"  Kairox ToolRegistry      : {registry * 1e6:8.0f} us  "
        f" {registry / sdk:.2f}x SDK, {registry / bare:.2f}x bare"
    )


if __name__ == "__main__":
    anyio.run(main)
