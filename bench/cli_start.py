"""How long ``kairox`` takes to answer without doing any work, against the interpreter alone, as ratios.

Each round runs ``python -c pass`` and then each measured command once, in fresh processes, interleaved (the
machine's noise hits all of them alike); the ratio of a round is the command's time over that round's
``python -c pass``. Prints the median time and the median ratio per command. The commands run as
``python -m kairox ...`` under the same interpreter, so the console-script wrapper does not count.

Run: .venv/bin/python bench/cli_start.py [--rounds 15]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS: dict[str, list[str]] = {
    "kairox --help": ["-m", "kairox", "--help"],
    "kairox --version": ["-m", "kairox", "--version"],
    "kairox tools list --help": ["-m", "kairox", "tools", "list", "--help"],
}
BASELINE = ["-c", "pass"]


def timed(argv: list[str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, *argv], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60
    )
    return time.perf_counter() - started


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as cwd:  # no workspace around: nothing of this checkout is read
        os.environ.pop("KAIROX_HOME", None)
        for argv in (BASELINE, *COMMANDS.values()):  # warm the file cache
            timed(argv, cwd)
        base: list[float] = []
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        ratios: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(rounds):
            baseline = timed(BASELINE, cwd)
            base.append(baseline)
            for name, argv in COMMANDS.items():
                took = timed(argv, cwd)
                times[name].append(took)
                ratios[name].append(took / baseline)
    print(f"{rounds} rounds, interleaved; medians")
    print(f"{'command':<28}{'ms':>8}{'÷ python -c pass':>20}")
    print(f"{'python -c pass':<28}{statistics.median(base) * 1000:>8.1f}{'1.00x':>20}")
    for name in COMMANDS:
        print(f"{name:<28}{statistics.median(times[name]) * 1000:>8.1f}{statistics.median(ratios[name]):>19.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    main(parser.parse_args().rounds)
