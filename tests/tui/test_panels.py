"""Panels and the trace filter in the running TUI (no model configured: the panels work without one). /mcp
restarts and disables servers of the running manager, asking first when the write goes into a file of an
untrusted workspace; /skills writes its toggle to the user layer."""

import sys
import tomllib
from pathlib import Path

import pytest
from tests.agent._support import SERVERS, make_workspace
from tests.tui.test_session_app import app_for, paste_text, type_text, until
from textual.widgets import DataTable, Static

from kairox._rpc._status import ServerStatus
from kairox.config import trust_workspace
from kairox.runtime import CONFIG_WRITE_TOOL
from kairox.tui._approval import ApprovalScreen
from kairox.tui._panels import McpPanel, TextPanel
from kairox.tui._toggles import TogglePanel

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def servers_config(home: Path) -> Path:
    user = home / "kairox.toml"
    user.write_text(
        f'[mcp_servers.alpha]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n\n'
        f'[mcp_servers.broken]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "crash_at_start.py"}"]\n',
        encoding="utf-8",
    )
    return user


async def test_mcp_panel_restarts_and_disables_servers_of_the_running_manager(
    tmp_path: Path, isolated_home: Path
) -> None:
    user = servers_config(isolated_home)
    app = app_for(make_workspace(tmp_path / "repo"))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        manager = app.context.mcp
        alpha = manager.clients["alpha"]
        first_pid = alpha.pid
        await paste_text(pilot, "/mcp")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, McpPanel))
        assert app.screen.selected == "alpha"
        await pilot.press("r")
        await until(pilot, lambda: "restart alpha: done" in app.screen.status_line)
        assert alpha.status is ServerStatus.READY and alpha.pid not in (None, first_pid)
        assert any(s.origin == "alpha" for s in app.context.tools())
        await pilot.press("e")
        await until(pilot, lambda: "disable alpha: done" in app.screen.status_line)
        assert alpha.status is ServerStatus.STOPPED and alpha.pid is None
        assert not any(s.origin == "alpha" for s in app.context.tools())
        assert tomllib.loads(user.read_text())["mcp_servers"]["alpha"]["enabled"] is False
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, McpPanel))
        row = app.board.get("mcp", "alpha")
    assert row is not None
    assert str(row.status) == "disabled"  # off in the configuration, not just stopped


async def test_trace_filters_errors_only_and_one_server(tmp_path: Path, isolated_home: Path) -> None:
    servers_config(isolated_home)
    app = app_for(make_workspace(tmp_path / "repo"))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        log = app.query_one("#events")

        def shown() -> list[str]:
            return [line.text for line in log.lines]

        every = shown()
        assert any("alpha: ready" in line for line in every) and any("broken: failed" in line for line in every)
        await pilot.press("f3")
        errors = shown()
        assert any("broken: failed" in line for line in errors), errors
        assert not any("ready" in line or "starting" in line for line in errors), errors
        await pilot.press("f3")  # off again; a server filter combines with it
        await paste_text(pilot, "/trace alpha")
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert not app.errors_only and shown() and all("alpha" in line for line in shown()), shown()
        await paste_text(pilot, "/trace all")
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert shown() == every


async def test_composer_completes_commands_and_workspace_paths_and_recalls_prompts(
    tmp_path: Path, isolated_home: Path
) -> None:
    app = app_for(make_workspace(tmp_path / "repo"))
    async with app.run_test(size=(140, 40)) as pilot:
        composer = app.query_one("#composer")
        await type_text(pilot, "/do")
        await pilot.press("tab")
        assert composer.text == "/doctor "  # the menu's one match, a space after it for arguments
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TextPanel))
        assert "Doctor" in app.screen.panel_title
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TextPanel))
        await type_text(pilot, "read @shop/ca")
        await pilot.press("tab")
        assert composer.text == "read @shop/cart.py "
        composer.load_text("")
        await pilot.press("up")
        assert composer.text == "/doctor"


