"""The cost of telling whether a repository's history holds what ``fs.read`` rules hide.

A repository of COMMITS commits (each changing a few of 200 files in 20 folders) with a git-ignored ``.env`` that was
never committed, so its history stays visible; registries timed side by side per round: no read rule (baseline),
``fs.read(./.env)`` (a literal path: the walk looks at that path only), ``fs.read(**/.env)`` (any path may match: the
walk lists every path of every commit). Prints the first command of a fresh registry (the walk of the history) and
the median of ROUNDS more (answered from the kept answer), in milliseconds, with the ratio to the baseline.

Run: .venv/bin/python bench/git_history.py [COMMITS]
"""

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from read_masks import (
    registry,  # the same registry: built-in tools, deny rules on reading, the default sandbox
)

from kairox.tools import ToolCall

ROUNDS = 15
FRESH = 5
"""Fresh registries per case, for the first command's median."""
CASES = {
    "no read rule": (),
    "fs.read(./.env)": ("fs.read(./.env)",),
    "fs.read(**/.env)": ("fs.read(**/.env)",),
}
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def history(ws: Path, commits: int) -> None:
    """``commits`` commits through fast-import (quick to build), then checked out."""
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws, env=ENV, check=True)
    stream: list[str] = []
    for n in range(commits):
        stream.append(
            f"commit refs/heads/main\ncommitter b <b@example.invalid> {1_700_000_000 + n} +0000\ndata 3\nc{n % 10}\n"
        )
        if n == 0:
            stream.append("M 100644 inline .gitignore\ndata 5\n.env\n")
        for k in range(3):
            name, body = f"d{(n + k) % 20}/f{(n * 7 + k) % 200}.txt", f"{n}-{k}\n"
            stream.append(f"M 100644 inline {name}\ndata {len(body)}\n{body}")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=ws, env=ENV, input="".join(stream).encode(), check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=ws, env=ENV, check=True)
    (ws / ".env").write_text("SECRET=x\n")


async def main(commits: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "tmp").mkdir(parents=True)
        history(ws, commits)
        call = ToolCall(name="shell.exec", arguments={"command": "git status --short >/dev/null"})
        first: dict[str, list[float]] = {name: [] for name in CASES}
        warm: dict[str, list[float]] = {name: [] for name in CASES}
        for _ in range(FRESH):
            for name, patterns in CASES.items():
                built = await registry(ws, patterns)
                start = time.perf_counter()
                result = await built.call(call)
                first[name].append(time.perf_counter() - start)
                assert not result.is_error, result.text_content()
        registries = {name: await registry(ws, patterns) for name, patterns in CASES.items()}
        for built in registries.values():
            await built.call(call)  # the walk, once
        for _ in range(ROUNDS):
            for name, built in registries.items():
                start = time.perf_counter()
                result = await built.call(call)
                warm[name].append(time.perf_counter() - start)
                assert not result.is_error, result.text_content()
        base_first, base_warm = statistics.median(first["no read rule"]), statistics.median(warm["no read rule"])
        print(
            f"repository of {commits} commits, `git status` in the sandbox; first "
            f"command: median of {FRESH} fresh registries, warm: median of {ROUNDS}"
        )
        for name in CASES:
            cold, hot = statistics.median(first[name]), statistics.median(warm[name])
            print(
                f"{name:18} first {cold * 1e3:7.1f} ms  x{cold / base_first:5.2f}"
                f"   warm {hot * 1e3:7.1f} ms  x{hot / base_warm:5.2f}"
            )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2_000))
