"""Focus on the main screen: Esc always comes back to the prompt, Tab reaches the prompt before anything else, keys
typed elsewhere land in the prompt, and Enter (after /skills, or anywhere) never opens a tool call: Ctrl+O does."""

from pathlib import Path

import pytest
from tests.agent._support import make_workspace
from tests.tui.test_session_app import app_for, type_text, until

from kairox.agent import AssistantMessageCompleted
from kairox.registry import ToolCallDecided, ToolCallFinished
from kairox.tui._composer import Composer
from kairox.tui._conversation import ToolCallBlock
from kairox.tui._panels import TextPanel
from kairox.tui._toggles import TogglePanel

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def add_tool_calls(app: object, count: int) -> None:
    calls = tuple(
        {"id": f"c{i}", "tool": "fs.read", "name": "fs_read", "arguments": {"path": f"f{i}.txt"}} for i in range(count)
    )
    app.handle_event(AssistantMessageCompleted(turn=1, text="Reading.", tool_calls=calls))  # type: ignore[attr-defined]
    for i in range(count):
        app.handle_event(
            ToolCallDecided(call_id=f"c{i}", tool="fs.read", decision="allow", reason="mode", source="mode")
        )  # type: ignore[attr-defined]
        app.handle_event(
            ToolCallFinished(call_id=f"c{i}", tool="fs.read", duration_ms=2.0, size_chars=10, is_error=False)
        )  # type: ignore[attr-defined]


async def test_esc_and_tab_come_back_to_the_prompt_and_enter_never_opens_a_tool_call(
    tmp_path: Path, isolated_home: Path
) -> None:
    app = app_for(make_workspace(tmp_path / "repo"))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.context is not None)
        composer = app.query_one(Composer)
        add_tool_calls(app, 3)
        await pilot.pause(0.1)
        blocks = list(app.query(ToolCallBlock))
        table = app.query_one("#servers")
        table.focus()
        await pilot.press("escape")
        after_escape = app.focused
        table.focus()
        await pilot.press("tab")
        after_tab = app.focused
        await pilot.press("shift+tab", "shift+tab")  # backwards: the servers table, then round to the prompt
        backwards = app.focused
        table.focus()
        await type_text(pilot, "hello")
        typed, typed_focus = composer.text, app.focused
        composer.load_text("")
        await type_text(pilot, "/skills")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TogglePanel))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TogglePanel))
        await pilot.press("enter", "enter")
        open_after_enter = [not b.collapsed for b in blocks]
        focus_after_panel = app.focused
        await pilot.press("ctrl+o")
        expanded = [not b.collapsed for b in blocks]
        await pilot.press("ctrl+o")
        collapsed = [b.collapsed for b in blocks]
        await type_text(pilot, "/help")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TextPanel))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TextPanel))
        after_help = app.focused
    assert len(blocks) == 3
    assert after_escape is composer and after_tab is composer and backwards is composer
    assert typed == "hello" and typed_focus is composer
    assert open_after_enter == [False, False, False] and focus_after_panel is composer
    assert expanded == [True, True, True] and collapsed == [True, True, True]
    assert after_help is composer
