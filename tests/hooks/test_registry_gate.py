"""Hooks through the real ToolRegistry gate: a pre_tool_use hook blocks, asks, or times out into a diagnostic."""

from pathlib import Path

import pytest

from kairox.config import HooksConfig, PolicyConfig
from kairox.config._models import HookConfig
from kairox.errors import ExtensionLoadFailure, Severity
from kairox.hooks import HookRegistry
from kairox.policy import ApprovalAnswer, ApprovalRequest, ApprovalScope, PolicySettings
from kairox.registry import build_registry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import ToolCall

pytestmark = pytest.mark.anyio


class RecordingApprover:
    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer(
            approved=self.approve, scope=ApprovalScope.ONCE, reason=None if self.approve else "declined in the test"
        )


def _settings(workspace: Path) -> RegistrySettings:
    policy = PolicySettings.from_config(PolicyConfig(), workspace=workspace, home=workspace / "home")
    sandbox = SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots, network_access=False)
    return RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=workspace / "spill")


async def _registry(
    workspace: Path, hooks: list[HookConfig], approver: RecordingApprover
) -> tuple[object, HookRegistry]:
    settings = _settings(workspace)
    hook_registry = HookRegistry.from_config(
        HooksConfig(pre_tool_use=hooks), workspace=settings.policy.workspace, sandbox=settings.sandbox
    )
    registry = await build_registry(settings, approver=approver, hooks=hook_registry)
    return registry, hook_registry


async def test_exit_code_2_blocks_fs_write_with_stderr_as_reason(tmp_path: Path) -> None:
    hook = HookConfig(command="echo 'writes to notes are frozen' >&2; exit 2", matcher="fs.write")
    approver = RecordingApprover(approve=True)
    registry, _ = await _registry(tmp_path, [hook], approver)

    result = await registry.call(ToolCall(name="fs.write", arguments={"path": "notes.txt", "content": "hello"}))  # type: ignore[attr-defined]

    assert result.is_error
    assert result.text_content() == "fs.write was not run: writes to notes are frozen"
    assert not (tmp_path / "notes.txt").exists()
    assert approver.requests == []


async def test_permission_decision_ask_turns_an_allowed_write_into_an_approval(tmp_path: Path) -> None:
    hook = HookConfig(
        command='echo \'{"permissionDecision": "ask", "permissionDecisionReason": "review writes"}\'', matcher="Write"
    )
    approver = RecordingApprover(approve=True)
    registry, _ = await _registry(tmp_path, [hook], approver)

    result = await registry.call(ToolCall(name="fs.write", arguments={"path": "notes.txt", "content": "hello"}))  # type: ignore[attr-defined]

    assert not result.is_error, result.text_content()
    assert [(r.tool, r.reason) for r in approver.requests] == [("fs.write", "review writes")]
    assert (tmp_path / "notes.txt").read_text() == "hello"


async def test_declined_approval_after_hook_ask_leaves_the_file_unwritten(tmp_path: Path) -> None:
    hook = HookConfig(command='echo \'{"permissionDecision": "ask"}\'')
    approver = RecordingApprover(approve=False)
    registry, _ = await _registry(tmp_path, [hook], approver)

    result = await registry.call(ToolCall(name="fs.write", arguments={"path": "notes.txt", "content": "hello"}))  # type: ignore[attr-defined]

    assert result.is_error
    assert len(approver.requests) == 1
    assert not (tmp_path / "notes.txt").exists()


@pytest.mark.timeout(60)
async def test_hook_sleeping_past_its_timeout_blocks_the_call(tmp_path: Path) -> None:
    hook = HookConfig(command="sleep 30", timeout_sec=0.5)
    approver = RecordingApprover(approve=True)
    registry, hooks = await _registry(tmp_path, [hook], approver)

    result = await registry.call(ToolCall(name="fs.write", arguments={"path": "notes.txt", "content": "hello"}))  # type: ignore[attr-defined]

    assert result.is_error
    assert result.text_content() == (
        "fs.write was not run: the pre_tool_use hook config:pre_tool_use.1 "
        "did not finish within 0.5 s and was stopped, "
        "so the call is blocked"
    )
    assert not (tmp_path / "notes.txt").exists()
    assert approver.requests == []
    assert hooks.diagnostics == [
        ExtensionLoadFailure(
            kind="hook",
            name="config:pre_tool_use.1",
            reason=(
                "did not finish within 0.5 s and was stopped; the call "
                "was blocked (set fail_open = true to let calls go on)"
            ),
            severity=Severity.ERROR,
            hint="raise its timeout or make it faster",
        )
    ]


async def test_a_fail_open_hook_past_its_timeout_lets_the_call_go_on(tmp_path: Path) -> None:
    hook = HookConfig(command="sleep 30", timeout_sec=0.5, fail_open=True)
    registry, hooks = await _registry(tmp_path, [hook], RecordingApprover(approve=True))

    result = await registry.call(ToolCall(name="fs.write", arguments={"path": "notes.txt", "content": "hello"}))  # type: ignore[attr-defined]

    assert not result.is_error, result.text_content()
    assert (tmp_path / "notes.txt").read_text() == "hello"
    assert [d.reason for d in hooks.diagnostics] == [
        "did not finish within 0.5 s and was stopped; the call goes on as if it had not run"
    ]


async def test_a_plugin_hook_cannot_allow_what_the_policy_asks_about(tmp_path: Path) -> None:
    from kairox.config import ApprovalPolicy
    from kairox.hooks import HookEvent
    from kairox.hooks._model import HookSpec

    settings = _settings(tmp_path)
    asking = RegistrySettings(
        policy=PolicySettings.from_config(
            PolicyConfig(approval_policy=ApprovalPolicy.UNTRUSTED), workspace=tmp_path, home=tmp_path / "home"
        ),
        sandbox=settings.sandbox,
        spill_dir=settings.spill_dir,
    )
    allow = """echo '{"permissionDecision": "allow"}' """
    plugin_hook = HookSpec(
        event=HookEvent.PRE_TOOL_USE, command=allow, name="helper:auto-allow", plugin="helper", trust="local"
    )
    user_hook = HookSpec(event=HookEvent.PRE_TOOL_USE, command=allow, name="config:pre_tool_use.0")

    for hook, asked in ((plugin_hook, 1), (user_hook, 0)):
        approver = RecordingApprover(approve=False)
        hooks = HookRegistry([hook], workspace=tmp_path, sandbox=asking.sandbox)
        registry = await build_registry(asking, approver=approver, hooks=hooks)
        result = await registry.call(
            ToolCall(name="fs.write", arguments={"path": f"{hook.name[:6]}.txt", "content": "x"})
        )
        assert len(approver.requests) == asked, hook.name
        assert result.is_error is bool(asked)
