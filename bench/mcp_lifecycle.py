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
as the harness wants it for server-everything. Run: ``python bench/mcp_lifecycle.py [--rounds 7]``; with
``--baseline DIR`` (a byte-compiled ``src`` of another revision) the same rounds also run that revision.
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


BASELINE: str | None = None
"""``--baseline SRC``: a folder holding another ``kairox`` package (e.g. the main branch's ``src``, byte-compiled),
run on ``PYTHONPATH`` in the same rounds."""


def environment(baseline: bool) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if baseline:
        assert BASELINE is not None
        env["PYTHONPATH"] = BASELINE
    return env


def worker(argv: list[str], client: str, baseline: bool = False) -> dict[str, float]:
    began = time.monotonic()
    proc = subprocess.run(
        [PYTHON, str(HARNESS / "bench_worker.py"), *argv, "--client", client],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=HARNESS,
        timeout=120,
        env=environment(baseline),
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
    return (
        f"{statistics.median(a for a, _ in pairs) * 1000:7.0f} ms vs "
        f"{statistics.median(b for _, b in pairs) * 1000:6.0f} ms  {ratio:5.2f}x"
    )


def startup(rounds: int) -> None:
    for server in ("minimal", "everything"):
        rows: dict[str, list[tuple[float, float]]] = {}
        for _ in range(rounds):
            raw = worker(["startup", "--server", server], "raw")
            runs = {"kairox": worker(["startup", "--server", server], "kairox")}
            if BASELINE:
                runs["baseline"] = worker(["startup", "--server", server], "kairox", baseline=True)
            for name, run in runs.items():
                rows.setdefault(f"spawn->listed {name:8} vs raw", []).append((run["listed"], raw["listed"]))
                rows.setdefault(f"spawn->exit   {name:8} vs raw", []).append((run["exit"], raw["exit"]))
        for label, pairs in sorted(rows.items()):
            print(f"{server:10} {label}: {median_ratio(pairs)}")


def multi(rounds: int) -> None:
    """The harness times from "start connecting" (after imports); Kairox imports the SDK while its servers boot,
    so spawn -> all listed is printed too."""
    after_import: list[tuple[float, float]] = []
    from_spawn: list[tuple[float, float]] = []
    raw_pairs: list[tuple[float, float]] = []
    base_after: list[tuple[float, float]] = []
    base_from: list[tuple[float, float]] = []
    for _ in range(rounds):
        one = worker(["multi", "--variant", "kairox-manager", "--servers", "1"], "kairox")
        ten = worker(["multi", "--variant", "kairox-manager", "--servers", "10"], "kairox")
        raw_one = worker(["multi", "--variant", "tasks", "--servers", "1"], "raw")
        raw_ten = worker(["multi", "--variant", "tasks", "--servers", "10"], "raw")
        after_import.append((ten["all_listed_s"], one["all_listed_s"]))
        from_spawn.append((ten["all_listed_s"] + ten["import_s"], one["all_listed_s"] + one["import_s"]))
        raw_pairs.append((raw_ten["all_listed_s"], raw_one["all_listed_s"]))
        if BASELINE:
            b_one = worker(["multi", "--variant", "kairox-manager", "--servers", "1"], "kairox", baseline=True)
            b_ten = worker(["multi", "--variant", "kairox-manager", "--servers", "10"], "kairox", baseline=True)
            base_after.append((b_ten["all_listed_s"], b_one["all_listed_s"]))
            base_from.append((b_ten["all_listed_s"] + b_ten["import_s"], b_one["all_listed_s"] + b_one["import_s"]))
    print(f"10 slow servers vs 1, kairox   after imports: {median_ratio(after_import)}")
    print(f"10 slow servers vs 1, kairox   from import:   {median_ratio(from_spawn)}")
    if BASELINE:
        print(f"10 slow servers vs 1, baseline after imports: {median_ratio(base_after)}")
        print(f"10 slow servers vs 1, baseline from import:   {median_ratio(base_from)}")
    print(f"10 slow servers vs 1, raw client tasks:       {median_ratio(raw_pairs)}")


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
        assert all(client.reason for client in manager.clients.values())
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
                for which in ("kairox", "baseline") if BASELINE else ("kairox",):
                    env = {**environment(which == "baseline"), "KAIROX_HOME": tmp}
                    proc = subprocess.run(
                        [PYTHON, "-c", FAILING, tmp, str(SERVERS), mode],
                        capture_output=True,
                        text=True,
                        env=env,
                        timeout=60,
                        check=True,
                    )
                    for part in proc.stdout.split():
                        name, value = part.split("=")
                        settled.setdefault(f"{which:8} {mode:4} {name:16}", []).append(float(value))
        for label, values in sorted(settled.items()):
            value = statistics.median(values)
            print(
                f"{label} startup_timeout_sec = 1: Failed {value * 1000:5.0f} ms after its start ({value - 1.0:+.2f} s)"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="startup,multi,failing")
    parser.add_argument("--baseline", help="a folder with another kairox package, run beside this one")
    args = parser.parse_args()
    global BASELINE
    BASELINE = args.baseline
    print(f"harness: {HARNESS}, python: {PYTHON}, rounds: {args.rounds} (medians of paired ratios)")
    for part in args.only.split(","):
        {"startup": startup, "multi": multi, "failing": failing}[part](args.rounds)


if __name__ == "__main__":
    main()
