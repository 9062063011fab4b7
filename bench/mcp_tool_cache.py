"""Session start -> first model request with 50 MCP servers x 40 tools: no servers, a cold cache, a warm cache
(servers started in the background, ``startup = "eager"``) and a warm cache with ``startup = "lazy"``; and how
many bytes of tool definitions the first request carries with tool search against all of them.

Each server is tests/servers/lean_server.py (stdio, the classic handshake, 40 tools). The clock runs from
entering ``open_session`` until the scripted model server (127.0.0.1) receives the first request. Ratios are
against the session with no MCP servers; each case is the median of a few runs in this process. The CPU time of
this process is shown beside the wall clock: on a busy machine it is the steadier of the two (the servers an
eager start spawns are other processes: their CPU is not in it, their competition for the cores is in the wall
clock).

``--process``: the session start a user sees instead. Each run is a fresh ``kairox run PROMPT`` process, timed from
its spawn until the scripted model server receives the first request (``time.monotonic()``, one clock for every
process of the machine): no MCP servers, a warm cache with ``startup = "eager"`` and one with ``startup = "lazy"``,
in interleaved rounds (a first one, not counted, fills the cache and writes the bytecode into a private cache);
medians and ratios against no servers, each ratio taken within its round.

Run: PYTHONPATH=src .venv/bin/python bench/mcp_tool_cache.py [SERVERS] [RUNS] [--process]
"""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.servers.model_server import ScriptedModelServer

LEAN = Path(__file__).resolve().parents[1] / "tests" / "servers" / "lean_server.py"


def servers_toml(count: int, startup: str) -> str:
    return "".join(
        f'[mcp_servers.s{i:02d}]\ncommand = "{sys.executable}"\n'
        f'args = ["{LEAN}", "--extra-tools", "39"]\nstartup = "{startup}"\n\n'
        for i in range(count)
    )


async def first_request(home: Path, ws: Path, servers: str, search: str) -> tuple[float, float, dict[str, Any]]:
    from kairox.agent import open_session

    seen: dict[str, Any] = {}

    def check(body: dict[str, Any]) -> None:
        seen.setdefault("at", time.perf_counter())
        seen.setdefault("cpu", time.process_time())
        seen.setdefault("body", body)

    with ScriptedModelServer("openai", [{"reply": "text", "text": "ok", "check": check}]) as server:
        (home / "kairox.toml").write_text(
            'model = "bench"\nmodel_provider = "scripted"\n'
            f'[model_providers.scripted]\nbase_url = "{server.base_url}"\n\n'
            f"[tools]\nsearch_threshold = {search}\n\n" + servers,
            encoding="utf-8",
        )
        started, cpu = time.perf_counter(), time.process_time()
        async with open_session(ws) as session:
            await session.run_turn("hello")
    return seen["at"] - started, seen["cpu"] - cpu, seen["body"]


