"""Y13: an approved call is never refused by the rule that asked for it, and a read made on behalf of a write (an
edit reads what it rewrites) is held to the rules on reading only.

The matrix: every write tool x the rule's tool (its own name, the ``fs.write`` family, ``fs.read``) x its shape
(a path, a glob, bare) x its action (ask, allow, deny) x the person's answer (yes, no)."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings

from kairox.policy import ApprovalAnswer, Rule
from kairox.registry import build_registry
from kairox.tools import ToolCall

BEFORE = "def f():\n    return 1\n"
AFTER = "def f():\n    return 2\n"
CALLS = {
    "fs.edit": {"path": "pkg/inv.py", "old_string": "return 1", "new_string": "return 2"},
    "fs.write": {"path": "pkg/inv.py", "content": AFTER},
}
SHAPES = {"path": "(pkg/inv.py)", "glob": "(pkg/**)", "root glob": "(./**)", "bare": ""}


def _holds(rule_tool: str, tool: str, action: str) -> bool:
    """Whether a rule on ``rule_tool`` holds for a call of ``tool`` (as ParsedRule.matches_tool reads it)."""
    if rule_tool == tool:
        return True
    if rule_tool == "fs.write":  # the family of tools that write the paths they are given
        return True
    # fs.edit reads what it rewrites: deny and ask rules on reading hold for it, an allow rule never vouches
    return rule_tool == "fs.read" and tool == "fs.edit" and action != "allow"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "inv.py").write_text(BEFORE)
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    return root


@pytest.mark.anyio
@pytest.mark.parametrize("answer", ["yes", "no"])
@pytest.mark.parametrize("action", ["ask", "allow", "deny"])
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("rule_tool", ["own", "fs.write", "fs.read"])
@pytest.mark.parametrize("tool", list(CALLS))
async def test_write_tools_under_every_rule_shape_and_answer(
    ws: Path, tool: str, rule_tool: str, shape: str, action: str, answer: str
) -> None:
    named = tool if rule_tool == "own" else rule_tool
    rule = Rule(action=action, pattern=f"{named}{SHAPES[shape]}", file="kairox.toml", line=1)
    approver = ScriptedApprover(
        answers=[ApprovalAnswer.allow_once() if answer == "yes" else ApprovalAnswer.deny("not now")]
    )
    registry = await build_registry(settings(ws, rule), approver=approver)

    result = await registry.call(ToolCall(name=tool, arguments=CALLS[tool]))

    holds = _holds(named, tool, action)
    asked = holds and action == "ask"
    written = not (holds and action == "deny") and not (asked and answer == "no")
    assert len(approver.requests) == (1 if asked else 0)
    assert (ws / "pkg" / "inv.py").read_text() == (AFTER if written else BEFORE)
    assert result.is_error is not written, result.text_content()
    if asked and answer == "no":
        assert "not now" in result.text_content()


@pytest.mark.anyio
async def test_an_approved_read_is_not_refused_by_the_ask_rule_that_asked(ws: Path) -> None:
    rule = Rule(action="ask", pattern="fs.read(pkg/**)", file="kairox.toml", line=1)
    approver = ScriptedApprover(answers=[ApprovalAnswer.allow_once(), ApprovalAnswer.allow_once()])
    registry = await build_registry(settings(ws, rule), approver=approver)
    read = await registry.call(ToolCall(name="fs.read", arguments={"path": "pkg/inv.py"}))
    listed = await registry.call(ToolCall(name="fs.list", arguments={"path": "pkg"}))
    assert read.text_content() == BEFORE
    assert listed.structured is not None and listed.structured["files"] == ["inv.py"]
    assert len(approver.requests) == 2


@pytest.mark.anyio
async def test_a_yes_answers_only_the_ask_rules_of_the_call_itself(ws: Path) -> None:
    """Listing the workspace root asks nothing, so the rule on pkg/** still keeps its file out of the listing; a
    deny rule on reading is never answered by a yes."""
    (ws / "pkg" / ".env").write_text("KEY=1\n")
    rules = (
        Rule(action="ask", pattern="fs.read(pkg/**)", file="kairox.toml", line=1),
        Rule(action="deny", pattern="fs.read(**/.env)", file="kairox.toml", line=2),
    )
    approver = ScriptedApprover(answers=[ApprovalAnswer.allow_once()])
    registry = await build_registry(settings(ws, *rules), approver=approver)
    root = await registry.call(ToolCall(name="fs.list", arguments={"respect_gitignore": False}))
    assert root.structured is not None and root.structured["files"] == []
    assert approver.requests == []
    folder = await registry.call(ToolCall(name="fs.list", arguments={"path": "pkg", "respect_gitignore": False}))
    assert folder.structured is not None and folder.structured["files"] == ["inv.py"]
    assert "deny rule 'fs.read(**/.env)'" in folder.text_content()
