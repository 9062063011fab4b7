"""``kairox serve`` spawn -> ``tools/list`` answered, with ten upstream stdio servers configured, against the same
command with no upstream.

Each upstream is tests/servers/lean_server.py answering ``initialize`` only after ``--delay-init-ms`` (300 ms by
default: a server that imports a framework, or ``npx`` resolving a package), so a gateway that waits for its
upstreams before it lists shows it. Cases, run interleaved round by round, each a fresh process:

- ``none``: a trusted workspace with no MCP server (the baseline);
- ``cold``: ten upstreams, no cached tool lists (the home's cache emptied before each run);
- ``warm``: ten upstreams, their tool lists cached by an earlier run.

The client is the official SDK over stdio (``initialize``, then ``tools/list``); the clock runs from spawn until
the listing arrives, and the listing must hold every upstream's tool in the ``cold`` and ``warm`` cases.
Prints medians and the ratios against ``none`` (the goal: ``warm`` <= 1.5x).

Run: .venv/bin/python bench/serve_listing.py [--rounds 7] [--delay-ms 300] [--servers 10]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp import ClientSession

LEAN = Path(__file__).resolve().parents[1] / "tests" / "servers" / "lean_server.py"


def workspace(root: Path, servers: int, delay_ms: int) -> Path:
    ws = root / f"ws-{servers}"
    (ws / ".git").mkdir(parents=True)
    (ws / "kairox.toml").write_text(
        "".join(
            f'[mcp_servers.up{i:02d}]\ncommand = "{sys.executable}"\n'
            f'args = ["{LEAN}", "--delay-init-ms", "{delay_ms}"]\n\n'
            for i in range(servers)
        )
    )
    return ws


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "KAIROX_HOME": str(home)}


async def listed(ws: Path, home: Path, expect: int) -> float:
    """Seconds from spawn to the tool list, which must name ``expect`` upstream tools."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kairox", "--workspace", str(ws), "serve"], env=environment(home)
    )
    started = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            took = time.perf_counter() - started
    upstream = [t for t in tools if t.name.startswith("mcp__up")]
    if len(upstream) < expect:
        raise SystemExit(
            f"the listing held {len(upstream)} upstream tools, not {expect}: {[t.name for t in tools][:8]}"
        )
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--delay-ms", type=int, default=300)
    parser.add_argument("--servers", type=int, default=10)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        bare = workspace(root, 0, options.delay_ms)
        full = workspace(root, options.servers, options.delay_ms)
        for ws in (bare, full):
            subprocess.run(
                [sys.executable, "-m", "kairox", "--workspace", str(ws), "trust"],
                env=environment(home),
                check=True,
                capture_output=True,
            )
        cache = home / "cache"
        anyio.run(listed, full, home, 0)  # fills the cache (and the protocol-era memory) for the warm case
        anyio.run(listed, full, home, options.servers)
        times: dict[str, list[float]] = {"none": [], "cold": [], "warm": []}
        for _ in range(options.rounds):
            times["none"].append(anyio.run(listed, bare, home, 0))
            kept = root / "kept-cache"
            shutil.copytree(cache, kept, dirs_exist_ok=True)
            shutil.rmtree(cache / "mcp-tools", ignore_errors=True)
            times["cold"].append(anyio.run(listed, full, home, options.servers))
            shutil.rmtree(cache)
            shutil.move(kept, cache)
            times["warm"].append(anyio.run(listed, full, home, options.servers))
    base = statistics.median(times["none"])
    print(
        f"kairox serve, spawn -> tools/list answered; {options.servers}"
        f" upstreams answering initialize after {options.delay_ms} ms"
    )
    print(f"{'case':<8}{'median ms':>12}{'min ms':>10}{'ratio':>9}")
    for case, values in times.items():
        median = statistics.median(values)
        print(f"{case:<8}{median * 1000:>12.0f}{min(values) * 1000:>10.0f}{median / base:>8.2f}x")


if __name__ == "__main__":
    main()
