"""The session page in Chromium: the model's plan in the session header, a Rewind button on each prompt that shows
what it would put back and then does it (files, or files and the conversation); the page uses a wide window."""

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.servers.model_server import ScriptedModelServer
from tests.web_browser._browser import Gui, screenshot
from tests.web_browser.test_conversation import KEY, config, open_session, send

pytestmark = pytest.mark.timeout(240)

TODOS = [
    {"content": "Read the notes", "status": "completed"},
    {"content": "Rewrite the notes", "status": "in_progress"},
    {"content": "Tell the user", "status": "pending"},
]


def test_the_plan_is_in_the_session_header_and_rewind_puts_the_file_and_the_conversation_back(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    (workspace / "notes.txt").write_text("first\n", encoding="utf-8")
    script = [
        {"reply": "tool_calls", "calls": [{"id": "p1", "name": "todo_write", "arguments": {"todos": TODOS}}]},
        {
            "reply": "tool_calls",
            "calls": [{"id": "w1", "name": "fs_write", "arguments": {"path": "notes.txt", "content": "second\n"}}],
        },
        {"reply": "text", "text": "The notes now say second."},
    ]
    with ScriptedModelServer("openai", script) as model:
        config(isolated_home, model)
        gui = gui_factory(workspace, {"KAIROX_TEST_MODEL_KEY": KEY})
        page.set_viewport_size({"width": 1900, "height": 1000})
        open_session(page, gui)
        send(page, "Rewrite the notes.")
        plan = page.locator("[data-plan] li")
        expect(plan).to_have_text(["[x] Read the notes", "[>] Rewrite the notes", "[ ] Tell the user"], timeout=60_000)
        expect(page.locator('[data-action="send"]')).to_be_visible(timeout=60_000)
        assert (workspace / "notes.txt").read_text() == "second\n"
        assert page.locator(".session").bounding_box()["width"] > 1400, "the page uses a wide window"  # type: ignore[index]
        page.click('[data-action="rewind"]')
        dialog = page.locator("[data-rewind-dialog]")
        expect(dialog).to_contain_text("put back  notes.txt")
        screenshot(page, "session-plan-rewind")
        page.click('[data-action="rewind-all"]')
        expect(page.locator("[data-rewound]")).to_have_text(
            "rewound to before turn 1 (the conversation too); put back: notes.txt; removed: none", timeout=60_000
        )
        expect(page.locator('[data-role="user"]')).to_have_count(0)
        page.reload()
        expect(page.locator("[data-plan] li")).to_have_count(3)  # the plan stays: it is the model's, not the turn's
        expect(page.locator('[data-role="user"]')).to_have_count(0)
    assert (workspace / "notes.txt").read_text() == "first\n"
