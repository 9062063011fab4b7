"""What importing Kairox costs a process that hosts an MCP server, against ``import json, asyncio``, as ratios.

Each round runs the baseline and then each measured import once, in fresh processes, interleaved (the machine's
noise hits all of them alike). A child times its own import with ``time.perf_counter`` (interpreter start-up
left out, ``-X importtime`` not used: it slows imports down unevenly); the process's wall time is reported too.
The ratio of a round is the import's time over that round's baseline. Prints medians.

``--against DIR`` measures a second source tree (a checkout or an unpacked ``git archive``, e.g. of main) the same
way, with ``DIR/src`` first on ``PYTHONPATH``, in the same rounds, and prints this tree's time over that one's.
Children write their bytecode to a private cache (warmed before the rounds), so both trees run byte-compiled,
as an installed package does, whatever ``PYTHONDONTWRITEBYTECODE`` says.

A floor row imports what the MCP host row cannot do without (asyncio, anyio, pydantic with one model): the
distance from it is Kairox's own share.

Run: .venv/bin/python bench/import_time.py [--rounds 20] [--against /tmp/main-tree]
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

IMPORTS: dict[str, str] = {
    "mcp host (config + McpClient)": "from kairox.config import McpServerConfig; from kairox.mcp import McpClient",
    "config resolver": "from kairox.config import resolve_config",
    "all of kairox.mcp": "from kairox.mcp import *",
}
BASELINE = "import json, asyncio"
FLOOR = (
    "import json, asyncio, anyio, anyio.streams.memory\n"
    "from pydantic import BaseModel, Field\n"
    "class Model(BaseModel, defer_build=True):\n    value: int = Field(default=1, ge=0)\n"
)
"""What no Kairox change can go below: the libraries the MCP host row needs (asyncio, anyio, one pydantic model)."""
CHILD = (
    "import time\nstarted = time.perf_counter()\nexec(compile({statement!r}, '<import>', 'exec'))\n"
    "took = time.perf_counter() - started\nimport json, sys\n"
    "print(json.dumps({{'took': took, 'kairox': getattr(sys.modules.get('kairox'), '__file__', None)}}))\n"
)


def run(statement: str, env: dict[str, str]) -> tuple[float, float, str | None]:
    """(import seconds measured in the child, process wall seconds, the kairox package the child imported)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(statement=statement)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    wall = time.perf_counter() - started
    said = json.loads(done.stdout)
    return said["took"], wall, said["kairox"]


def main(rounds: int, against: Path | None) -> None:
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cwd:
        os.chdir(cwd)  # no checkout on the path but the ones asked for
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        env["PYTHONPYCACHEPREFIX"] = cache
        trees = {"this": env}
        if against is not None:
            trees["against"] = {**env, "PYTHONPATH": str(against.resolve() / "src")}
        for tree, tree_env in trees.items():  # warm the file cache and write the bytecode
            for statement in (BASELINE, FLOOR, *IMPORTS.values()):
                _took, _wall, origin = run(statement, tree_env)
            print(f"{tree}: kairox from {Path(origin or '?').parent}")
        base: list[float] = []
        base_wall: list[float] = []
        floor: list[float] = []
        floor_wall: list[float] = []
        floor_ratio: list[float] = []
        took: dict[tuple[str, str], list[float]] = {(t, n): [] for t in trees for n in IMPORTS}
        wall: dict[tuple[str, str], list[float]] = {key: [] for key in took}
        ratio: dict[tuple[str, str], list[float]] = {key: [] for key in took}
        versus: dict[str, list[float]] = {name: [] for name in IMPORTS}
        for _ in range(rounds):
            baseline, baseline_wall, _origin = run(BASELINE, env)
            base.append(baseline)
            base_wall.append(baseline_wall)
            seconds, process, _origin = run(FLOOR, env)
            floor.append(seconds)
            floor_wall.append(process)
            floor_ratio.append(seconds / baseline)
            for name, statement in IMPORTS.items():
                for tree, tree_env in trees.items():
                    seconds, process, _origin = run(statement, tree_env)
                    took[tree, name].append(seconds)
                    wall[tree, name].append(process)
                    ratio[tree, name].append(seconds / baseline)
                if against is not None:
                    versus[name].append(took["this", name][-1] / took["against", name][-1])
    print(f"\n{rounds} rounds, interleaved; medians. import ms is timed inside the child, process ms around it")
    print(f"{'tree':<8}{'import':<34}{'import ms':>10}{'process ms':>12}{'÷ baseline':>12}")
    print(
        f"{'':<8}{BASELINE:<34}{statistics.median(base) * 1000:>10.1f}"
        f"{statistics.median(base_wall) * 1000:>12.1f}{'1.00x':>12}"
    )
    print(
        f"{'':<8}{'floor: asyncio, anyio, pydantic':<34}{statistics.median(floor) * 1000:>10.1f}"
        f"{statistics.median(floor_wall) * 1000:>12.1f}{statistics.median(floor_ratio):>11.2f}x"
    )
    for tree in trees:
        for name in IMPORTS:
            key = (tree, name)
            print(
                f"{tree:<8}{name:<34}{statistics.median(took[key]) * 1000:>10.1f}"
                f"{statistics.median(wall[key]) * 1000:>12.1f}{statistics.median(ratio[key]):>11.2f}x"
            )
    if against is not None:
        print("\nthis tree's import time over the other's, same round (median):")
        for name in IMPORTS:
            print(f"  {name:<34}{statistics.median(versus[name]):>6.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--against", type=Path, help="another source tree (with src/kairox) to measure beside this one")
    arguments = parser.parse_args()
    main(arguments.rounds, arguments.against)
