"""The doctor page in Chromium renders the one doctor report `kairox doctor --json` prints: the same verdict, the
same environment checks with their fixes, the same failures with where and how to fix them."""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.web_browser._browser import SERVERS, Gui, screenshot

pytestmark = pytest.mark.timeout(240)


def test_the_doctor_page_shows_the_report_kairox_doctor_prints(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.must]\ncommand = "{sys.executable}"\n'
        f'args = ["{SERVERS / "crash_at_start.py"}"]\nrequired = true\n'
        "startup_timeout_sec = 20\n\n"
        f'[mcp_servers.quick]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n\n'
        '[lsp_servers.ghost]\ncommand = "kairox-test-no-such-language-server"\nfile_patterns = ["*.ghost"]\n',
        encoding="utf-8",
    )
    broken = isolated_home / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nname: [not, a, name]\n---\nBody.\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "--workspace", str(workspace), "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    cli = json.loads(done.stdout)
    assert cli["ok"] is False and cli["failures"], done.stdout

    gui = gui_factory(workspace)
    page.goto(gui.url)
    page.click('[data-nav="doctor"]')
    verdict = page.locator("[data-verdict]")
    expect(verdict).to_have_attribute("data-ok", "false", timeout=120_000)
    expect(verdict).to_have_text("Something required is broken (see below).")
    for check in cli["environment"]:
        row = page.locator(f'[data-check="{check["check"]}"]')
        expect(row).to_have_attribute("data-state", "ok" if check["ok"] else "fail" if check["required"] else "warn")
        if not check["ok"] and check["fix"]:
            expect(row.locator("[data-fix]")).to_have_text(f"fix: {check['fix']}")
    ghost = page.locator('[data-check="kairox-test-no-such-language-server"]')
    expect(ghost).to_have_attribute("data-state", "fail")
    for failure in cli["failures"]:
        shown = page.locator(f'[data-failure-kind="{failure["kind"]}"] [data-failure="{failure["name"]}"]').first
        expect(shown).to_contain_text(failure["reason"])
        if failure["fix"]:
            expect(shown.locator("[data-fix]")).to_have_text(f"fix: {failure['fix']}")
    expect(page.locator('[data-failure="must"]')).to_contain_text("required")
    # the report is of the moment it ran: a server still starting then is ready when it is run again
    quick = page.locator('[data-doctor-server="quick"]')
    for _ in range(60):
        if "ready" in quick.inner_text():
            break
        page.click('[data-action="rerun"]')
        expect(page.locator('[data-action="rerun"]')).to_be_enabled(timeout=60_000)
    # the same count the servers view shows: one server view behind both
    count = page.evaluate("fetch('/api/servers/mcp/quick').then(r => r.json()).then(s => s.tool_count)")
    expect(quick).to_contain_text(f"ready, {count} tool(s)")
    screenshot(page, "doctor")
