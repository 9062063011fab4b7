"""A catalog install from the GUI runs ``kairox mcp catalog install``'s function: the gate's question answered in
the page, progress events, the dry run's tools, the entry written, the server started in the running session.
npm works offline from the cache ``make install`` fills."""

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
NPM_CACHE = ROOT / "build" / "npm-cache"
SECRET = "s3cret-brave-value-987"


@pytest.fixture
def offline_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME for this process and the servers it starts: npm answers from the cache, offline."""
    assert (NPM_CACHE / ".catalog-installed").is_file(), (
        "run `make install` first: it fills build/npm-cache for these tests"
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / ".npmrc").write_text(
        f"cache={NPM_CACHE}\noffline=true\nprefix={tmp_path / 'npm-prefix'}\nupdate-notifier=false\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("npm_config_offline", "true")


async def test_install_memory_from_the_catalog_asks_reports_progress_and_starts_it(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path, offline_npm: None
) -> None:
    config = isolated_home / "kairox.toml"
    config.write_text("# mine\n", encoding="utf-8")
    async with open_gui(workspace) as gui:
        started = await gui.client.post("/api/catalog/memory/install", json={"layer": "user"})
        job = started.json()["job"]
        asked = await gui.event("approval.request")
        await gui.client.post(f"/api/approvals/{asked['id']}", json={"answer": "once"})
        finished = await gui.event("install.finished", timeout=240)  # after the server started in the session
        statuses = [e.data for e in gui.seen if e.type == "server.status" and e.data["name"] == "memory"]
        server = (await gui.client.get("/api/servers/mcp/memory")).json()
        entry = (await gui.client.get("/api/catalog/memory")).json()
        progress = [e.data for e in gui.seen if e.type == "install.progress"]
    assert started.status_code == 202
    assert asked["tool"] == "mcp.catalog.install" and asked["arguments"]["path"] == str(config)
    assert finished["job"] == job and finished["outcome"] == "installed" and finished["diagnostic"] is None
    assert "read_graph" in finished["tools"] and "create_entities" in finished["tools"]
    steps = [p["step"] for p in progress]
    assert (
        steps[0] == "preflight"
        and "approval" in steps
        and "fetch" in steps
        and "dry_run" in steps
        and steps[-1] == "start"
    )
    assert all(p["job"] == job for p in progress)
    assert statuses[-2:] == [
        {"kind": "mcp", "name": "memory", "status": "starting", "label": "starting", "reason": None},
        {"kind": "mcp", "name": "memory", "status": "ready", "label": "ready", "reason": None},
    ]
    assert server["status"] == "ready" and "read_graph" in {t["name"] for t in server["tools"]}
    assert entry["installed"] is True
    text = config.read_text()
    assert text.startswith("# mine\n")
    assert tomllib.loads(text)["mcp_servers"]["memory"]["args"] == [
        "-y",
        "@modelcontextprotocol/server-memory@2026.8.31",
    ]


async def test_a_secret_catalog_variable_reaches_the_dry_run_but_no_response_event_or_file(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path, offline_npm: None
) -> None:
    async with open_gui(workspace) as gui:
        detail = (await gui.client.get("/api/catalog/brave-search-mcp-server")).json()
        started = await gui.client.post(
            "/api/catalog/brave-search-mcp-server/install",
            json={"variables": {"BRAVE_API_KEY": SECRET}, "layer": "project"},
        )
        asked = await gui.event("approval.request")
        await gui.client.post(f"/api/approvals/{asked['id']}", json={"answer": "once"})
        finished = await gui.event("install.finished", timeout=240)
        responses = [
            (await gui.client.get(path)).text
            for path in ("/api/state", "/api/servers", "/api/trace?limit=2000", "/api/catalog/brave-search-mcp-server")
        ]
        events = json.dumps([e.data for e in gui.seen])
    variable = {v["name"]: v for v in detail["variables"]}["BRAVE_API_KEY"]
    assert variable["secret"] is True and variable["required"] is True
    assert started.status_code == 202
    progress = [e for e in json.loads(events) if "step" in e]
    assert any("[ok] variable BRAVE_API_KEY" in p["message"] for p in progress)  # pre-flight saw the value
    assert finished["outcome"] == "written_disabled" and finished["diagnostic"]  # not in the offline cache
    written = (workspace / "kairox.toml").read_text()
    assert tomllib.loads(written)["mcp_servers"]["brave-search-mcp-server"]["env_vars"] == ["BRAVE_API_KEY"]
    for text in (written, events, *responses):
        assert SECRET not in text
