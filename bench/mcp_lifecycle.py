"""MCP start and stop of a whole process, paired against the raw JSON-lines client of the peer harness.

Runs the peer harness's ``bench_worker.py`` alternately with ``--client raw`` and ``--client kairox`` (fresh
processes, a raw run and a Kairox run per round) and prints medians of the paired ratios:

- spawn -> tools listed and spawn -> exit, on the minimal server and on server-everything (goals: ahead of every
  peer; exit <= 1.2x raw);
- ten servers whose initialize takes 300 ms against one such server, Kairox's manager (goal: <= 1.1x);
- a server that never answers initialize, ``startup_timeout_sec = 1``: spawn -> Failed, against the timeout
  (goal: <= timeout + 0.2 s).

Needs the peer harness (``PEER_BENCH``, default ``../shared/bench-peers`` beside the checkout) and a Python that
has Kairox installed beside the harness requirements (``PEER_PYTHON``, default this interpreter); ``PEER_NPM``
as the harness wants it for server-everything. Run: ``python bench/mcp_lifecycle.py [--rounds 7]``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = Path(os.environ.get("PEER_BENCH") or ROOT.parent / "shared" / "bench-peers")
PYTHON = os.environ.get("PEER_PYTHON") or sys.executable
SERVERS = ROOT / "tests" / "servers"


def worker(argv: list[str], client: str) -> dict[str, float]:
    began = time.monotonic()
    proc = subprocess.run(
        [PYTHON, str(HARNESS / "bench_worker.py"), *argv, "--client", client],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=HARNESS,
        timeout=120,
    )
    ended = time.monotonic()
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{client} {argv}: rc={proc.returncode} {proc.stderr[-800:]}")
    out: dict[str, float] = json.loads(lines[-1])
    out["listed"] = out.get("t_listed", 0.0) - began
    out["exit"] = ended - began
    return out


def median_ratio(pairs: list[tuple[float, float]]) -> str:
    ratio = statistics.median(a / b for a, b in pairs)
    return f"{statistics.median(a for a, _ in pairs) * 1000:7.0f} ms vs {statistics.median(b for _, b in pairs) * 1000:6.0f} ms  {ratio:5.2f}x"


def startup(rounds: int) -> None:
    for server in ("minimal", "everything"):
        listed: list[tuple[float, float]] = []
        exited: list[tuple[float, float]] = []
        for _ in range(rounds):
            raw = worker(["startup", "--server", server], "raw")
            kx = worker(["startup", "--server", server], "kairox")
            listed.append((kx["listed"], raw["listed"]))
            exited.append((kx["exit"], raw["exit"]))
        print(f"{server:10} spawn->listed kairox vs raw: {median_ratio(listed)}")
        print(f"{server:10} spawn->exit   kairox vs raw: {median_ratio(exited)}")


def multi(rounds: int) -> None:
    """The harness times from "start connecting" (after imports); Kairox imports the SDK while its servers boot,
    so spawn -> all listed is printed too."""
    after_import: list[tuple[float, float]] = []
    from_spawn: list[tuple[float, float]] = []
    raw_pairs: list[tuple[float, float]] = []
    for _ in range(rounds):
        one = worker(["multi", "--variant", "kairox-manager", "--servers", "1"], "kairox")
        ten = worker(["multi", "--variant", "kairox-manager", "--servers", "10"], "kairox")
        raw_one = worker(["multi", "--variant", "tasks", "--servers", "1"], "raw")
        raw_ten = worker(["multi", "--variant", "tasks", "--servers", "10"], "raw")
        after_import.append((ten["all_listed_s"], one["all_listed_s"]))
        from_spawn.append((ten["all_listed_s"] + ten["import_s"], one["all_listed_s"] + one["import_s"]))
        raw_pairs.append((raw_ten["all_listed_s"], raw_one["all_listed_s"]))
    print(f"10 slow servers vs 1, kairox manager, after imports: {median_ratio(after_import)}")
    print(f"10 slow servers vs 1, kairox manager, from import:   {median_ratio(from_spawn)}")
    print(f"10 slow servers vs 1, raw client tasks:              {median_ratio(raw_pairs)}")


FAILING = """
import sys, time, anyio
from pathlib import Path
from kairox.config import McpServerConfig
from kairox.mcp import McpServerFailed, McpServerManager, McpServerStarting

if sys.argv[3] == "warm":
    import mcp  # noqa: F401  (a host that already loaded the SDK: its one import is not a server's start-up)

class Clock:
    def __init__(self):
        self.started, self.failed = {}, {}

    def emit(self, event):
        if isinstance(event, McpServerStarting):
            self.started.setdefault(event.server, time.monotonic())
        elif isinstance(event, McpServerFailed):
            self.failed[event.server] = time.monotonic()

async def main(workspace, servers):
    python = sys.executable
    configs = {
        "hang": McpServerConfig(command=python, args=[servers + "/hang_initialize.py"], startup_timeout_sec=1.0),
        "probe-then-hang": McpServerConfig(
            command=python, args=[servers + "/lean_server.py", "--exit-on-discover", "--delay-init-ms", "60000"],
            startup_timeout_sec=1.0,
        ),
        "stubborn": McpServerConfig(
            command=python,
            args=["-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"],
            startup_timeout_sec=1.0,
        ),
    }
    clock = Clock()
    async with McpServerManager(configs, workspace=Path(workspace), events=clock) as manager:
        assert all(client.lifecycle.reason for client in manager.clients.values())
    print(" ".join(f"{name}={clock.failed[name] - clock.started[name]:.3f}" for name in configs))

anyio.run(main, sys.argv[1], sys.argv[2])
"""


def failing(rounds: int) -> None:
    """Servers that never finish the handshake, ``startup_timeout_sec = 1``: from the start of each to its Failed
    event. Warm: the host loaded the SDK before; cold: the first connection of the process imports it, and
    that time is given back to the start-up clock."""
    for mode in ("warm", "cold"):
        settled: dict[str, list[float]] = {}
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(rounds):
                env = {**os.environ, "KAIROX_HOME": tmp}
                proc = subprocess.run(
                    [PYTHON, "-c", FAILING, tmp, str(SERVERS), mode],
                    capture_output=True, text=True, env=env, timeout=60, check=True,
                )
                for part in proc.stdout.split():
                    name, value = part.split("=")
                    settled.setdefault(name, []).append(float(value))
        for name, values in settled.items():
            value = statistics.median(values)
            print(f"{mode:4} {name:16} startup_timeout_sec = 1: Failed {value * 1000:5.0f} ms after its start ({value - 1.0:+.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="startup,multi,failing")
    args = parser.parse_args()
    print(f"harness: {HARNESS}, python: {PYTHON}, rounds: {args.rounds} (medians of paired ratios)")
    for part in args.only.split(","):
        {"startup": startup, "multi": multi, "failing": failing}[part](args.rounds)


if __name__ == "__main__":
    main()
