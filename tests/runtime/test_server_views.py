"""One workspace with a ready, a failed, a disabled and a held-back server (real servers from tests/servers/): the
TUI (driven by Pilot), the GUI's API (the starlette app with its lifespan) and the command line (`mcp status
--json`, `lsp status --json`) show the same status and reason for each, because each renders the runtime's view."""

import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tests.agent._support import BIN, SERVERS, make_workspace
from tests.helpers import kairox
from tests.tui.test_session_app import until

from kairox._rpc._status import ServerStatus
from kairox.config import resolve_config
from kairox.runtime import RuntimeOptions

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

TOKEN = "test-token-0123456789"
EXPECTED = {
    ("mcp", "broken"): "failed",
    ("mcp", "off"): "disabled",
    ("mcp", "ready"): "ready",
    ("mcp", "team"): "held_back",
    ("lsp", "jedi"): "idle",
    ("lsp", "project-ls"): "held_back",
}


def _server(name: str, script: str, extra: str = "") -> str:
    return (
        f'[mcp_servers.{name}]\ncommand = "{sys.executable}"\n'
        f'args = ["{SERVERS / script}"]\nstartup_timeout_sec = 20\n{extra}\n'
    )


def _workspace(tmp_path: Path, home: Path) -> tuple[Path, Path]:
    workspace = make_workspace(tmp_path / "repo")
    (home / "kairox.toml").write_text(
        _server("ready", "basic_server.py")
        + _server("broken", "crash_at_start.py")
        + _server("off", "basic_server.py", "enabled = false")
        + f'[lsp_servers.jedi]\ncommand = "{BIN / "jedi-language-server"}"\nfile_patterns = ["*.py"]\n',
        encoding="utf-8",
    )
    marker = tmp_path / "team-started"
    # the project's server would leave a marker if it ran: an untrusted workspace must not start it
    (workspace / "kairox.toml").write_text(
        f'[mcp_servers.team]\ncommand = "{sys.executable}"\nargs = ["-c", "open({str(marker)!r}, \'w\')"]\n\n'
        f'[lsp_servers.project-ls]\ncommand = "{BIN / "jedi-language-server"}"\nfile_patterns = ["*.rs"]\n',
        encoding="utf-8",
    )
    return workspace, marker


async def _tui(workspace: Path) -> dict[tuple[str, str], tuple[str, str]]:
    from textual.widgets import DataTable

    from kairox.tui._app import KairoxApp

    by_label = {status.label: str(status) for status in ServerStatus}
    app = KairoxApp(RuntimeOptions(workspace=workspace), resolve_config(workspace))
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        await until(pilot, lambda: all(v.status is not ServerStatus.STARTING for v in app.board.views()))
        table = app.query_one("#servers", DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
    shown = {}
    for row in rows:
        kind, name = str(row[0]).split()[-2:]
        shown[(kind, name)] = (by_label[str(row[1])], str(row[4]))
    return shown


async def _gui(workspace: Path) -> list[dict[str, Any]]:
    from kairox.web import WebOptions, create_app

    app = create_app(WebOptions(workspace=workspace, port=8766, token=TOKEN))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://127.0.0.1:8766",
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=120,
        ) as client:
            await app.state.backend.ready_context()
            with anyio.fail_after(60):  # servers whose tools are cached come up beside the session, not before it
                while True:
                    servers: list[dict[str, Any]] = (await client.get("/api/servers")).json()["servers"]
                    if all(s["status"] != "starting" for s in servers):
                        return servers
                    await anyio.sleep(0.05)


