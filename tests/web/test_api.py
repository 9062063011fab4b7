"""The GUI's JSON API against the running application (httpx, ASGI transport): the guard, every read endpoint, the
writes through the config writer and the gate, approvals, and what never leaves the server (secrets)."""

import json
import shutil
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tests.agent._support import SERVERS, make_workspace
from tests.web.conftest import BASE, PORT, TOKEN
from typer.testing import CliRunner

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

SECRET = "sekrit-env-value-4242"
PRINTS_SECRET = "import os, sys; print('token is', os.environ['API_TOKEN'], file=sys.stderr); sys.exit(3)"


def user_servers(home: Path) -> Path:
    """A ready server and a failing one (it prints its secret environment variable to stderr before it exits)."""
    path = home / "kairox.toml"
    path.write_text(
        "# my servers: keep this comment\n"
        f'[mcp_servers.basic]\ncommand = "{sys.executable}"\n'
        f'args = ["{SERVERS / "basic_server.py"}"]  # the echo server\n\n'
        f'[mcp_servers.leaky]\ncommand = "{sys.executable}"\n'
        f'args = ["-c", "{PRINTS_SECRET}"]\nstartup_timeout_sec = 20\n'
        f'env = {{ API_TOKEN = "{SECRET}" }}\n',
        encoding="utf-8",
    )
    return path


# --- the guard --------------------------------------------------------------------------------------------------

ENDPOINTS = [
    ("GET", "/"),
    ("GET", "/servers"),
    ("GET", "/api/state"),
    ("GET", "/api/servers"),
    ("GET", "/api/servers/mcp/basic"),
    ("GET", "/api/doctor"),
    ("GET", "/api/catalog"),
    ("GET", "/api/catalog/memory"),
    ("GET", "/api/skills"),
    ("GET", "/api/tools/search?q=echo"),
    ("GET", "/api/plugins"),
    ("GET", "/api/trace"),
    ("GET", "/api/events"),
    ("POST", "/api/trust"),
    ("POST", "/api/servers/mcp/basic/restart"),
    ("POST", "/api/servers/mcp/basic/disable"),
    ("POST", "/api/servers/mcp/basic/tools/echo/disable"),
    ("POST", "/api/skills/release-notes/disable"),
    ("POST", "/api/plugins/p/disable"),
    ("POST", "/api/plugins/p/contributions/skill/s/disable"),
    ("POST", "/api/plugins/p/path"),
    ("POST", "/api/catalog/memory/install"),
    ("POST", "/api/session/messages"),
    ("POST", "/api/session/cancel"),
    ("POST", "/api/approvals/a1"),
    ("GET", "/api/nothing-here"),
]


async def test_every_endpoint_needs_the_token_and_this_host_and_origin(
    open_gui: Callable[..., Any], workspace: Path
) -> None:
    async with open_gui(workspace) as gui:
        app = gui.client._transport  # the same application, asked without the token
        async with httpx.AsyncClient(transport=app, base_url=BASE) as bare:
            for method, path in ENDPOINTS:
                missing = await bare.request(method, path)
                assert missing.status_code == 401, (method, path, missing.text)
                assert "token" in missing.json()["error"]
                wrong = await bare.request(method, path, headers={"Authorization": "Bearer not-the-token"})
                assert wrong.status_code == 401, (method, path)
                rebound = await bare.request(
                    method, path, headers={"Host": f"evil.example:{PORT}", "Authorization": f"Bearer {TOKEN}"}
                )
                assert rebound.status_code == 403, (method, path)
                other_port = await bare.request(
                    method, path, headers={"Host": "127.0.0.1:1", "Authorization": f"Bearer {TOKEN}"}
                )
                assert other_port.status_code == 403, (method, path)
                cross = await bare.request(
                    method, path, headers={"Origin": "http://evil.example", "Authorization": f"Bearer {TOKEN}"}
                )
                assert cross.status_code == 403, (method, path)
                assert "access-control-allow-origin" not in {k.lower() for k in cross.headers}
            same_origin = await bare.get(
                "/api/state",
                headers={
                    "Origin": f"http://localhost:{PORT}",
                    "Host": f"localhost:{PORT}",
                    "Authorization": f"Bearer {TOKEN}",
                },
            )
            assert same_origin.status_code == 200
            assert not any(k.lower().startswith("access-control-") for k in same_origin.headers)
            preflight = await bare.options(
                "/api/state", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
            )
            assert preflight.status_code == 403 and not any(
                k.lower().startswith("access-control-") for k in preflight.headers
            )


