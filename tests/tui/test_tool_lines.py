"""A collapsed tool call says what ran: the shell command, the file of an fs tool, the MCP tool with its main
argument, on one line cut to the width (brackets in a command are text, not markup)."""

import sys
from pathlib import Path

import pytest
from tests.agent._support import SERVERS, make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from tests.tui.test_session_app import api_key, app_for, calls, paste_text, until

from kairox.tui._conversation import ToolCallBlock

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
__all__ = ["api_key"]

COMMAND = (
    "echo [pushed] origin master && echo and a long tail of words "
    "so that the line is wider than the conversation column " * 2
)


async def test_collapsed_tool_lines_name_the_command_the_path_and_the_mcp_argument(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        calls(
            ("s1", "shell_exec", {"command": COMMAND}),
            ("r1", "fs_read", {"path": "shop/cart.py"}),
            ("m1", "mcp__basic__echo", {"message": "hello   there"}),
        ),
        {"reply": "text", "text": "Done.", "expect": {"tool_results": {"s1": "pushed", "m1": "hello"}}},
    ]
    extra = (
        f'[mcp_servers.basic]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n\n'
        '[policy.rules]\nallow = ["shell.exec(echo *)", "mcp__basic__*"]\n'
    )
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra=extra)
        app = app_for(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            await paste_text(pilot, "Push it.")
            await pilot.press("enter")
            await until(
                pilot,
                lambda: (
                    not app.turn_running
                    and len(app.query(ToolCallBlock)) == 3
                    and all(b.outcome for b in app.query(ToolCallBlock))
                ),
            )
            await pilot.pause(0.2)
            blocks = {b.call_id: b for b in app.query(ToolCallBlock)}
            headings = {k: b.heading for k, b in blocks.items()}
            shown = {k: b._title.render_line(0).text for k, b in blocks.items()}  # the line as drawn
            sizes = {k: (b._title.size.width, b._title.size.height) for k, b in blocks.items()}
            column = app.query_one("#conversation").size.width
    assert headings["s1"].startswith(
        f"shell.exec {COMMAND[:71]}… · allow by rule shell.exec(echo *) · ok in "
    )  # cut: the outcome stays in view
    assert headings["r1"].startswith("fs.read shop/cart.py · allow by ")
    assert headings["m1"].startswith(
        "mcp__basic__echo hello there · allow by rule mcp__basic__* · ok in "
    )  # its one required argument
    assert (
        blocks["m1"].decision.startswith("allow by rule mcp__basic__* at ") and "kairox.toml:" in blocks["m1"].decision
    )  # the body says where
    assert all(" · ok in " in h for h in headings.values()), headings
    assert shown["s1"].startswith("▶ shell.exec echo [pushed] origin master")
    # one line, cut to the column with an ellipsis
    assert sizes["s1"][1] == 1 and sizes["s1"][0] <= column < len(headings["s1"]) and shown["s1"].rstrip().endswith("…")
