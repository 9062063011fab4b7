"""Command hooks (H2, H3): what they receive, how they answer, and what becomes a diagnostic."""

import json
from pathlib import Path

import pytest

from kairox.config import HooksConfig
from kairox.config._models import HookConfig
from kairox.errors import Severity
from kairox.events import RecordingSink
from kairox.hooks import HookEvent, HookFinished, HookRegistry
from kairox.hooks._model import HookSpec, matches
from kairox.sandbox import SandboxSettings
from kairox.tools import HookDecision, PostToolUseOutcome, ToolCall, ToolResult, ToolSource, ToolSpec
from kairox.tools._model import READ_ONLY

pytestmark = pytest.mark.anyio

WRITE = ToolSpec(
    name="fs.write", description="", input_schema={"type": "object"}, source=ToolSource.BUILTIN, permission=READ_ONLY
)
CALL = ToolCall(name="fs.write", arguments={"path": "a.txt", "content": "x"}, call_id="c1")


def _registry(tmp_path: Path, hooks: HooksConfig, **options: object) -> HookRegistry:
    sandbox = SandboxSettings(writable_roots=(tmp_path,))
    registry = HookRegistry.from_config(hooks, workspace=tmp_path, sandbox=sandbox, **options)
    registry.session_id = "s1"  # as a session sets it when its transcript opens
    return registry


async def test_hook_receives_the_request_as_json_on_stdin(tmp_path: Path) -> None:
    registry = _registry(tmp_path, HooksConfig(pre_tool_use=[HookConfig(command=f"cat > {tmp_path}/request.json")]))

    outcome = await registry.pre_tool_use(CALL, WRITE)

    assert outcome.decision is None and outcome.diagnostics == ()
    assert json.loads((tmp_path / "request.json").read_text()) == {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "kairox_event": "pre_tool_use",
        "cwd": str(tmp_path),
        "tool_name": "fs.write",
        "tool_input": {"path": "a.txt", "content": "x"},
        "tool_use_id": "c1",
        "tool_source": "builtin",
        "tool_origin": None,
    }


async def test_deny_beats_ask_beats_allow_across_concurrent_hooks(tmp_path: Path) -> None:
    answers = [
        '{"permissionDecision": "allow", "permissionDecisionReason": "fine"}',
        '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}',
        '{"decision": "block", "reason": "no writes today"}',
    ]
    hooks = HooksConfig(pre_tool_use=[HookConfig(command=f"echo '{a}'") for a in answers])

    denied = await _registry(tmp_path, hooks).pre_tool_use(CALL, WRITE)
    asked = await _registry(tmp_path, HooksConfig(pre_tool_use=hooks.pre_tool_use[:2])).pre_tool_use(CALL, WRITE)
    allowed = await _registry(tmp_path, HooksConfig(pre_tool_use=hooks.pre_tool_use[:1])).pre_tool_use(CALL, WRITE)

    assert (denied.decision, denied.reason) == (HookDecision.DENY, "no writes today")
    assert (asked.decision, asked.reason) == (HookDecision.ASK, "check")
    assert (allowed.decision, allowed.reason) == (HookDecision.ALLOW, "fine")


async def test_matching_hooks_run_concurrently(tmp_path: Path) -> None:
    # each hook waits until the other has started: run one after the other, both would time out
    first = f"touch {tmp_path}/a; for i in $(seq 50); do [ -e {tmp_path}/b ] && exit 0; sleep 0.1; done; exit 1"
    second = f"touch {tmp_path}/b; for i in $(seq 50); do [ -e {tmp_path}/a ] && exit 0; sleep 0.1; done; exit 1"
    registry = _registry(tmp_path, HooksConfig(pre_tool_use=[HookConfig(command=first), HookConfig(command=second)]))

    outcome = await registry.pre_tool_use(CALL, WRITE)

    assert outcome.diagnostics == ()


async def test_updated_input_and_additional_context_are_passed_on(tmp_path: Path) -> None:
    answer = json.dumps(
        {
            "permissionDecision": "allow",
            "updatedInput": {"path": "b.txt", "content": "y"},
            "additionalContext": "renamed",
        }
    )
    registry = _registry(tmp_path, HooksConfig(pre_tool_use=[HookConfig(command=f"echo '{answer}'")]))

    outcome = await registry.pre_tool_use(CALL, WRITE)

    assert (outcome.updated_input, outcome.additional_context) == ({"path": "b.txt", "content": "y"}, "renamed")


async def test_crashing_and_malformed_hooks_are_diagnostics_not_decisions(tmp_path: Path) -> None:
    hooks = HooksConfig(
        pre_tool_use=[
            HookConfig(command="echo boom >&2; exit 3"),
            HookConfig(command="echo '{not json'"),
            HookConfig(command="kairox-no-such-program-xyz"),
            HookConfig(command='echo \'{"permissionDecision": "maybe"}\''),
        ]
    )
    registry = _registry(tmp_path, hooks)

    outcome = await registry.pre_tool_use(CALL, WRITE)

    assert outcome.decision is None
    assert [(d.name, d.severity, d.reason.split(":")[0]) for d in outcome.diagnostics] == [
        ("config:pre_tool_use.1", Severity.ERROR, "exited with code 3"),
        ("config:pre_tool_use.2", Severity.ERROR, "printed malformed JSON"),
        ("config:pre_tool_use.3", Severity.ERROR, "exited with code 127"),
        ("config:pre_tool_use.4", Severity.WARNING, "answered an unknown decision 'maybe'"),
    ]
    assert outcome.diagnostics[0].reason == "exited with code 3: boom"
    assert registry.diagnostics == list(outcome.diagnostics)