async def test_the_first_page_load_sets_a_strict_http_only_cookie_that_authenticates_later_requests(
    open_gui: Callable[..., Any], workspace: Path, tmp_path: Path
) -> None:
    static = tmp_path / "static"
    (static / "assets").mkdir(parents=True)
    (static / "index.html").write_text("<!doctype html><title>Kairox</title><div id=app></div>", encoding="utf-8")
    (static / "assets" / "app.js").write_text("console.log('kairox')", encoding="utf-8")
    async with (
        open_gui(workspace, static_dir=static) as gui,
        httpx.AsyncClient(transport=gui.client._transport, base_url=BASE) as browser,
    ):
        first = await browser.get(f"/?token={TOKEN}")
        # the token goes into the cookie and out of the address; no page tells another site where it was
        assert (first.status_code, first.headers["location"], first.headers["referrer-policy"]) == (
            303,
            "/",
            "no-referrer",
        )
        shown = await browser.get("/")
        assert (
            shown.status_code == 200
            and "<title>Kairox</title>" in shown.text
            and shown.headers["referrer-policy"] == "no-referrer"
        )
        cookie = first.headers["set-cookie"]
        assert cookie.startswith("kairox_token=" + TOKEN)
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        state = await browser.get("/api/state")  # the cookie alone
        assert state.status_code == 200 and state.json()["workspace"] == str(workspace)
        route = await browser.get("/marketplace")  # a route of the page: the page
        assert route.status_code == 200 and "<title>Kairox</title>" in route.text
        asset = await browser.get("/assets/app.js")
        assert asset.status_code == 200 and "kairox" in asset.text
        unknown = await browser.get("/api/unknown")
        assert unknown.status_code == 404 and "no endpoint" in unknown.json()["error"]


async def test_without_the_built_page_the_root_says_how_to_build_it(
    open_gui: Callable[..., Any], workspace: Path, tmp_path: Path
) -> None:
    async with open_gui(workspace, static_dir=tmp_path / "not-built") as gui:
        page = await gui.client.get("/")
        api = await gui.client.get("/api/state")
    assert page.status_code == 503 and "make" in page.json()["error"] and "ui/" in page.json()["error"]
    assert api.status_code == 200


# --- reads ------------------------------------------------------------------------------------------------------


async def test_servers_show_live_status_provenance_tools_and_stderr_with_secrets_redacted(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path
) -> None:
    config = user_servers(isolated_home)
    async with open_gui(workspace) as gui:
        state = (await gui.client.get("/api/state")).json()
        servers = (await gui.client.get("/api/servers")).json()["servers"]
        one = (await gui.client.get("/api/servers/mcp/leaky")).json()
        missing = await gui.client.get("/api/servers/mcp/nope")
        bad_kind = await gui.client.get("/api/servers/xyz/basic")
        trace = await gui.client.get("/api/trace", params={"limit": 1000})
        everything = json.dumps([state, servers, one, trace.json(), [e.data for e in gui.seen]])
        while not gui.events.empty():
            everything += json.dumps(gui.events.get_nowait().data)
    assert state["trusted"] is False and state["workspace"] == str(workspace) and state["version"]
    assert state["model"]["configured"] is False
    by_name = {s["name"]: s for s in servers}
    basic, leaky = by_name["basic"], by_name["leaky"]
    assert (basic["kind"], basic["status"], basic["enabled"], basic["transport"]) == ("mcp", "ready", True, "stdio")
    assert basic["provenance"] == {"layer": "user", "file": str(config), "line": 2}
    assert "echo" in {t["name"] for t in basic["tools"]} and all(t["enabled"] for t in basic["tools"])
    assert leaky["status"] == "failed" and leaky["reason"]
    assert "token is <redacted>" in leaky["stderr_tail"]
    assert one == leaky
    assert missing.status_code == 404 and "nope" in missing.json()["error"]
    assert bad_kind.status_code == 404
    assert SECRET not in everything  # not in the servers, the trace nor any event
    assert '"McpServerFailed"' in everything


