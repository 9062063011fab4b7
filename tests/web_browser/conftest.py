"""The web GUI in a real browser: Debian's Chromium driven headless by Playwright for Python. Playwright cannot
fetch its own browsers here, so it launches ``/usr/bin/chromium`` (``scripts/system-packages.sh`` installs it),
each test with a fresh profile."""

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, Playwright, sync_playwright
from tests.web_browser._browser import CHROMIUM, CHROMIUM_ARGS, Gui, start_gui, stop_gui


@pytest.fixture(autouse=True)
def isolated_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """As the suite's own, with the home and the workspace under one short neutral folder: the screenshots show
    these paths, and some of them go into the documentation."""
    root = Path(tempfile.mkdtemp(prefix="kairox-gui-", dir="/tmp"))
    home = root / "home"
    home.mkdir()
    monkeypatch.setenv("KAIROX_HOME", str(home))
    monkeypatch.setenv("KAIROX_SYSTEM_CONFIG", str(home / "no-system-kairox.toml"))
    for name in list(os.environ):
        if name.startswith("KAIROX_") and name not in ("KAIROX_HOME", "KAIROX_SYSTEM_CONFIG"):
            monkeypatch.delenv(name, raising=False)
    yield home
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def workspace(isolated_home: Path) -> Path:
    """``shop/`` beside the home: a git work tree, not trusted."""
    root = isolated_home.parent / "shop"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def gui_factory() -> Iterator[Callable[..., Gui]]:
    started: list[Gui] = []

    def factory(workspace: Path, env: dict[str, str] | None = None) -> Gui:
        gui = start_gui(workspace, env)
        started.append(gui)
        return gui

    yield factory
    for gui in started:
        stop_gui(gui.process)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    """One Playwright driver per module, stopped before other modules' event loops run."""
    assert CHROMIUM.is_file(), "the browser tests need Debian's chromium: apt-get install chromium"
    with sync_playwright() as driver:
        yield driver


@pytest.fixture
def browser(playwright: Playwright, tmp_path: Path) -> Iterator[BrowserContext]:
    """Chromium with a fresh profile of its own."""
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "chromium-profile"),
        executable_path=str(CHROMIUM),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1280, "height": 800},
    )
    context.set_default_timeout(30_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """The one tab; the test fails if the page threw an error nobody caught."""
    page = browser.pages[0] if browser.pages else browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert errors == []
