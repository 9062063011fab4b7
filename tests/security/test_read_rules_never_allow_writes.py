"""An allow rule on reading files vouches for reading only. ``fs.edit`` reads the file it rewrites, so ``fs.read``
deny and ask rules hold for it; an ``fs.read`` allow rule must never let it write without the approval the mode
asks for (the example workspace's ``allow = ["fs.read(./**)"]`` once approved every edit under ``untrusted``)."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import workspace

from kairox.config import ApprovalPolicy
from kairox.policy import Rule
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio

READ_ALLOWS = ["fs.read(./**)", "fs.read(**)", "fs.read(./notes.txt)", "fs.read(*)", "fs.read"]


@pytest.mark.parametrize("pattern", READ_ALLOWS)
async def test_an_allow_rule_on_reading_does_not_approve_an_edit(tmp_path: Path, pattern: str) -> None:
    ws = workspace(tmp_path)
    (ws / "notes.txt").write_text("before\n")
    allow = Rule(action="allow", pattern=pattern, layer="project", file="kairox.toml", line=3)
    approver = ScriptedApprover()
    registry = await build_registry(settings(ws, allow, approval=ApprovalPolicy.UNTRUSTED), approver=approver)
    edit = await registry.call(
        ToolCall(name="fs.edit", arguments={"path": "notes.txt", "old_string": "before", "new_string": "after"})
    )
    assert edit.is_error and len(approver.requests) == 1 and approver.requests[0].tool == "fs.edit"
    assert (ws / "notes.txt").read_text() == "before\n"
    read = await registry.call(ToolCall(name="fs.read", arguments={"path": "notes.txt"}))
    assert (
        not read.is_error and "before" in read.text_content() and len(approver.requests) == 1
    )  # the rule still allows reading


@pytest.mark.parametrize("action", ["deny", "ask"])
async def test_deny_and_ask_rules_on_reading_still_hold_for_an_edit(tmp_path: Path, action: str) -> None:
    ws = workspace(tmp_path)
    (ws / "secret.txt").write_text("before\n")
    rule = Rule(action=action, pattern="fs.read(./secret.txt)", layer="user", file="kairox.toml", line=1)
    approver = ScriptedApprover()
    registry = await build_registry(settings(ws, rule, approval=ApprovalPolicy.ON_REQUEST), approver=approver)
    edit = await registry.call(
        ToolCall(name="fs.edit", arguments={"path": "secret.txt", "old_string": "before", "new_string": "after"})
    )
    assert edit.is_error and (ws / "secret.txt").read_text() == "before\n"
    assert len(approver.requests) == (1 if action == "ask" else 0)
