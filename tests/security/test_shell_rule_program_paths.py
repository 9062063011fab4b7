"""An allow rule that names its program by path (``/usr/bin/git status*``) bounds the subcommand as ``git status*``
does (attack corpus, class 11): ``/usr/bin/git status-marker`` is a repository alias that runs anything, not
``git status``. Real git, real bwrap, the real registry; the marker file never appears."""

import shutil
from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import engine, shell, workspace
from tests.security.test_shell_rule_bounds import _repository, _rules

from kairox.config import ApprovalPolicy
from kairox.policy import DecisionSource, Verdict
from kairox.registry import build_registry
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio

GIT = shutil.which("git") or "/usr/bin/git"
ALLOWED = (f"{GIT} status*", f"{GIT} log:*")


@pytest.mark.parametrize("line", [f"{GIT} status-marker", f"{GIT} log-marker --oneline"])
async def test_a_rule_naming_the_program_by_path_does_not_reach_another_subcommand(tmp_path: Path, line: str) -> None:
    ws = workspace(tmp_path)
    _repository(ws)
    decision = shell(
        engine(ws, *(("allow", f"shell.exec({g})") for g in ALLOWED), approval=ApprovalPolicy.UNTRUSTED), line
    )
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.MODE), decision.reason
    approver = ScriptedApprover()
    registry = await build_registry(
        settings(ws, *_rules(*ALLOWED), approval=ApprovalPolicy.UNTRUSTED), approver=approver
    )

    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": line}))

    assert result.is_error and len(approver.requests) == 1
    assert not (ws / "marker").exists()


async def test_the_same_rule_still_runs_its_subcommand(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    _repository(ws)
    (ws / "victim").write_text("keep me\n")
    approver = ScriptedApprover()
    registry = await build_registry(
        settings(ws, *_rules(*ALLOWED), approval=ApprovalPolicy.UNTRUSTED), approver=approver
    )

    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": f"{GIT} status --short"}))

    assert not result.is_error and approver.requests == [], result.text_content()
    assert "victim" in result.text_content()
