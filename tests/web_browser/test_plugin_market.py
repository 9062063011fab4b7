"""The Marketplace's plugins tab in Chromium: the plugins of a marketplace registered from a local folder, one
inspected (compatibility, permissions, what it contributes) and installed through the gate's dialog, which names
the user's configuration; `kairox plugins list` then shows it, and an incompatible one installs disabled."""

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.web._market import build_market, register
from tests.web_browser._browser import Gui, screenshot

pytestmark = pytest.mark.timeout(240)


def plugins_list(workspace: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "--workspace", str(workspace), "plugins", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_marketplace_plugin_is_inspected_and_installed_through_the_gate_from_the_plugins_tab(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    market = build_market(isolated_home.parent / "team-market")
    config = register(isolated_home, market)
    gui = gui_factory(workspace)
    page.goto(gui.url)
    page.click('[data-nav="marketplace"]')
    page.click('[data-tab="plugins"]')
    expect(page.locator("[data-market-plugin]")).to_have_count(3)
    expect(page.locator('[data-marketplace="team-market"]')).to_contain_text("3 plugins")
    page.fill("[data-plugin-search]", "review")
    expect(page.locator("[data-market-plugin]")).to_have_count(1)
    page.click('[data-market-plugin="review-kit@team-market"]')
    detail = page.locator('[data-plugin-detail="review-kit@team-market"]')
    expect(detail.locator('[data-contribution="skill/review"]')).to_be_visible()
    expect(detail.locator('[data-contribution="command/summarize"]')).to_be_visible()
    expect(detail.locator("[data-permissions]")).to_contain_text("sandbox_policy: read_only")
    expect(detail.locator("[data-incompatible]")).to_have_count(0)
    expect(detail).to_contain_text(str(config))
    screenshot(page, "plugin-marketplace")

    detail.locator('[data-action="install-plugin"]').click()
    dialog = page.locator("[data-approval]")
    expect(dialog).to_contain_text("plugins.install")
    # the question every install asks: what the plugin brings and where it goes
    expect(dialog).to_contain_text(f"{isolated_home / 'plugins' / 'team-market' / 'review-kit' / '1.4.0'} is inside")
    expect(dialog).to_contain_text('"brings": "1 skill, 1 command"')
    expect(dialog).not_to_contain_text("project configuration")
    screenshot(page, "plugin-marketplace-approval")
    dialog.locator('[data-answer="once"]').click()
    outcome = detail.locator('[data-plugin-outcome="installed"]')
    expect(outcome.locator("p").first).to_have_text("installed review-kit 1.4.0 — applies from the next session")
    expect(outcome).to_contain_text("from the next session")
    expect(page.locator('[data-market-plugin="review-kit@team-market"] .badge.installed')).to_have_text(
        "installed 1.4.0"
    )
    outcome.scroll_into_view_if_needed()
    screenshot(page, "plugin-marketplace-installed")
    assert plugins_list(workspace).split()[:3] == ["review-kit", "1.4.0", "enabled"]
    assert (
        isolated_home / "plugins" / "team-market" / "review-kit" / "1.4.0" / "skills" / "review" / "SKILL.md"
    ).is_file()

    # an incompatible plugin says so before the install, and installs disabled with the reason
    page.fill("[data-plugin-search]", "")
    page.click('[data-market-plugin="future-kit@team-market"]')
    future = page.locator('[data-plugin-detail="future-kit@team-market"]')
    expect(future.locator("[data-incompatible]")).to_be_visible()
    expect(future.locator("[data-compatibility]")).to_contain_text("needs Kairox >=99")
    future.locator('[data-action="install-plugin"]').click()
    page.locator('[data-approval] [data-answer="once"]').click()
    expect(future.locator('[data-plugin-outcome="installed_disabled"]')).to_contain_text(
        "incompatible: needs Kairox >=99"
    )
    # the Plugins page lists both, the incompatible one off
    page.click('[data-nav="plugins"]')
    expect(page.locator('[data-plugin="review-kit"]')).to_be_visible()
    expect(page.locator('[data-plugin="future-kit"] .plugin-head').get_by_role("checkbox")).not_to_be_checked()