async def test_catalog_lists_searches_filters_by_tag_and_shows_what_an_install_writes(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path
) -> None:
    async with open_gui(workspace) as gui:
        listing = (await gui.client.get("/api/catalog")).json()
        found = (await gui.client.get("/api/catalog", params={"q": "knowledge graph"})).json()
        tagged = (await gui.client.get("/api/catalog", params={"tag": "browser"})).json()
        detail = (await gui.client.get("/api/catalog/memory")).json()
        by_id = (await gui.client.get("/api/catalog/io.github.modelcontextprotocol/memory")).json()
        unknown = await gui.client.get("/api/catalog/no-such-server")
    assert len(listing["entries"]) >= 12 and listing["sources"][0]["name"] == "builtin"
    assert next(e["name"] for e in found["entries"]) == "io.github.modelcontextprotocol/memory"
    assert tagged["entries"] and all("browser" in e["tags"] for e in tagged["entries"])
    assert detail == by_id
    assert detail["server"] == "memory" and detail["installed"] is False and detail["version"] == "2026.8.31"
    assert {k: v for k, v in detail["requirements"][0].items() if k != "detail"} == {"name": "node", "present": True}
    assert detail["command"] == ["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"]
    assert tomllib.loads(detail["config"])["mcp_servers"]["memory"]["command"] == "npx"
    assert detail["target_file"] == str(isolated_home / "kairox.toml")
    assert unknown.status_code == 404


async def test_trace_returns_the_most_recent_events_last(open_gui: Callable[..., Any], workspace: Path) -> None:
    async with open_gui(workspace) as gui:
        all_events = (await gui.client.get("/api/trace")).json()["events"]
        last_two = (await gui.client.get("/api/trace", params={"limit": 2})).json()["events"]
        bad = await gui.client.get("/api/trace", params={"limit": "many"})
    assert [e["type"] for e in all_events][-1] == "ExtensionContextReady"
    assert last_two == all_events[-2:] and last_two[0]["seq"] < last_two[1]["seq"]
    assert set(last_two[1]) == {"seq", "time", "type", "summary", "data"}
    assert bad.status_code == 400


# --- writes -----------------------------------------------------------------------------------------------------


