"""Per-call cost of ``kairox proxy`` against the upstream directly, as a ratio.

The upstream is the conformance fixture (tests/servers/conformance_fixture_server.py) over stdio. The same client
(the official SDK's, handshake era, over stdio) calls ``test_simple_text`` N times on the fixture started directly
and on ``kairox proxy -- python fixture`` (an allow rule for ``mcp__fixture__*`` in a temporary Kairox home, so
each call passes the gate, is forwarded and is one audit line). Rounds alternate between the two; the median of
each round's per-call mean is reported, with the proxy's added cost and the ratio.

Run: .venv/bin/python bench/proxy_calls.py [--calls 200] [--rounds 5]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "servers" / "conformance_fixture_server.py"


async def per_call_ms(command: list[str], env: dict[str, str], calls: int) -> float:
    server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with Client(server, mode="legacy") as client:
        await client.call_tool("test_simple_text", {})  # warm: the first call lists the tools
        started = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool("test_simple_text", {})
            assert not result.is_error, result
        return (time.perf_counter() - started) * 1000 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        (workspace / ".git").mkdir(parents=True)
        home.mkdir()
        (home / "kairox.toml").write_text('[policy.rules]\nallow = ["mcp__fixture__*"]\n')
        env = {**os.environ, "KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")}
        direct = [sys.executable, str(FIXTURE)]
        proxied = [sys.executable, "-m", "kairox", "--workspace", str(workspace), "proxy", "--name", "fixture", "--"]
        figures: dict[str, list[float]] = {"direct": [], "proxy": []}
        for _ in range(options.rounds):
            figures["direct"].append(anyio.run(per_call_ms, direct, env, options.calls))
            figures["proxy"].append(anyio.run(per_call_ms, [*proxied, *direct], env, options.calls))
        lines = (home / "logs" / "proxy.jsonl").read_text().splitlines()
    direct_ms, proxy_ms = (statistics.median(figures[k]) for k in ("direct", "proxy"))
    report = {
        "calls_per_round": options.calls,
        "rounds": options.rounds,
        "direct_ms_per_call": round(direct_ms, 3),
        "proxy_ms_per_call": round(proxy_ms, 3),
        "added_ms_per_call": round(proxy_ms - direct_ms, 3),
        "ratio": round(proxy_ms / direct_ms, 2),
        "audit_lines": len(lines),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
