"""The working folder is part of the command (attack corpus, class 12): ``shell.exec``'s ``cwd`` changes what
``make test``, ``./run.sh`` or ``npm test`` run, as ``cd DIR && ...`` would, so an allow rule for the command
alone does not cover it there; deny rules hold wherever it runs, and the workspace root is the plain case.

Each call really runs through the registry under bubblewrap: a marker the vendored build file would create must
never appear."""

from pathlib import Path

import pytest
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import SHELL, engine, workspace

from kairox.config import ApprovalPolicy
from kairox.policy import DecisionSource, Rule, Verdict
from kairox.registry import build_registry
from kairox.tools import ToolCall

ALLOWED = ("make test*", "./run.sh*")


def _vendored(ws: Path) -> Path:
    """A vendored package with build files of its own that create a marker when they run."""
    package = ws / "vendor" / "pkg"
    package.mkdir(parents=True)
    marker = ws.parent / "tmp" / "marker"
    (package / "Makefile").write_text(f"test:\n\ttouch {marker}\n")
    (package / "run.sh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (package / "run.sh").chmod(0o755)
    (ws / "Makefile").write_text("test:\n\t@echo root tests\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho root script\n")
    (ws / "run.sh").chmod(0o755)
    return marker


@pytest.mark.anyio
@pytest.mark.parametrize("command", ["make test", "./run.sh"])
@pytest.mark.parametrize("cwd", ["vendor/pkg", "./vendor/pkg/", "vendor/../vendor/pkg"])
async def test_an_allow_rule_for_a_command_does_not_cover_it_in_another_folder(
    tmp_path: Path, command: str, cwd: str
) -> None:
    ws = workspace(tmp_path)
    marker = _vendored(ws)
    rules = [
        Rule(action="allow", pattern=f"shell.exec({p})", layer="user", file="kairox.toml", line=i)
        for i, p in enumerate(ALLOWED, start=1)
    ]
    registry = await build_registry(
        settings(ws, *rules, approval=ApprovalPolicy.UNTRUSTED), approver=ScriptedApprover()
    )
    result = await registry.call(ToolCall(name="shell.exec", arguments={"command": command, "cwd": cwd}))
    assert result.is_error
    assert not marker.exists()
    root = await registry.call(ToolCall(name="shell.exec", arguments={"command": command}))
    assert not root.is_error, root.text_content()
    assert "root" in root.text_content()


@pytest.mark.parametrize("cwd", [".", "./", "", None])
def test_the_workspace_root_as_cwd_is_the_plain_command(tmp_path: Path, cwd: str | None) -> None:
    policy = engine(
        workspace(tmp_path), *(("allow", f"shell.exec({p})") for p in ALLOWED), approval=ApprovalPolicy.UNTRUSTED
    )
    arguments = {"command": "make test"} | ({} if cwd is None else {"cwd": cwd})
    assert policy.decide(SHELL, arguments).verdict is Verdict.ALLOW


def test_a_deny_rule_holds_in_any_folder(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    policy = engine(ws, ("deny", "shell.exec(rm*)"), ("allow", "shell.exec(cd *)"), approval=ApprovalPolicy.UNTRUSTED)
    decision = policy.decide(SHELL, {"command": "rm -rf build", "cwd": "src"})
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE)


@pytest.mark.anyio
async def test_the_person_asked_sees_the_folder_the_command_runs_in(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    marker = _vendored(ws)
    approver = ScriptedApprover()
    registry = await build_registry(settings(ws, approval=ApprovalPolicy.UNTRUSTED), approver=approver)
    await registry.call(ToolCall(name="shell.exec", arguments={"command": "make test", "cwd": "vendor/pkg"}))
    await registry.call(ToolCall(name="shell.exec", arguments={"command": "make test", "cwd": "."}))
    assert [r.command for r in approver.requests] == ["cd vendor/pkg && make test", "make test"]
    assert not marker.exists()