async def test_server_and_tool_toggles_write_the_declaring_layer_and_keep_its_comments(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path
) -> None:
    config = user_servers(isolated_home)
    async with open_gui(workspace) as gui:
        off = await gui.client.post("/api/servers/mcp/basic/disable")
        await gui.event("server.status", lambda d: d["name"] == "basic" and d["status"] == "stopped")
        disabled = await gui.event("server.status", lambda d: d["name"] == "basic" and d["status"] == "disabled")
        after_off = (await gui.client.get("/api/servers/mcp/basic")).json()
        text_off = config.read_text()
        tool_off = await gui.client.post("/api/servers/mcp/leaky/tools/x/disable")
        on = await gui.client.post("/api/servers/mcp/basic/enable")
        basic = (await gui.client.get("/api/servers/mcp/basic")).json()
        tool = await gui.client.post("/api/servers/mcp/basic/tools/echo/disable")
        listed = tool.json()["server"]["tools"]
        restart = await gui.client.post("/api/servers/mcp/basic/restart")
        restarted = restart.json()["server"]
        bad_action = await gui.client.post("/api/servers/mcp/basic/explode")
        changed = [e.data["file"] for e in gui.seen if e.type == "config.changed"]
        while not gui.events.empty():
            item = gui.events.get_nowait()
            if item.type == "config.changed":
                changed.append(item.data["file"])
    assert off.status_code == 200 and off.json()["file"] == str(config)
    assert after_off["status"] == "disabled" and after_off["enabled"] is False
    assert disabled["reason"].startswith(f"disabled in the configuration ({config}:")
    assert "# my servers: keep this comment" in text_off and "# the echo server" in text_off
    assert tomllib.loads(text_off)["mcp_servers"]["basic"]["enabled"] is False
    assert tool_off.status_code == 404  # the failed server offers no tool x
    assert on.status_code == 200 and basic["status"] == "ready" and basic["enabled"] is True
    assert tool.status_code == 200 and {t["name"]: t["enabled"] for t in listed}["echo"] is False
    text = config.read_text()
    assert tomllib.loads(text)["mcp_servers"]["basic"]["disabled_tools"] == ["echo"]
    assert tomllib.loads(text)["mcp_servers"]["basic"]["enabled"] is True
    assert "# my servers: keep this comment" in text and "# the echo server" in text
    assert restart.status_code == 200 and restarted["status"] == "ready"
    assert bad_action.status_code == 404
    assert changed[:1] == [str(config)]


async def test_skill_toggle_is_written_to_the_user_layer_with_comments_kept_and_the_cli_agrees(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    from kairox.cli._app import app

    workspace = make_workspace(tmp_path / "repo")
    user_skill = isolated_home / "skills" / "tidy"
    user_skill.mkdir(parents=True)
    (user_skill / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy the imports.\n---\nSort them.\n", encoding="utf-8"
    )
    config = isolated_home / "kairox.toml"
    config.write_text("# my settings\n[skills]  # about skills\nprompt_budget_chars = 4000\n", encoding="utf-8")
    async with open_gui(workspace) as gui:
        before = {s["name"]: s for s in (await gui.client.get("/api/skills")).json()["skills"]}
        off = await gui.client.post("/api/skills/tidy/disable")
        after = {s["name"]: s for s in (await gui.client.get("/api/skills")).json()["skills"]}
        unknown = await gui.client.post("/api/skills/nope/disable")
    assert (
        before["tidy"]["scope"] == "user"
        and before["tidy"]["enabled"] is True
        and before["tidy"]["shadowed_by"] is None
    )
    assert before["release-notes"]["scope"] == "workspace"
    assert before["tidy"]["path"].startswith(str(user_skill))
    assert off.status_code == 200 and off.json() == {"ok": True, "file": str(config)}
    assert after["tidy"]["enabled"] is False
    text = config.read_text()
    assert text.startswith("# my settings\n[skills]  # about skills\nprompt_budget_chars = 4000\n")
    assert tomllib.loads(text)["skills"]["entries"]["tidy"]["enabled"] is False
    assert unknown.status_code == 404
    listed = CliRunner().invoke(app, ["--workspace", str(workspace), "skills", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    entries = rows["skills"] if isinstance(rows, dict) else rows
    assert {e["name"]: e["enabled"] for e in entries}["tidy"] is False


async def test_plugin_and_contribution_toggles_write_the_user_layer(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path
) -> None:
    root = isolated_home / "plugins" / "helper"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "helper", "version": "1.2.0", "description": "Helps."})
    )
    (root / "skills" / "greet").mkdir(parents=True)
    (root / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Say hello.\n---\nHello.\n", encoding="utf-8"
    )
    config = isolated_home / "kairox.toml"
    config.write_text("# plugins below\n", encoding="utf-8")
    async with open_gui(workspace) as gui:
        listed = (await gui.client.get("/api/plugins")).json()
        part = await gui.client.post("/api/plugins/helper/contributions/skill/greet/disable")
        whole = await gui.client.post("/api/plugins/helper/disable")
        after = (await gui.client.get("/api/plugins")).json()
        unknown = await gui.client.post("/api/plugins/nope/disable")
        elsewhere = isolated_home.parent / "helper-dev"
        shutil.copytree(root, elsewhere)
        moved = await gui.client.post("/api/plugins/helper/path", json={"path": str(elsewhere)})
        moved_list = (await gui.client.get("/api/plugins")).json()["plugins"][0]
        not_a_folder = await gui.client.post("/api/plugins/helper/path", json={"path": str(elsewhere / "nothing")})
        back = await gui.client.post("/api/plugins/helper/path", json={"path": None})
        back_list = (await gui.client.get("/api/plugins")).json()["plugins"][0]
    plugin = listed["plugins"][0]
    assert (plugin["key"], plugin["name"], plugin["version"], plugin["enabled"], plugin["path"]) == (
        "helper",
        "helper",
        "1.2.0",
        True,
        str(root),
    )
    assert plugin["contributions"] == [{"kind": "skill", "name": "greet", "enabled": True}]
    assert listed["marketplaces"] == []
    assert part.status_code == 200 and whole.status_code == 200 and part.json()["file"] == str(config)
    entry = tomllib.loads(config.read_text())["plugins"]["entries"]["helper"]
    assert entry == {"disabled_contributions": ["skill:greet"], "enabled": False}
    assert config.read_text().startswith("# plugins below\n")
    assert after["plugins"][0]["enabled"] is False
    assert unknown.status_code == 404
    assert moved.status_code == 200 and moved.json()["applies"] == "from the next session"
    assert (moved_list["path"], moved_list["path_override"]) == (str(elsewhere), str(elsewhere))
    assert not_a_folder.status_code == 400 and "not a folder" in not_a_folder.json()["error"]
    assert back.status_code == 200 and (back_list["path"], back_list["path_override"]) == (str(root), None)
    assert "path" not in tomllib.loads(config.read_text())["plugins"]["entries"]["helper"]


