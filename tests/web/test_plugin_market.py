"""Plugins of a registered marketplace through the API: listed with whether they are installed, one in full
(compatibility, permissions, contributions) before anything is copied, and installed through the gate: the
question names the user's configuration, a no installs nothing, a yes installs it (an incompatible one disabled,
with the reason)."""

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.web._market import build_market, register

from kairox import __version__

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


async def test_marketplace_plugins_are_listed_inspected_and_installed_through_the_gate(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    market = build_market(tmp_path / "market")
    config = register(isolated_home, market)
    async with open_gui(workspace) as gui:
        listing = (await gui.client.get("/api/plugins/marketplace")).json()
        narrowed = (await gui.client.get("/api/plugins/marketplace", params={"q": "review"})).json()
        detail = (await gui.client.get("/api/plugins/marketplace/team-market/review-kit")).json()
        future = (await gui.client.get("/api/plugins/marketplace/team-market/future-kit")).json()
        remote = (await gui.client.get("/api/plugins/marketplace/team-market/remote-kit")).json()
        missing = await gui.client.get("/api/plugins/marketplace/team-market/no-such-kit")
        missing_install = await gui.client.post("/api/plugins/marketplace/team-market/no-such-kit/install")

        # a no: nothing copied, nothing written
        job = (await gui.client.post("/api/plugins/marketplace/team-market/review-kit/install")).json()["job"]
        asked = await gui.event("approval.request")
        await gui.client.post(f"/api/approvals/{asked['id']}", json={"answer": "deny"})
        denied = await gui.event("plugin.install.finished", lambda d: d["job"] == job)
        after_deny = config.read_text(encoding="utf-8")

        job = (await gui.client.post("/api/plugins/marketplace/team-market/review-kit/install")).json()["job"]
        again = await gui.event("approval.request")
        await gui.client.post(f"/api/approvals/{again['id']}", json={"answer": "once"})
        installed = await gui.event("plugin.install.finished", lambda d: d["job"] == job)
        steps = [e.data["message"] for e in gui.seen if e.type == "plugin.install.progress" and e.data["job"] == job]

        job = (await gui.client.post("/api/plugins/marketplace/team-market/future-kit/install")).json()["job"]
        await gui.client.post(f"/api/approvals/{(await gui.event('approval.request'))['id']}", json={"answer": "once"})
        disabled = await gui.event("plugin.install.finished", lambda d: d["job"] == job)
        relisted = {p["name"]: p for p in (await gui.client.get("/api/plugins/marketplace")).json()["plugins"]}
        plugins = {p["name"]: p for p in (await gui.client.get("/api/plugins")).json()["plugins"]}

    assert listing["marketplaces"] == [{"name": "team-market", "source": str(market), "plugins": 3, "error": None}]
    assert [p["key"] for p in listing["plugins"]] == [
        "review-kit@team-market",
        "future-kit@team-market",
        "remote-kit@team-market",
    ]
    assert [p["installed"] for p in listing["plugins"]] == [False, False, False]
    assert [p["name"] for p in narrowed["plugins"]] == ["review-kit"]
    assert (detail["version"], detail["compatible"], detail["category"], detail["tags"]) == (
        "1.4.0",
        True,
        "productivity",
        ["review", "git"],
    )
    assert {(c["kind"], c["name"]) for c in detail["contributions"]} == {("skill", "review"), ("command", "summarize")}
    assert "sandbox_policy: read_only" in detail["permissions"] and "network_access: False" in detail["permissions"]
    assert detail["target_file"] == str(config)
    assert future["compatible"] is False and future["compatibility"] == [f"needs Kairox >=99, this is {__version__}"]
    assert remote["local"] is False and remote["compatible"] is None and "fetched at install" in remote["problems"][0]
    assert missing.status_code == 404 and "no-such-kit" in missing.json()["error"]
    assert missing_install.status_code == 404

    # the same question as for a folder or URL: what it brings, where it goes, after it was loaded and checked
    folder = isolated_home / "plugins" / "team-market" / "review-kit" / "1.4.0"
    assert asked["tool"] == "plugins.install" and asked["arguments"]["plugin"] == "review-kit 1.4.0"
    assert asked["arguments"]["path"] == str(folder) and "skill" in asked["arguments"]["brings"]
    assert asked["reason"].startswith(f"{folder} is inside {isolated_home}, Kairox's own configuration")
    assert denied["outcome"] == "denied" and "was not installed" in denied["reason"]
    assert after_deny == f'# my settings\n[plugins.marketplaces.team-market]\nsource = "{market}"\n'
    assert installed["outcome"] == "installed" and installed["enabled"] is True and installed["version"] == "1.4.0"
    assert installed["applies"] == "from the next session"
    assert Path(installed["path"]) == isolated_home / "plugins" / "team-market" / "review-kit" / "1.4.0"
    assert (Path(installed["path"]) / "skills" / "review" / "SKILL.md").is_file()
    assert any("copying review-kit" in step for step in steps)
    written = tomllib.loads(config.read_text(encoding="utf-8"))
    assert written["plugins"]["entries"]["review-kit"]["enabled"] is True
    assert written["plugins"]["entries"]["future-kit"]["enabled"] is False
    assert config.read_text(encoding="utf-8").startswith("# my settings\n")
    assert (
        disabled["outcome"] == "installed_disabled"
        and disabled["reason"] == "incompatible: needs Kairox >=99, this is 0.1.0"
    )
    assert relisted["review-kit"]["installed_version"] == "1.4.0" and relisted["remote-kit"]["installed"] is False
    assert plugins["review-kit"]["enabled"] is True and plugins["review-kit"]["origin"] == "installed"


async def test_a_marketplace_registered_while_the_gui_runs_is_listed_without_a_restart(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    market = build_market(tmp_path / "market")
    async with open_gui(workspace) as gui:
        before = (await gui.client.get("/api/plugins/marketplace")).json()
        register(isolated_home, market)  # what `kairox plugins marketplace add` writes, from another process
        after = (await gui.client.get("/api/plugins/marketplace")).json()
    assert before["plugins"] == [] and "review-kit" in [p["name"] for p in after["plugins"]]
