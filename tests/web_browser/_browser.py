"""Helpers of the browser tests: ``kairox gui`` started as a user starts it (a subprocess on 127.0.0.1), the dot
colours, screenshots under ``build/screenshots/``."""

import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
URL_LINE = re.compile(r"Kairox GUI: (http://127\.0\.0\.1:\d+/\?token=\S+)")

# The dot colours McpStatusIndicator.vue paints, as getComputedStyle reports them
GREEN = "rgb(31, 158, 72)"
YELLOW = "rgb(230, 180, 20)"
RED = "rgb(214, 40, 40)"
GREY = "rgb(140, 149, 159)"


@dataclass
class Gui:
    """A running ``kairox gui``: its URL with the token, and the output it printed."""

    url: str
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return self.url.split("/?", 1)[0]


def start_gui(workspace: Path, env: dict[str, str] | None = None, timeout: float = 60) -> Gui:
    process = subprocess.Popen(
        [sys.executable, "-m", "kairox", "--workspace", str(workspace), "gui", "--no-browser", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    output: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def read() -> None:
        # keeps draining after the URL line, so the server never blocks on a full pipe
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            match = URL_LINE.search(line)
            if match and not url:
                url.append(match.group(1))
                found.set()
        found.set()

    threading.Thread(target=read, name="kairox-gui-output", daemon=True).start()
    if not found.wait(timeout) or not url:
        stop_gui(process)
        raise AssertionError("kairox gui printed no URL:\n" + "".join(output))
    return Gui(url=url[0], process=process, output=output)


def stop_gui(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def screenshot(page: Page, name: str) -> Path:
    """Save what the page shows as ``build/screenshots/<name>.png``, an artifact of the run."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    # transitions finish first: a switch mid-slide would show neither state
    page.screenshot(path=str(path), animations="disabled")
    return path


def dot_colour(page: Page, selector: str) -> str:
    colour: str = page.eval_on_selector(f"{selector} .dot", "element => getComputedStyle(element).backgroundColor")
    return colour


def wait_for_dot(page: Page, selector: str, colour: str, timeout: float = 60_000) -> None:
    page.wait_for_function(
        """([selector, colour]) => {
            const dot = document.querySelector(selector + " .dot");
            return dot !== null && getComputedStyle(dot).backgroundColor === colour;
        }""",
        arg=[selector, colour],
        timeout=timeout,
    )