async def test_a_write_to_a_project_file_of_an_untrusted_workspace_waits_for_the_approval_dialog(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    import anyio

    workspace = make_workspace(tmp_path / "repo")
    project = workspace / "kairox.toml"
    project.write_text("# the team's settings\n", encoding="utf-8")
    async with open_gui(workspace) as gui:
        answers: dict[str, httpx.Response] = {}

        async def toggle(name: str) -> None:
            answers[name] = await gui.client.post("/api/skills/release-notes/disable", json={"layer": "project"})

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(toggle, "denied")
            asked = await gui.event("approval.request")
            assert "denied" not in answers  # the POST waits for the answer
            bad = await gui.client.post(f"/api/approvals/{asked['id']}", json={"answer": "maybe"})
            denied = await gui.client.post(
                f"/api/approvals/{asked['id']}", json={"answer": "deny", "message": "not here"}
            )
            resolved = await gui.event("approval.resolved")
        again = await gui.client.post(f"/api/approvals/{asked['id']}", json={"answer": "once"})
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(toggle, "allowed")
            second = await gui.event("approval.request")
            await gui.client.post(f"/api/approvals/{second['id']}", json={"answer": "once"})
        user_write = await gui.client.post("/api/skills/release-notes/enable")  # the user layer: no question
    assert asked["tool"] == "config.write" and asked["arguments"]["path"] == str(project)
    assert "not trusted" in asked["reason"] and asked["grants"] == [] and asked["layers"] == []
    assert set(asked) == {
        "id",
        "tool",
        "arguments",
        "command",
        "reason",
        "asked_by",
        "links",
        "grants",
        "layers",
        "choices",
    }
    # a configuration write of an untrusted workspace offers once and deny, nothing to remember
    assert [(c["scope"], c["with_message"]) for c in asked["choices"]] == [
        ("once", False),
        ("deny", False),
        ("deny", True),
    ]
    assert bad.status_code == 400 and "answer must be one of" in bad.json()["error"]
    assert denied.json() == {"ok": True} and resolved == {"id": asked["id"], "answer": "deny"}
    assert answers["denied"].status_code == 403 and answers["denied"].json()["denied"] is True
    assert "not here" in answers["denied"].json()["error"]
    assert again.status_code == 404
    assert answers["allowed"].status_code == 200 and answers["allowed"].json()["file"] == str(project)
    assert project.read_text().startswith("# the team's settings\n")
    assert tomllib.loads(project.read_text())["skills"]["entries"]["release-notes"]["enabled"] is False
    assert user_write.status_code == 200 and user_write.json()["file"] == str(isolated_home / "kairox.toml")


async def test_a_gui_setting_for_a_project_file_linked_to_the_user_file_is_refused_without_a_dialog(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    import anyio

    workspace = make_workspace(tmp_path / "repo")
    user = isolated_home / "kairox.toml"
    user.write_text("# mine\n", encoding="utf-8")
    (workspace / ".kairox").mkdir(exist_ok=True)
    project = workspace / ".kairox" / "kairox.toml"
    project.symlink_to(user)
    async with open_gui(workspace) as gui:
        with anyio.fail_after(30):  # nobody answers a dialog here: the POST returns only because none was opened
            refused = await gui.client.post("/api/skills/release-notes/disable", json={"layer": "project"})
    assert refused.status_code == 403, refused.text
    assert refused.json()["denied"] is True and refused.json()["file"] == str(project)
    assert (
        f"{project} is the project file of this workspace but a link to {user}, your user file"
        in refused.json()["error"]
    )
    assert (user.read_text(), project.is_symlink()) == ("# mine\n", True)


async def test_trust_trusts_the_workspace_and_starts_its_held_back_servers(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path
) -> None:
    (workspace / "kairox.toml").write_text(
        f'[mcp_servers.team]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n',
        encoding="utf-8",
    )
    async with open_gui(workspace) as gui:
        before = (await gui.client.get("/api/state")).json()
        held = (await gui.client.get("/api/servers/mcp/team")).json()
        trusted = (await gui.client.post("/api/trust")).json()
        await gui.backend.ready_context()
        after = (await gui.client.get("/api/servers/mcp/team")).json()
    assert before["trusted"] is False
    assert any(
        item["what"].startswith("mcp_servers.team") and item["file"] == str(workspace / "kairox.toml")
        for item in before["held_back"]
    )
    assert held["status"] == "held_back" and "kairox trust" in held["reason"] and held["enabled"] is True
    assert trusted["trusted"] is True and trusted["held_back"] == []
    assert after["status"] == "ready" and after["tools"]


async def test_session_endpoints_without_a_model_say_how_to_configure_one(
    open_gui: Callable[..., Any], workspace: Path
) -> None:
    async with open_gui(workspace) as gui:
        message = await gui.client.post("/api/session/messages", json={"text": "hello"})
        empty = await gui.client.post("/api/session/messages", json={})
        cancel = await gui.client.post("/api/session/cancel")
        approval = await gui.client.post("/api/approvals/nope", json={"answer": "once"})
    assert message.status_code == 400 and "no model is configured" in message.json()["error"]
    assert empty.status_code == 400
    assert cancel.json() == {"ok": True, "cancelled": False}
    assert approval.status_code == 404


async def test_language_and_debug_servers_restart_and_toggle_through_the_runtime(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path
) -> None:
    from tests.agent._support import BIN

    config = isolated_home / "kairox.toml"
    config.write_text(
        "# tools for python\n"
        f'[lsp_servers.jedi]\ncommand = "{BIN / "jedi-language-server"}"\nfile_patterns = ["*.py"]\n\n'
        f'[dap_servers.debugpy]\ncommand = "{sys.executable}"\n'
        'args = ["-m", "debugpy.adapter"]\nlanguages = ["python"]\n',
        encoding="utf-8",
    )
    async with open_gui(workspace) as gui:
        before = {s["name"]: s for s in (await gui.client.get("/api/servers")).json()["servers"]}
        restart = await gui.client.post("/api/servers/lsp/jedi/restart")
        running = restart.json()["server"]
        off = await gui.client.post("/api/servers/lsp/jedi/disable")
        await gui.event(
            "server.status",
            lambda d: d == {"kind": "lsp", "name": "jedi", "status": "stopped", "label": "stopped", "reason": None},
        )
        after = (await gui.client.get("/api/servers/lsp/jedi")).json()
        dap_restart = await gui.client.post("/api/servers/dap/debugpy/restart")
        dap_off = await gui.client.post("/api/servers/dap/debugpy/disable")
        dap = (await gui.client.get("/api/servers/dap/debugpy")).json()
    assert (before["jedi"]["kind"], before["jedi"]["status"]) == ("lsp", "idle")  # starts on first use
    assert (before["debugpy"]["kind"], before["debugpy"]["status"]) == ("dap", "idle")
    assert before["jedi"]["provenance"] == {"layer": "user", "file": str(config), "line": 2}
    assert restart.status_code == 200 and running["status"] == "ready"
    assert off.status_code == 200 and off.json()["file"] == str(config)
    assert after["status"] == "disabled" and after["enabled"] is False
    assert dap_restart.status_code == 409 and "debug session" in dap_restart.json()["error"]
    assert dap_off.status_code == 200 and dap["status"] == "disabled"
    written = tomllib.loads(config.read_text())
    assert written["lsp_servers"]["jedi"]["enabled"] is False and written["dap_servers"]["debugpy"]["enabled"] is False
    assert config.read_text().startswith("# tools for python\n")


async def test_a_required_server_that_fails_is_shown_red_and_the_session_still_opens(
    open_gui: Callable[..., Any], workspace: Path, isolated_home: Path
) -> None:
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.must]\ncommand = "{sys.executable}"\n'
        f'args = ["{SERVERS / "crash_at_start.py"}"]\nrequired = true\n',
        encoding="utf-8",
    )
    async with open_gui(workspace) as gui:
        state = (await gui.client.get("/api/state")).json()
        server = (await gui.client.get("/api/servers/mcp/must")).json()
        restart = await gui.client.post("/api/servers/mcp/must/restart")
    assert state["problem"] is None
    assert server["status"] == "failed" and server["reason"]
    assert restart.status_code == 200 and restart.json()["server"]["status"] == "failed"


