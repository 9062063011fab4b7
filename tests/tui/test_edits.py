"""Edits as diffs: an fs.edit / fs.write that asks shows the unified diff of the workspace's file in the approval
dialog, answered with y (accept) or n (reject), and the conversation's tool block keeps the diff."""

from pathlib import Path

import pytest
from tests.agent._support import CART, make_workspace, user_config
from tests.servers.model_server import ScriptedModelServer
from tests.tui.test_session_app import api_key, app_for, calls, paste_text, until

from kairox.tui._approval import ApprovalScreen
from kairox.tui._conversation import ToolCallBlock
from kairox.tui._diff import edit_diff

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
__all__ = ["api_key"]

EDIT = {
    "path": "shop/cart.py",
    "old_string": "        return sum(self.items)\n",
    "new_string": "        return sum(self.items) - self.discount\n",
}


@pytest.mark.parametrize(
    "rules", ['"fs.edit", "fs.write"', '"fs.edit(shop/**)", "fs.write(./shop/**)"'], ids=["bare", "path rules"]
)
async def test_an_edit_asks_with_its_diff_y_accepts_n_rejects_and_the_block_keeps_the_diff(
    tmp_path: Path, isolated_home: Path, rules: str
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        calls(("e1", "fs_edit", EDIT)),
        {
            **calls(("w1", "fs_write", {"path": "shop/prices.txt", "content": "tea 250\ncoffee 300\n"})),
            "expect": {"tool_results": {"e1": "cart.py"}},
        },
        {"reply": "text", "text": "One edit made.", "expect": {"tool_results": {"w1": "denied"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra=f"[policy.rules]\nask = [{rules}]\n")
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            await paste_text(pilot, "Apply the discount.")
            await pilot.press("enter")
            await until(
                pilot, lambda: isinstance(app.screen, ApprovalScreen) and bool(app.screen.query("#approval-diff"))
            )
            first_title = str(app.screen.query_one("#approval-title").render())
            first_diff = str(app.screen.query_one("#approval-diff").render())
            first_choices = str(app.screen.query_one("#approval-choices").render())
            await pilot.press("y")
            await until(
                pilot,
                lambda: (
                    isinstance(app.screen, ApprovalScreen)
                    and app.screen.request.tool == "fs.write"
                    and bool(app.screen.query("#approval-diff"))
                ),
            )
            second_title = str(app.screen.query_one("#approval-title").render())
            second_diff = str(app.screen.query_one("#approval-diff").render())
            await pilot.press("n")
            await until(
                pilot,
                lambda: (
                    not app.turn_running
                    and "w1" in app.query_one("#conversation").blocks
                    and app.query_one("#conversation").blocks["w1"].outcome
                ),
            )
            blocks = {b.call_id: b for b in app.query(ToolCallBlock)}
            edit_body = str(blocks["e1"]._body.render())
    assert first_title == "Accept this edit of shop/cart.py (+1 −1)?  fs.edit"
    assert first_diff.splitlines()[:2] == ["--- a/shop/cart.py", "+++ b/shop/cart.py"]
    assert (
        "-        return sum(self.items)" in first_diff.splitlines()
        and "+        return sum(self.items) - self.discount" in first_diff.splitlines()
    )
    assert first_choices.splitlines()[0] == "[y] accept the edit (once)   [n] reject it"
    assert second_title == "Accept this edit of shop/prices.txt (new file)?  fs.write"
    assert second_diff.splitlines() == [
        "--- /dev/null",
        "+++ b/shop/prices.txt",
        "@@ -0,0 +1,2 @@",
        "+tea 250",
        "+coffee 300",
    ]
    assert (workspace / "shop" / "cart.py").read_text() == CART.replace(
        "sum(self.items)\n", "sum(self.items) - self.discount\n"
    )
    assert not (workspace / "shop" / "prices.txt").exists()
    assert blocks["e1"].heading.startswith("fs.edit shop/cart.py +1 −1 · allow by approver")
    assert blocks["w1"].heading.startswith("fs.write shop/prices.txt new file · deny")
    assert "+        return sum(self.items) - self.discount" in edit_body.splitlines()


def test_no_diff_outside_the_workspace_and_a_missing_old_string_is_named(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo")
    (tmp_path / "outside.txt").write_text("secret\n")
    assert edit_diff("fs.write", {"path": "../outside.txt", "content": "x"}, workspace) is None
    assert edit_diff("fs.read", {"path": "shop/cart.py"}, workspace) is None
    missing = edit_diff("fs.edit", {"path": "shop/cart.py", "old_string": "nowhere", "new_string": "x"}, workspace)
    assert missing is not None and missing.problem == "shop/cart.py: old_string is not in the file; the edit will fail"
    twice = edit_diff(
        "fs.edit", {"path": "shop/cart.py", "old_string": "self.items", "new_string": "self.lines"}, workspace
    )
    assert (
        twice is not None
        and twice.problem == "shop/cart.py: old_string occurs 2 times (replace_all is not set); the edit will fail"
    )
    every = edit_diff(
        "fs.edit",
        {"path": "shop/cart.py", "old_string": "self.items", "new_string": "self.lines", "replace_all": True},
        workspace,
    )
    assert every is not None and (every.added, every.removed, every.problem) == (2, 2, None)


async def test_the_duration_shown_leaves_out_the_time_the_person_took_to_answer(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    script = [
        calls(("w1", "fs_write", {"path": "a.txt", "content": "one"})),
        {"reply": "text", "text": "Written.", "expect": {"tool_results": {"w1": "a.txt"}}},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write"]\n')
        app = app_for(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.session is not None)
            await paste_text(pilot, "Write it.")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await pilot.pause(1.5)  # reading the dialog
            await pilot.press("y")
            await until(
                pilot,
                lambda: (
                    not app.turn_running
                    and "w1" in app.query_one("#conversation").blocks
                    and app.query_one("#conversation").blocks["w1"].outcome
                ),
            )
            block = app.query_one("#conversation").blocks["w1"]
            outcome, waited = block.outcome, block.waited
    shown_ms = float(outcome.split(" in ")[1].split(" ms")[0])
    assert outcome.startswith("ok in ") and shown_ms < 1500, outcome
    assert waited.startswith("the approval took ") and float(waited.split("took ")[1].split(" s")[0]) >= 1.5
