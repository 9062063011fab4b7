"""Subagents in Chromium: a task's card expands into its subagent's own calls, and the Agents view beside Skills
turns an agent off for `kairox agents list` too."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.servers.model_server import ScriptedModelServer
from tests.web_browser._browser import Gui, screenshot
from tests.web_browser.test_conversation import KEY, config, open_session, read, send
from tests.web_browser.test_gui import kairox

pytestmark = pytest.mark.timeout(240)


def test_a_task_card_expands_into_its_childs_calls_and_the_agents_view_turns_one_off(
    workspace: Path, isolated_home: Path, gui_factory: Callable[..., Gui], page: Page
) -> None:
    (workspace / "notes.txt").write_text("alpha\n", encoding="utf-8")
    (workspace / "todo.txt").write_text("beta\n", encoding="utf-8")
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reads the notes and reports.\ntools: Read, Grep\ncolor: green\n---\n"
        "REVIEWER: read what you are told, then report.\n",
        encoding="utf-8",
    )
    task = {"subagent_type": "reviewer", "description": "read the notes", "prompt": "Read notes.txt and todo.txt."}
    script = [
        {"reply": "tool_calls", "calls": [{"id": "t1", "name": "task", "arguments": task}]},
        {"reply": "text", "text": "The reviewer read both.", "expect": {"tool_results": {"t1": "alpha, beta"}}},
    ]
    child = [read("c1", "notes.txt"), read("c2", "todo.txt"), {"reply": "text", "text": "alpha, beta"}]
    with ScriptedModelServer("openai", script, routes={"REVIEWER:": child}) as model:
        config(isolated_home, model)
        gui = gui_factory(workspace, {"KAIROX_TEST_MODEL_KEY": KEY})
        open_session(page, gui)
        send(page, "Have the notes reviewed.")
        expect(page.locator('[data-role="assistant"]').last).to_have_text("The reviewer read both.", timeout=60_000)
        card = page.locator('[data-call="t1"]')
        expect(card).to_have_attribute("data-state", "ok")
        nested = card.locator("[data-children] .tool-card")
        expect(nested).to_have_count(2)
        expect(nested.first).to_have_attribute("data-state", "ok")
        expect(card.locator("[data-children] > summary")).to_have_text("reviewer: 2 calls")
        expect(card.locator("[data-children] [data-decision]").first).to_have_text("allow")
        # the child's calls are inside the task's card, not cards of the conversation
        expect(page.locator('.tool-card[data-call$="/c1"]')).to_have_count(1)
        assert page.locator(".conversation > .tool-card, [data-call] ~ [data-call$='/c1']").count() == 0
        card.scroll_into_view_if_needed()
        screenshot(page, "session-subagent")

    page.click('[data-nav="agents"]')
    row = page.locator('[data-agent="reviewer"]')
    expect(row).to_contain_text("Reads the notes and reports.")
    expect(row).to_contain_text("tools: fs.read, search.ripgrep")
    expect(page.locator('[data-agent="general-purpose"]')).to_be_visible()
    switch = row.get_by_role("checkbox")
    expect(switch).to_be_checked()
    row.locator("label.toggle").click()
    expect(switch).not_to_be_checked()
    screenshot(page, "agents")
    listed = json.loads(kairox(workspace, "agents", "list", "--json").stdout)["agents"]
    assert {a["name"]: a["enabled"] for a in listed} == {"general-purpose": True, "reviewer": False}