async def main(count: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, ws = root / "home", root / "ws"
        home.mkdir()
        (ws / ".git").mkdir(parents=True)
        os.environ["KAIROX_HOME"] = str(home)
        os.environ["KAIROX_SYSTEM_CONFIG"] = str(home / "none.toml")
        os.environ.setdefault("OPENAI_API_KEY", "sk-bench")

        async def median(
            servers: str, search: str = "0.1", *, clear: bool = False
        ) -> tuple[tuple[float, float], dict[str, Any]]:
            times: list[float] = []
            cpus: list[float] = []
            body: dict[str, Any] = {}
            for _ in range(runs):
                if clear:
                    for entry in (home / "cache" / "mcp-tools").glob("*.json"):
                        entry.unlink()
                seconds, cpu, body = await first_request(home, ws, servers, search)
                times.append(seconds)
                cpus.append(cpu)
            return (statistics.median(times), statistics.median(cpus)), body

        await first_request(home, ws, "", "0.1")  # imports and first-use costs out of the way
        none, _ = await median("")
        cold, _ = await median(servers_toml(count, "eager"), clear=True)
        _, everything = await median(servers_toml(count, "eager"), '"off"')
        eager, deferred = await median(servers_toml(count, "eager"))
        lazy, _ = await median(servers_toml(count, "lazy"))
    all_bytes = len(json.dumps(everything["tools"]))
    first_bytes = len(json.dumps(deferred["tools"]))
    system = deferred["messages"][0]["content"]
    index = system[system.find("<deferred-tools>") :]
    print(f"{count} servers x 40 tools, median of {runs} runs; session start -> first model request")
    print("                                   wall clock           CPU of this process")
    for label, (wall, cpu) in (
        ("no MCP servers                 ", none),
        ("cold cache (waits for servers) ", cold),
        ("warm cache, startup = eager    ", eager),
        ("warm cache, startup = lazy     ", lazy),
    ):
        print(f"{label}: {wall * 1e3:8.1f} ms ({wall / none[0]:6.2f}x)  {cpu * 1e3:8.1f} ms ({cpu / none[1]:6.2f}x)")
    print(f"tool definitions, all sent     : {all_bytes:8d} bytes ({len(everything['tools'])} tools)")
    print(
        f"tool definitions, first request: {first_bytes:8d} bytes "
        f"({len(deferred['tools'])} tools) = {first_bytes / all_bytes:.1%}"
    )
    print(f"tool index in the system prompt: {len(index):8d} characters")


def process_run(root: Path, servers: str, env: dict[str, str]) -> float:
    """One ``kairox run`` from its spawn to the model server's first request (ms)."""
    home, ws = root / "home", root / "ws"
    received: list[float] = []

    def check(body: dict[str, Any]) -> None:
        received.append(time.monotonic())

    with ScriptedModelServer("openai", [{"reply": "text", "text": "ok", "check": check}], idle_timeout=60) as server:
        (home / "kairox.toml").write_text(
            'model = "bench"\nmodel_provider = "scripted"\n'
            f'[model_providers.scripted]\nbase_url = "{server.base_url}"\napi_key_env = "BENCH_API_KEY"\n\n'
            "[tools]\nsearch_threshold = 0.1\n\n" + servers,
            encoding="utf-8",
        )
        command = [
            sys.executable,
            "-c",
            "import sys; from kairox.cli import main; sys.argv[0] = 'kairox'; sys.exit(main())",
        ]
        started = time.monotonic()
        done = subprocess.run(
            [*command, "--workspace", str(ws), "run", "hello", "--json"],
            env={**env, "KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")},
            cwd=ws,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    if done.returncode != 0 or not received:
        raise SystemExit(f"kairox run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return (received[0] - started) * 1000


def process_main(count: int, rounds: int) -> None:
    cases = {
        "no MCP servers": "",
        "warm cache, startup = eager": servers_toml(count, "eager"),
        "warm cache, startup = lazy": servers_toml(count, "lazy"),
    }
    source = Path(__file__).resolve().parents[1] / "src"
    env = {k: v for k, v in os.environ.items() if k not in ("KAIROX_HOME", "PYTHONDONTWRITEBYTECODE")}
    env.setdefault("PYTHONPATH", str(source))
    env["BENCH_API_KEY"] = "sk-bench"
    times: dict[str, list[float]] = {label: [] for label in cases}
    ratios: dict[str, list[float]] = {label: [] for label in cases}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")  # byte-compiled, as an installed package runs
        for label in cases:
            (root / label / "home").mkdir(parents=True)
            (root / label / "ws" / ".git").mkdir(parents=True)
        for round_no in range(rounds + 1):
            figures = {label: process_run(root / label, servers, env) for label, servers in cases.items()}
            if round_no:  # the first round fills the caches and writes the bytecode
                for label, ms in figures.items():
                    times[label].append(ms)
                    ratios[label].append(ms / figures["no MCP servers"])
            print(f"round {round_no}{' (warm-up)' if not round_no else ''} done", file=sys.stderr)
    print(
        f"{count} servers x 40 tools, {rounds} rounds after a warm-up, interleaved; medians; "
        "`kairox run` spawn -> first model request"
    )
    for label in cases:
        print(f"{label:<28}: {statistics.median(times[label]):8.1f} ms ({statistics.median(ratios[label]):6.2f}x)")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--process"]
    servers_count = int(arguments[0]) if arguments else 50
    runs = int(arguments[1]) if len(arguments) > 1 else 3
    if "--process" in sys.argv[1:]:
        process_main(servers_count, runs)
    else:
        asyncio.run(main(servers_count, runs))