async def test_tui_gui_and_cli_show_the_same_status_for_each_server(tmp_path: Path, isolated_home: Path) -> None:
    workspace, marker = _workspace(tmp_path, isolated_home)

    tui = await _tui(workspace)
    gui = {(s["kind"], s["name"]): s for s in await _gui(workspace)}
    mcp = {("mcp", s["name"]): s for s in kairox("mcp", "status", "--json", cwd=workspace).json()["servers"]}
    lsp = {("lsp", s["server"]): s for s in kairox("lsp", "status", "--json", cwd=workspace).json()["servers"]}
    cli = {**mcp, **lsp}

    assert {key: status for key, (status, _) in tui.items()} == EXPECTED
    assert {key: s["status"] for key, s in gui.items()} == EXPECTED
    assert {key: s["status"] for key, s in cli.items()} == EXPECTED
    # the same reason, word for word (the TUI's column shows its first 40 characters)
    for key in EXPECTED:
        reason = gui[key]["reason"]
        assert cli[key]["reason"] == reason, key
        assert tui[key][1] == ("" if reason is None else reason[:40] + ("…" if len(reason) > 40 else "")), key
    assert gui[("mcp", "team")]["reason"] == cli[("mcp", "team")]["reason"]
    assert "kairox trust" in gui[("mcp", "team")]["reason"] and "untrusted workspace" in gui[("mcp", "team")]["reason"]
    assert "kairox trust" in gui[("lsp", "project-ls")]["reason"]
    assert (
        gui[("mcp", "off")]["reason"]
        == f"disabled in the configuration ({isolated_home / 'kairox.toml'}:{_line(isolated_home, 'off')})"
    )
    assert gui[("mcp", "broken")]["reason"] == "the server exited with code 3 before finishing the MCP handshake"
    assert "missing API key" in gui[("mcp", "broken")]["stderr_tail"]
    assert (
        gui[("mcp", "ready")]["reason"] is None
        and gui[("mcp", "ready")]["tool_count"] == mcp[("mcp", "ready")]["tools"] > 0
    )
    assert gui[("mcp", "team")]["provenance"] == {"layer": "project", "file": str(workspace / "kairox.toml"), "line": 1}
    # how each server runs: the same words in the GUI and the CLI, a local server confined by default
    ready = gui[("mcp", "ready")]["confinement_text"]
    assert ready is not None and ready.startswith("confined: workspace_write, network on, writes "), ready
    assert mcp[("mcp", "ready")]["confinement_text"] == ready
    assert not marker.exists()


def _line(home: Path, name: str) -> int:
    lines = (home / "kairox.toml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line == f"[mcp_servers.{name}]")


def test_a_servers_tool_count_is_the_same_in_the_board_the_trace_and_mcp_status(
    tmp_path: Path, isolated_home: Path
) -> None:
    import json

    from tests.agent._support import EVERYTHING, NODE

    from kairox.mcp import McpServerReady
    from kairox.mcp._events import McpToolsChanged
    from kairox.registry import ToolsChanged
    from kairox.runtime import ServerBoard
    from kairox.tui._servers import describe

    workspace = make_workspace(tmp_path / "repo")
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_servers.everything]\ncommand = "{NODE}"\nargs = ["{EVERYTHING}"]\n'
    )
    trace = tmp_path / "trace.jsonl"
    assert kairox("--trace", trace, "context", "--json", cwd=workspace).code == 0
    status = kairox("mcp", "status", "--json", cwd=workspace).json()["servers"][0]
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    ready = next(e for e in events if e["event"] == "McpServerReady")
    listed = next(e for e in events if e["event"] == "ToolsChanged" and e["origin"] == "everything")
    board = ServerBoard(resolve_config(workspace), starting=True)
    board.apply(McpServerReady(server="everything", tools=ready["tools"]))
    board.apply(ToolsChanged(origin="everything", tools=listed["tools"]))
    board.apply(McpToolsChanged(server="everything", tools=("one",) * (ready["tools"] + 1)))  # its own list, re-read
    view = board.get("mcp", "everything")
    assert view is not None and view.tool_count == status["tools"] == listed["tools"] == ready["tools"] + 2
    entry = describe(McpServerReady(server="everything", tools=ready["tools"]))
    assert entry is not None and entry.text == "mcp everything: ready", "no second count in the trace"
    doctor = kairox("-c", 'policy.sandbox_policy="danger_full_access"', "doctor", "--json", cwd=workspace).json()
    task = [d for d in doctor["warnings"] if "only as a task" in d["reason"]]
    assert task and all(d["fix"] == "nothing to fix: this is for your information" for d in task), task
