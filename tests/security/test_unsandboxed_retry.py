"""``--yes`` never runs a command outside the sandbox (attack corpus, class 11): under ``approval_policy =
"on_failure"`` a command the sandbox stopped is offered a retry without it, and that retry may write what the
sandbox keeps read-only (a git hook, project configuration). ``--yes`` approves what the policy asks once, but
not writes to protected paths, so it does not approve the retry either; a person at a prompt still can."""

import json
from pathlib import Path

import pytest
from tests.helpers import kairox
from tests.registry._support import settings
from tests.security._support import workspace

from kairox.cli._approver import YesApprover
from kairox.config import ApprovalPolicy
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.registry import build_registry
from kairox.tools import ToolCall

HOOK_WRITES = [
    "echo 'rm -rf ~' > .git/hooks/pre-commit",
    "printf 'x' >> .git/config",
    "echo '[policy]' > kairox.toml",
    "echo x > .kairox/kairox.local.toml",
]


def test_kairox_tools_call_yes_does_not_retry_outside_the_sandbox(tmp_path: Path, isolated_home: Path) -> None:
    ws = workspace(tmp_path)
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "kairox.toml").write_text("")
    (ws / ".kairox").mkdir()
    (isolated_home / "kairox.toml").write_text('[policy]\napproval_policy = "on_failure"\n')
    for line in HOOK_WRITES:
        run = kairox("-w", ws, "tools", "call", "shell.exec", json.dumps({"command": line}), "--yes")
        assert run.code != 0, (line, run.stdout, run.stderr)
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert (ws / "kairox.toml").read_text() == ""
    assert not (ws / ".kairox" / "kairox.local.toml").exists()


@pytest.mark.anyio
async def test_yes_refuses_the_retry_and_a_person_may_still_approve_it(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / ".git" / "hooks").mkdir(parents=True)
    hook = ws / ".git" / "hooks" / "pre-commit"
    call = ToolCall(name="shell.exec", arguments={"command": f"echo ran > {hook}"})

    refused = await build_registry(settings(ws, approval=ApprovalPolicy.ON_FAILURE), approver=YesApprover())
    result = await refused.call(call)
    assert result.is_error and not hook.exists()

    asked: list[ApprovalRequest] = []

    class Person:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            return ApprovalAnswer.allow_once()

    approved = await build_registry(settings(ws, approval=ApprovalPolicy.ON_FAILURE), approver=Person())
    assert not (await approved.call(call)).is_error
    assert hook.read_text() == "ran\n"
    assert [(r.source, r.unsandboxed) for r in asked] == [("sandbox", True)]
