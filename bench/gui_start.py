"""``kairox gui`` start-up and memory, measured in one run beside ``kairox --version``.

1. Start -> first page served: from starting ``kairox gui --no-browser`` to the first answer of ``GET /?token=``
   (the built page, or the 503 saying how to build it when ``make`` has not built ``ui/``), against the time of
   ``kairox --version`` (the interpreter alone, nearly) and ``kairox config paths`` (the command line toolkit and
   the configuration resolved, which the GUI needs too).
2. Memory with the GUI open: the resident set of the server process after the page, the event stream and the
   page's first API requests (state, servers, skills, plugins, catalog), and of its children (MCP servers).

Both on an empty workspace, and on the example workspace (trusted: its two MCP servers run).

Run: .venv/bin/python bench/gui_start.py [--rounds N]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "workspace"
URL = re.compile(r"Kairox GUI: (http://127\.0\.0\.1:\d+)/\?token=(\S+)")
PAGE_REQUESTS = ("/api/state", "/api/servers", "/api/skills", "/api/plugins", "/api/catalog")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                found += [int(entry.name), *descendants(int(entry.name))]
    return found


def command_time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def gui_run(
    kairox: list[str], workspace: Path, env: dict[str, str], measure_memory: bool
) -> tuple[float, int, dict[str, int]]:
    start = time.perf_counter()
    process = subprocess.Popen(
        [*kairox, "--workspace", str(workspace), "gui", "--no-browser"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        match = URL.search(process.stdout.readline())
        assert match, "kairox gui printed no URL"
        base, token = match.groups()
        with httpx.Client(base_url=base, timeout=120) as browser:
            page = browser.get(f"/?token={token}")
            served = time.perf_counter() - start
            if not measure_memory:
                return served, page.status_code, {}
            stream_open = threading.Event()
            stop = threading.Event()

            def listen() -> None:  # the page's event stream stays open while the memory is read
                try:
                    with browser.stream("GET", "/api/events") as stream:
                        for _ in stream.iter_lines():
                            stream_open.set()
                            if stop.is_set():
                                return
                except httpx.HTTPError:  # the server stopped first
                    pass

            listener = threading.Thread(target=listen, daemon=True)
            listener.start()
            stream_open.wait(30)
            for path in PAGE_REQUESTS:
                browser.get(path)
            time.sleep(1.0)
            memory = {"server": rss_kib(process.pid), "children": sum(rss_kib(p) for p in descendants(process.pid))}
            stop.set()
            return served, page.status_code, memory
    finally:
        process.terminate()
        process.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    kairox = [sys.executable, "-m", "kairox"]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        empty = Path(tmp) / "empty"
        (empty / ".git").mkdir(parents=True)
        example = Path(tmp) / "example"
        shutil.copytree(EXAMPLE, example)
        env = {
            **os.environ,
            "KAIROX_HOME": str(home),
            "KAIROX_SYSTEM_CONFIG": str(home / "none.toml"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        subprocess.run([*kairox, "--workspace", str(example), "trust"], env=env, check=True, capture_output=True)
        version = statistics.median(command_time([*kairox, "--version"], env) for _ in range(rounds))
        paths = statistics.median(
            command_time([*kairox, "--workspace", str(empty), "config", "paths"], env) for _ in range(rounds)
        )
        print(
            f"kairox --version: {version * 1000:.0f} ms; kairox config "
            f"paths: {paths * 1000:.0f} ms (medians of {rounds})"
        )
        for name, workspace in (("empty workspace", empty), ("example workspace (2 MCP servers)", example)):
            runs = [gui_run(kairox, workspace, env, measure_memory=False) for _ in range(rounds)]
            served = statistics.median(r[0] for r in runs)
            status = runs[-1][1]
            _, _, memory = gui_run(kairox, workspace, env, measure_memory=True)
            page = "the page" if status == 200 else f"HTTP {status} (page not built)"
            print(
                f"{name}: start -> first page served ({page}): {served * 1000:.0f} ms"
                f" = {served / version:.1f} x kairox --version = {served / paths:.2f} x kairox config paths"
            )
            print(
                f"{name}: RSS with the GUI open: server {memory['server'] / 1024:.1f}"
                f" MiB, its children {memory['children'] / 1024:.1f} MiB"
            )


if __name__ == "__main__":
    main()
