"""A long fuzz run over every loader of outside input: 10^5 inputs by default, spread evenly over the loaders of
``tests/fuzz/_loaders.py`` (TOML configuration, skill frontmatter, plugin.json, hooks.json, a plugin's
.mcp.json, marketplace.json, .mcp.json, MCP tools/list pages and call results, LSP replies, DAP replies and
Content-Length framing).

Each input runs the loader's check: a crash is any exception (a loader that raised, or a check that found an
input turned into something other than data and diagnostics); a hang is an input that took longer than
``--hang-sec`` (default 10 s). Prints, per loader and in total: inputs, crashes, hangs, and the slowest input's
time; the first few crashes are printed with their input. Exit status 1 when there was a crash or a hang.

Run: .venv/bin/python bench/fuzz_long.py [--inputs 100000] [--hang-sec 10] [--only NAME,...] [--jobs N]
"""

import argparse
import multiprocessing
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, Phase, given, settings
from tests.fuzz._loaders import LOADERS, Loader


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang


@dataclass
class Tally:
    inputs: int = 0
    crashes: int = 0
    hangs: int = 0
    slowest: float = 0.0
    examples: list[str] = field(default_factory=list)


def run_loader(loader: Loader, count: int, scratch: Path, hang_sec: float) -> Tally:
    tally = Tally()

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(loader.inputs)
    def one(value: Any) -> None:
        tally.inputs += 1
        started = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, hang_sec)
        try:
            loader.check(value, scratch / loader.name)
        except _Hang:
            tally.hangs += 1
            tally.examples.append(f"hang ({hang_sec:g} s): {value!r:.300}")
        except Exception:
            tally.crashes += 1
            if len(tally.examples) < 3:
                tally.examples.append(f"crash: {value!r:.300}\n{traceback.format_exc(limit=4)}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        tally.slowest = max(tally.slowest, time.perf_counter() - started)

    one()
    return tally


def _worker(job: tuple[str, int, str, float]) -> tuple[str, Tally]:
    name, count, folder, hang_sec = job
    signal.signal(signal.SIGALRM, _alarm)
    loader = next(loader for loader in LOADERS if loader.name == name)
    return name, run_loader(loader, count, Path(folder), hang_sec)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--hang-sec", type=float, default=10.0)
    parser.add_argument("--only", default=None, help="comma-separated loader names (see tests/fuzz/_loaders.py)")
    parser.add_argument("--jobs", type=int, default=1, help="loaders run in this many processes at once")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    loaders = [loader for loader in LOADERS if wanted is None or loader.name in wanted]
    per_loader = max(1, -(-args.inputs // len(loaders)))
    total = Tally()
    started = time.perf_counter()
    print(f"{'loader':<20} {'inputs':>8} {'crashes':>8} {'hangs':>6} {'slowest':>9}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kairox-fuzz-") as folder, multiprocessing.Pool(args.jobs) as pool:
        jobs = [(loader.name, per_loader, folder, args.hang_sec) for loader in loaders]
        for name, tally in pool.imap_unordered(_worker, jobs):
            print(
                f"{name:<20} {tally.inputs:>8} {tally.crashes:>8} {tally.hangs:>6} {tally.slowest:>8.3f}s", flush=True
            )
            for example in tally.examples:
                print("    " + example.replace("\n", "\n    "), flush=True)
            total.inputs += tally.inputs
            total.crashes += tally.crashes
            total.hangs += tally.hangs
            total.slowest = max(total.slowest, tally.slowest)
    elapsed = time.perf_counter() - started
    print(f"{'total':<20} {total.inputs:>8} {total.crashes:>8} {total.hangs:>6} {total.slowest:>8.3f}s")
    print(f"inputs={total.inputs} crashes={total.crashes} hangs={total.hangs} in {elapsed:.0f} s")
    return 1 if total.crashes or total.hangs else 0


if __name__ == "__main__":
    sys.exit(main())