async def test_tool_search_ranks_as_the_cli_does_and_never_finds_a_denied_tool(
    open_gui: Callable[..., Any], tmp_path: Path, isolated_home: Path
) -> None:
    from kairox.cli._app import app

    workspace = make_workspace(tmp_path / "repo")
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.basic]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n\n'
        '[policy.rules]\ndeny = ["mcp__basic__add"]\n',
        encoding="utf-8",
    )
    async with open_gui(workspace) as gui:
        found = (
            await gui.client.get("/api/tools/search", params={"q": "return the message unchanged", "limit": "3"})
        ).json()
        denied = (await gui.client.get("/api/tools/search", params={"q": "add two integers", "limit": "50"})).json()
        empty = await gui.client.get("/api/tools/search", params={"q": " "})
        too_many = await gui.client.get("/api/tools/search", params={"q": "echo", "limit": "500"})
    argv = ["--workspace", str(workspace), "tools", "search", "return the message unchanged", "--limit", "3", "--json"]
    cli = await anyio.to_thread.run_sync(lambda: CliRunner().invoke(app, argv))
    assert cli.exit_code == 0, cli.output
    assert [m["name"] for m in found["matches"]] == [m["name"] for m in json.loads(cli.stdout)["matches"]]
    top = found["matches"][0]
    assert (top["name"], found["query"]) == ("mcp__basic__echo", "return the message unchanged")
    assert {"term": "unchanged", "fields": ["description"]} in top["terms"] and "unchanged (description)" in top["why"]
    assert "mcp__basic__add" not in [m["name"] for m in denied["matches"]]
    assert (empty.status_code, too_many.status_code) == (400, 400)
    assert "needs ?q=" in empty.json()["error"] and "from 1 to 50" in too_many.json()["error"]