async def test_skills_panel_toggle_is_saved_in_the_user_layer(tmp_path: Path, isolated_home: Path) -> None:
    app = app_for(make_workspace(tmp_path / "repo"))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        await paste_text(pilot, "/skills")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TogglePanel))
        table = app.screen.query_one(DataTable)
        assert "release-notes" in str(table.get_row_at(0)[1])
        await pilot.press("space")
        await pilot.pause(0.1)
        status = app.screen.status_line
        entry = next(e for e in app.context.skills.entries() if e.skill.name == "release-notes")
    config = tomllib.loads((isolated_home / "kairox.toml").read_text())
    assert status.startswith("disabled release-notes in ")
    assert config["skills"]["entries"]["release-notes"]["enabled"] is False
    assert entry.enabled is False


def _files(*roots: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for root in roots for path in sorted(root.rglob("*")) if path.is_file()}


def project_server(workspace: Path) -> Path:
    """A workspace whose own kairox.toml declares server ``alpha``: the file the toggle writes."""
    project = workspace / "kairox.toml"
    project.write_text(
        "# the project's servers\n[mcp_servers.alpha]\n"
        f'command = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n'
    )
    return project


async def test_mcp_panel_asks_before_writing_a_project_file_of_an_untrusted_workspace(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    project = project_server(workspace)
    app = app_for(workspace)
    assert app.resolved.trusted is False
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        await paste_text(pilot, "/mcp")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, McpPanel))
        panel = app.screen
        assert panel.selected == "alpha"
        before = _files(workspace, isolated_home)

        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        asked = app.screen.request
        assert (asked.tool, asked.arguments, asked.grants, asked.layers) == (
            CONFIG_WRITE_TOOL,
            {"path": str(project), "change": "mcp_servers.alpha.enabled = false"},
            (),
            (),
        )
        assert asked.reason.startswith(f"{project} is the project file of a workspace you have not trusted")
        await pilot.press("d")
        await until(pilot, lambda: panel.busy is None and "disable alpha:" in panel.status_line)
        assert app.screen is panel
        assert panel.status_line.startswith(
            f"disable alpha: {project} is unchanged (mcp_servers.alpha.enabled = false): denied in the approval dialog"
        )
        assert "kairox trust" in str(panel.query_one("#mcp-info", Static).render())
        assert _files(workspace, isolated_home) == before
        assert app.context.mcp.clients["alpha"].config.enabled is True

        panel.status_line = ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("o")
        await until(pilot, lambda: panel.busy is None and "disable alpha:" in panel.status_line)
        assert panel.status_line == f"disable alpha: done (saved in {project})"
        written = project.read_text()
        assert (
            written.startswith("# the project's servers\n")
            and tomllib.loads(written)["mcp_servers"]["alpha"]["enabled"] is False
        )
        assert _files(isolated_home) == {k: v for k, v in before.items() if k.startswith(str(isolated_home))}


async def test_mcp_panel_writes_a_project_file_of_a_trusted_workspace_without_asking(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    project = project_server(workspace)
    trust_workspace(workspace)
    app = app_for(workspace)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(
            pilot, lambda: app.context is not None and app.context.mcp.clients["alpha"].status is ServerStatus.READY
        )
        await paste_text(pilot, "/mcp")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, McpPanel))
        panel = app.screen
        await pilot.press("e")
        await until(pilot, lambda: panel.busy is None and "disable alpha:" in panel.status_line)
        assert panel.status_line == f"disable alpha: done (saved in {project})"
        assert app.screen is panel and not any(isinstance(s, ApprovalScreen) for s in app.screen_stack)
        assert app.context.mcp.clients["alpha"].status is ServerStatus.STOPPED
    assert tomllib.loads(project.read_text())["mcp_servers"]["alpha"]["enabled"] is False


async def test_tools_query_shows_the_ranked_search_and_never_a_denied_tool(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.alpha]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n\n'
        '[policy.rules]\ndeny = ["mcp__alpha__add"]\n',
        encoding="utf-8",
    )
    app = app_for(make_workspace(tmp_path / "repo"))
    shown: list[str] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None and any(s.origin == "alpha" for s in app.context.tools()))
        for query in ("return the message unchanged", "add two integers"):
            await paste_text(pilot, f"/tools {query}")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, TextPanel))
            assert isinstance(app.screen, TextPanel) and app.screen.panel_title == "Tool search"
            shown.append(app.screen.text)
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, TextPanel))
    echo, add = shown
    assert echo.splitlines()[2].startswith("  1. mcp__alpha__echo  (") and "unchanged (description)" in echo
    assert "mcp__alpha__add" not in add  # denied by name: hidden from the model, so never found
