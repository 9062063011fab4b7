"""50 concurrent MCP clients x 100 calls over Streamable HTTP on loopback: through ``kairox serve --http`` (the
upstream behind it is tests/servers/basic_server.py over stdio) against the same server served over HTTP directly.

Prints errors, p50 and p99 per call and their ratios. Everything binds 127.0.0.1, and stops by itself (a hard
deadline ends a stuck run). Run: .venv/bin/python bench/gateway.py [--clients N] [--calls N]
"""

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client

from mcp import Client

SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "basic_server.py"
DEADLINE_SEC = 900


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise SystemExit(f"nothing listened on 127.0.0.1:{port} within {timeout:g}s")


@contextlib.contextmanager
def process(
    args: list[str], port: int, *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Iterator[None]:
    proc = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    try:
        wait_for_port(port, proc)
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.asynccontextmanager
async def connect(url: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=300)) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


async def load(url: str, tool: str, clients: int, calls: int) -> tuple[list[float], int]:
    times: list[float] = []
    errors = 0

    async def one_client() -> None:
        nonlocal errors
        async with connect(url) as client:
            for index in range(calls):
                began = time.perf_counter()
                try:
                    result = await client.call_tool(tool, {"message": f"call {index}"})
                    failed = result.is_error
                except Exception:
                    failed = True
                times.append(time.perf_counter() - began)
                errors += failed

    with anyio.fail_after(DEADLINE_SEC):
        async with anyio.create_task_group() as tasks:
            for _ in range(clients):
                tasks.start_soon(one_client)
    return times, errors


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    results: dict[str, tuple[list[float], int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        direct_port = free_port()
        with process([sys.executable, str(SERVER), "--http-port", str(direct_port)], direct_port):
            results["direct"] = anyio.run(load, f"http://127.0.0.1:{direct_port}/mcp", "echo", args.clients, args.calls)

        workspace, home = root / "ws", root / "home"
        (workspace / ".git").mkdir(parents=True)
        (workspace / "kairox.toml").write_text(
            f"[mcp_servers.basic]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(SERVER))}]\n\n"
            '[policy.rules]\nallow = ["mcp__basic__*"]\n'
        )
        env = {**os.environ, "KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")}
        subprocess.run(
            [sys.executable, "-m", "kairox", "trust"],
            cwd=workspace,
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        gateway_port = free_port()
        serve = [
            sys.executable,
            "-m",
            "kairox",
            "--workspace",
            str(workspace),
            "serve",
            "--http",
            f"127.0.0.1:{gateway_port}",
        ]
        with process(serve, gateway_port, env=env, cwd=workspace):
            results["gateway"] = anyio.run(
                load, f"http://127.0.0.1:{gateway_port}/mcp", "mcp__basic__echo", args.clients, args.calls
            )
        audited = len((home / "logs" / "gateway.jsonl").read_text().splitlines())

    print(f"{args.clients} clients x {args.calls} calls over Streamable HTTP on 127.0.0.1 (echo)")
    for name, (times, errors) in results.items():
        print(
            f"  {name:8} calls {len(times):5}  errors {errors}  p50 {percentile(times, 0.5) * 1000:7.2f} ms  "
            f"p99 {percentile(times, 0.99) * 1000:7.2f} ms  mean {statistics.fmean(times) * 1000:7.2f} ms"
        )
    direct, gateway = results["direct"][0], results["gateway"][0]
    print(
        f"  gateway / direct: p50 x{percentile(gateway, 0.5) / percentile(direct, 0.5):.2f}"
        f", p99 x{percentile(gateway, 0.99) / percentile(direct, 0.99):.2f}"
    )
    print(f"  audit lines written by the gateway: {audited}")


if __name__ == "__main__":
    main()
