"""The GUI's page in Chromium, beside a blank page in the same browser.

1. Load: from navigating to ``/?token=`` to the servers view showing every server's dot (the bundle parsed, the
   first API answers rendered), against navigating to one of the page's own static files (the same server, no
   application code) — the ratio says what the application adds to a request's round trip.
2. Memory: the page's JavaScript heap once the view has settled, against ``about:blank`` in a fresh tab.
3. The built bundle's size (raw and gzip), which is what the browser downloads.

Kairox gui runs on an empty workspace with two quick MCP servers (tests/servers/basic_server.py) in the user
layer. Run: .venv/bin/python bench/gui_page.py [--rounds N]   (needs /usr/bin/chromium and a built ui/)
"""

import argparse
import gzip
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "src" / "kairox" / "web" / "static"
SERVER = ROOT / "tests" / "servers" / "basic_server.py"
URL = re.compile(r"Kairox GUI: (http://127\.0\.0\.1:\d+)/\?token=(\S+)")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def heap_used(page: Page) -> int:
    session = page.context.new_cdp_session(page)
    session.send("HeapProfiler.collectGarbage")
    session.send("Performance.enable")
    metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    session.detach()
    return int(metrics["JSHeapUsedSize"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    assert (STATIC / "index.html").is_file(), "build the GUI first: make ui"
    index = (STATIC / "index.html").read_text()
    assets = re.findall(r'(?:src|href)="/(assets/[^"]+)"', index)
    raw = sum((STATIC / a).stat().st_size for a in assets)
    packed = sum(len(gzip.compress((STATIC / a).read_bytes())) for a in assets)
    css = next(a for a in assets if a.endswith(".css"))

    with tempfile.TemporaryDirectory(prefix="kairox-bench-") as scratch:
        home, workspace = Path(scratch, "home"), Path(scratch, "shop")
        home.mkdir()
        (workspace / ".git").mkdir(parents=True)
        (home / "kairox.toml").write_text(
            "".join(
                f'[mcp_servers.{name}]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n\n'
                for name in ("one", "two")
            )
        )
        env = {**os.environ, "KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "none.toml")}
        process = subprocess.Popen(
            [sys.executable, "-m", "kairox", "--workspace", str(workspace), "gui", "--no-browser"],
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
            loads, blanks, heaps, blank_heaps = [], [], [], []
            with sync_playwright() as driver:
                for _ in range(rounds):
                    browser = driver.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
                    page = browser.new_page()
                    page.goto(f"{base}/?token={token}")  # sets the cookie; the first load warms the server
                    page.wait_for_selector('[data-server="two"] .dot-ready', timeout=60_000)
                    start = time.perf_counter()
                    page.goto(f"{base}/{css}")
                    blanks.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    page.goto(f"{base}/servers")
                    page.wait_for_selector('[data-server="two"] .dot-ready', timeout=60_000)
                    loads.append(time.perf_counter() - start)
                    page.wait_for_timeout(1000)
                    heaps.append(heap_used(page))
                    blank = browser.new_page()
                    blank.goto("about:blank")
                    blank_heaps.append(heap_used(blank))
                    browser.close()
        finally:
            process.terminate()
            process.wait(30)

    load, blank_load = statistics.median(loads), statistics.median(blanks)
    heap, blank_heap = statistics.median(heaps), statistics.median(blank_heaps)
    print(f"rounds={rounds} (medians)")
    print(f"bundle: {raw / 1024:.1f} KiB ({packed / 1024:.1f} KiB gzip) in {len(assets)} files")
    print(f"static file load:              {blank_load * 1000:8.1f} ms")
    print(f"servers view with its dots:    {load * 1000:8.1f} ms   ratio {load / blank_load:.2f}x a static file")
    print(f"about:blank JS heap:           {blank_heap / 1024:8.0f} KiB")
    print(f"GUI page JS heap:              {heap / 1024:8.0f} KiB   ratio {heap / blank_heap:.2f}x about:blank")


if __name__ == "__main__":
    main()
