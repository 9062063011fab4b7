"""Where the imports of ``kairox run`` go, and what a model client costs to import, as ratios.

1. Model clients, each in fresh processes that loaded the agent package first, interleaved, timed inside the child
   (``time.perf_counter`` around the import): ``httpx`` as Kairox loads it (without its command-line module),
   plain ``import httpx``, and the official ``openai`` and ``anthropic`` SDKs when they are installed. Ratios are
   over Kairox's ``httpx``.
2. One ``kairox run`` per wire (the scenario of ``agent_start.py``: a scripted model on 127.0.0.1, one stdio MCP
   server, four tool calls) under ``-X importtime``: the self time of every module summed by package (Kairox's
   split by subpackage), medians over the rounds, each as a share of the whole. ``-X importtime`` slows imports
   down unevenly, and the thread that loads ``httpx`` while the servers start inflates what runs beside it, so
   read the shares, not the milliseconds.

Run: .venv/bin/python bench/import_breakdown.py [--rounds 5]
"""

import argparse
import collections
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_start

CLIENTS = {
    "httpx as Kairox loads it": "_http.import_httpx()",
    "import httpx": "import httpx",
    "import openai": "import openai",
    "import anthropic": "import anthropic",
}
CHILD = (
    "import time\nimport kairox.agent._http as _http\n"
    "t = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)\n"
)
"""Each child has loaded the agent package first (pydantic, anyio, ssl...: what a session has loaded anyway), so a
row is what that client adds to a Kairox process."""
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "kairox" and len(parts) > 1 else parts[0]


def client_costs(rounds: int, env: dict[str, str]) -> None:
    wanted = {
        name: s
        for name, s in CLIENTS.items()
        if not s.startswith("import ") or importlib.util.find_spec(s.split()[1]) is not None
    }
    took: dict[str, list[float]] = {name: [] for name in wanted}
    for round_no in range(rounds + 1):
        for name, statement in wanted.items():
            done = subprocess.run(
                [sys.executable, "-c", CHILD.format(statement=statement)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            )
            if round_no:
                took[name].append(float(done.stdout.split()[-1]))
    base = statistics.median(took["httpx as Kairox loads it"])
    print(f"\nmodel client imports, {rounds} rounds, fresh processes, medians")
    print(f"{'':<28}{'ms':>8}{'÷ Kairox httpx':>16}")
    for name, values in took.items():
        print(f"{name:<28}{statistics.median(values) * 1000:>8.0f}{statistics.median(values) / base:>15.2f}x")


def run_breakdown(rounds: int, wire: str, env: dict[str, str], root: Path) -> None:
    wrapper = root / "wrapper.py"
    wrapper.write_text(
        agent_start.MCP_WRAPPER.format(server=str(agent_start.ROOT / "tests" / "servers" / "lean_server.py"))
    )
    sums: dict[str, list[float]] = collections.defaultdict(list)
    totals: list[float] = []
    for round_no in range(rounds + 1):
        traced = {**env, "PYTHONPROFILEIMPORTTIME": "1"}
        kept: list[str] = []
        agent_start.run_kairox(agent_start.ROOT, wire, root / f"{wire}-{round_no}", wrapper, traced, kept)
        stderr = kept[0]
        self_us: dict[str, int] = collections.Counter()
        for line in stderr.splitlines():
            match = LINE.match(line)
            if match:
                self_us[package(match.group(4))] += int(match.group(1))
        if round_no:
            totals.append(sum(self_us.values()))
            for name in set(self_us) | set(sums):
                sums[name].append(self_us.get(name, 0))
    total = statistics.median(totals)
    print(
        f"\nkairox run, {wire} wire: self time of the imports by package, "
        f"{rounds} rounds (median of {total / 1000:.0f} ms under -X importtime)"
    )
    rows = sorted(((statistics.median(v), k) for k, v in sums.items()), reverse=True)[:25]
    for value, name in rows:
        print(f"  {name:<28}{value / 1000:>8.1f} ms{value / total:>8.1%}")
    loaded = [
        name
        for name in ("openai", "anthropic", "jsonschema", "rich", "click", "kairox.catalog")
        if name in sums and statistics.median(sums[name])
    ]
    print(f"  loaded of openai, anthropic, jsonschema, rich, click, kairox.catalog: {', '.join(loaded) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wires", default="openai,anthropic")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("KAIROX_HOME", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(agent_start.ROOT / "src")
    with tempfile.TemporaryDirectory() as tmp:
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        client_costs(args.rounds, env)
        for wire in args.wires.split(","):
            run_breakdown(args.rounds, wire, env, Path(tmp))


if __name__ == "__main__":
    main()
