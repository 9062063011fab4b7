"""An MCP tool call through Kairox's gate beside the peer clients of ``../shared/bench-peers``, and beside the same
call from a second source tree, as paired ratios.

Each round runs ``bench_worker.py calls`` once per case, in fresh processes, in a shuffled order: ``raw`` (a bare
JSON-lines client), ``mcp`` (the SDK's ``Client``), ``fastmcp``, ``kairox-gate`` from this tree and, with
``--against DIR``, ``kairox-gate`` from ``DIR/src``. A round's ratio divides a case's figure by that round's
``raw``; the medians of those ratios are printed, with the medians of p50 latency and client CPU per call.

The peers' venv is ``$PEER_VENV`` (set up by ``../shared/bench-peers/setup.sh``, Kairox installed in it
non-editable for its dependencies); each tree comes first on ``PYTHONPATH``.

Run: python bench/peer_calls.py [--rounds 7] [--server minimal|everything] [--against /tmp/main-tree]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT.parent / "shared" / "bench-peers"
METRICS = {"p50_us": "p50 µs", "client_cpu_us_per_call": "CPU µs/call"}


def measure(python: str, client: str, server: str, tree: Path | None, scratch: str) -> dict[str, float]:
    env = dict(os.environ, KAIROX_BENCH_DIR=scratch)
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    run = subprocess.run(
        [python, str(PEERS / "bench_worker.py"), "calls", "--client", client, "--server", server],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or not lines:
        sys.exit(f"{client} ({tree or 'peer'}) failed: {run.stderr[-1500:]}")
    row = json.loads(lines[-1])
    return {key: float(row[key]) for key in METRICS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--server", default="minimal", choices=["minimal", "everything"])
    parser.add_argument("--against", type=Path, help="a second source tree (a checkout or an unpacked git archive)")
    args = parser.parse_args()
    python = os.path.join(os.environ.get("PEER_VENV", str(ROOT / "build" / "peers" / "venv")), "bin", "python")
    cases: dict[str, tuple[str, Path | None]] = {
        "raw": ("raw", None), "mcp": ("mcp", None), "fastmcp": ("fastmcp", None), "kairox-gate": ("kairox-gate", ROOT),
    }  # fmt: skip
    if args.against is not None:
        cases["kairox-gate (against)"] = ("kairox-gate", args.against.resolve())
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds + 1):  # round 0 warms up (bytecode, the OS's caches)
            order = list(cases)
            random.shuffle(order)
            for name in order:
                client, tree = cases[name]
                figures = measure(python, client, args.server, tree, scratch)
                if round_:
                    runs[name].append(figures)
            print(f"round {round_} done", file=sys.stderr)
    print(f"{args.rounds} rounds, server {args.server}; medians, and ratios to raw paired by round")
    for name, rows in runs.items():
        cells = []
        for key, label in METRICS.items():
            value = statistics.median(row[key] for row in rows)
            ratio = statistics.median(row[key] / raw[key] for row, raw in zip(rows, runs["raw"], strict=True))
            cells.append(f"{label} {value:7.1f} ({ratio:.2f}x raw)")
        print(f"  {name:22} " + "   ".join(cells))
    if args.against is not None:
        for key, label in METRICS.items():
            pairs = zip(runs["kairox-gate"], runs["kairox-gate (against)"], strict=True)
            print(f"this tree over the other, {label}: {statistics.median(a[key] / b[key] for a, b in pairs):.2f}x")


if __name__ == "__main__":
    main()
