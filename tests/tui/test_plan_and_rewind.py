"""The TUI against the scripted model: the plan panel above the prompt follows ``todo.write``, ``/rewind`` puts
the files back (and the conversation when chosen); keys typed in a panel never reach the prompt."""

from pathlib import Path

import pytest
from tests.agent._support import make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from tests.tui.test_session_app import app_for, ask, paste_text, until
from textual.widgets import Static

from kairox.config import resolve_config
from kairox.runtime import RuntimeOptions
from kairox.tui._app import KairoxApp
from kairox.tui._conversation import Conversation
from kairox.tui._panels import SessionPicker, TextPanel

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", "sk-test-0123456789abcdef")


def shown(app: KairoxApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_the_plan_panel_follows_the_model_and_rewind_puts_the_files_and_the_conversation_back(
    wire: str, tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    todos = [{"content": "Write the notes", "status": "in_progress"}, {"content": "Check them", "status": "pending"}]
    script = [
        {"reply": "tool_calls", "calls": [{"id": "p1", "name": "todo_write", "arguments": {"todos": todos}}]},
        {
            "reply": "tool_calls",
            "calls": [{"id": "w1", "name": "fs_write", "arguments": {"path": "notes.txt", "content": "rewritten\n"}}],
        },
        {"reply": "text", "text": "Notes rewritten."},
    ]
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        app = app_for(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            await ask(pilot, app, "Rewrite the notes", 6)
            assert shown(app, "#plan") == "[>] Write the notes\n[ ] Check them"
            assert app.query_one("#plan").border_title == "Plan"
            assert (workspace / "notes.txt").read_text() == "rewritten\n"
            await paste_text(pilot, "/rewind")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, SessionPicker))
            assert "put back  notes.txt" in str(app.screen.query_one("#picker-text", Static).render())
            await pilot.press("down", "enter")  # the files and the conversation
            await until(pilot, lambda: app.session is not None and app.session.messages == [])
            await pilot.pause(0.2)
            notices = [str(n.render()) for n in app.query_one(Conversation).query(".notice")]
    assert (workspace / "notes.txt").read_text() == "first note\n"
    assert any(
        n.startswith("rewound to before turn 1 (the conversation too); put back: notes.txt; removed: none")
        for n in notices
    )


async def test_keys_typed_in_a_panel_never_reach_the_prompt(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    app = KairoxApp(RuntimeOptions(workspace=workspace), resolve_config(workspace), start_session=False)
    async with app.run_test(size=(120, 40)) as pilot:
        app.cmd_model("")
        await until(pilot, lambda: isinstance(app.screen, TextPanel))
        await paste_text(pilot, "/quit")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, TextPanel) and app.is_running, "the panel stays; `q` is only a letter there"
        await pilot.press("escape")
        await pilot.pause(0.1)
        composer = app.query_one("#composer")
        assert app.screen is app.screen_stack[0] and app.focused is composer
        assert composer.text == "" and not app.query_one(Conversation).query(".user")