async def test_output_over_the_cap_is_cut_and_reported(tmp_path: Path) -> None:
    registry = _registry(tmp_path, HooksConfig(pre_turn=[HookConfig(command="head -c 300000 /dev/zero | tr '\\0' a")]))

    outcome = await registry.pre_turn("hello")

    assert outcome.additional_context == "a" * 256_000
    assert [d.reason for d in outcome.diagnostics] == ["printed more than 256000 bytes; the rest was cut"]


async def test_matchers_use_kairox_and_claude_tool_names(tmp_path: Path) -> None:
    hooks = HooksConfig(
        pre_tool_use=[
            HookConfig(command='echo \'{"decision": "block", "reason": "bash"}\'', matcher="Bash"),
            HookConfig(command='echo \'{"decision": "ask", "reason": "write"}\'', matcher="Edit|Write"),
        ]
    )
    registry = _registry(tmp_path, hooks)

    outcome = await registry.pre_tool_use(CALL, WRITE)

    assert (outcome.decision, outcome.reason) == (HookDecision.ASK, "write")
    assert [matches(m, "shell.exec") for m in ("Bash", "shell.*", "^Bash$", "fs.write", None)] == [
        True,
        True,
        True,
        False,
        True,
    ]


async def test_post_tool_use_context_and_block(tmp_path: Path) -> None:
    hooks = HooksConfig(
        post_tool_use=[
            HookConfig(
                command='echo \'{"decision": "block", "reason": "secret in output", "additionalContext": "redact it"}\''
            )
        ]
    )
    registry = _registry(tmp_path, hooks)

    outcome = await registry.post_tool_use(CALL, WRITE, ToolResult.text("token=abc"))

    assert outcome == PostToolUseOutcome(additional_context="redact it", block_reason="secret in output")


async def test_turn_hooks_inject_context_and_exit_2_stops_a_prompt(tmp_path: Path) -> None:
    events = RecordingSink()
    hooks = HooksConfig(
        pre_turn=[HookConfig(command="echo 'branch: main'")],
        user_prompt_submit=[
            HookConfig(command="grep -q password && { echo 'no secrets in prompts' >&2; exit 2; } || exit 0")
        ],
    )
    registry = _registry(tmp_path, hooks, events=events)

    context = await registry.pre_turn("fix the bug")
    blocked = await registry.user_prompt_submit("my password is hunter2")
    passed = await registry.user_prompt_submit("hello")

    assert context.additional_context == "branch: main"
    assert (blocked.blocked, blocked.reason) == (True, "no secrets in prompts")
    assert passed.blocked is False
    assert [(e.hook, e.exit_code) for e in events.events if isinstance(e, HookFinished)] == [
        ("config:pre_turn.1", 0),
        ("config:user_prompt_submit.1", 2),
        ("config:user_prompt_submit.1", 0),
    ]


async def test_hook_commands_run_in_the_policy_sandbox(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside.txt"
    hooks = HooksConfig(session_start=[HookConfig(command=f"touch {outside}")])
    registry = HookRegistry.from_config(
        hooks, workspace=workspace, sandbox=SandboxSettings(writable_roots=(workspace,))
    )

    outcome = await registry.session_start()

    assert not outside.exists()
    assert [d.reason.split(":")[0] for d in outcome.diagnostics] == ["exited with code 1"]
    assert "Read-only file system" in outcome.diagnostics[0].reason


def test_event_names_accept_claude_aliases() -> None:
    assert [HookEvent.parse(n) for n in ("PreToolUse", "preToolUse", "pre_tool_use", "Stop", "Notification")] == [
        HookEvent.PRE_TOOL_USE,
        HookEvent.PRE_TOOL_USE,
        HookEvent.PRE_TOOL_USE,
        HookEvent.POST_TURN,
        None,
    ]
    assert HookSpec(event=HookEvent.SESSION_END, command="true").needs_approval is False


@pytest.mark.timeout(60)
async def test_hook_that_never_reads_a_large_request_times_out_instead_of_hanging(tmp_path: Path) -> None:
    registry = _registry(tmp_path, HooksConfig(pre_tool_use=[HookConfig(command="sleep 30", timeout_sec=0.5)]))
    big = ToolCall(name="fs.write", arguments={"path": "a.txt", "content": "x" * 2_000_000})

    outcome = await registry.pre_tool_use(big, WRITE)

    assert outcome.decision is HookDecision.DENY
    assert [d.reason for d in outcome.diagnostics] == [
        "did not finish within 0.5 s and was stopped; the call was blocked (set fail_open = true to let calls go on)"
    ]
