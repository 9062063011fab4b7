"""The gate around every call: lookup, validation, hooks, policy, approval, timeout, output cap, events."""

import dataclasses
from pathlib import Path

import anyio
import pytest
from tests.registry._support import DemoProvider, Hooks, ScriptedApprover, settings, spec

from kairox.config import ApprovalPolicy
from kairox.events import RecordingSink
from kairox.policy import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalScope,
    NonInteractiveApprover,
    Rule,
    RuleLayer,
    Verdict,
)
from kairox.registry import (
    ToolCallApprovalAnswered,
    ToolCallDecided,
    ToolCallFinished,
    ToolCallRequested,
    ToolRegistry,
    build_registry,
)
from kairox.tools import (
    Access,
    HookDecision,
    PostToolUseOutcome,
    PreToolUseOutcome,
    TextContent,
    ToolCall,
    ToolResult,
    ToolSource,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    return tmp_path / "ws"


def without_timing(events: list[object]) -> list[object]:
    return [
        dataclasses.replace(e, duration_ms=0.0, approval_wait_ms=0.0) if isinstance(e, ToolCallFinished) else e
        for e in events
    ]


class SlowApprover(ScriptedApprover):
    """Takes ``seconds`` to answer, as a person reading the dialog does."""

    def __init__(self, answers: list[ApprovalAnswer], seconds: float) -> None:
        super().__init__(answers)
        self.seconds = seconds

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        await anyio.sleep(self.seconds)
        return await super().request_approval(request)


@pytest.mark.anyio
async def test_the_duration_of_an_approved_call_leaves_out_the_wait_for_the_answer(ws: Path) -> None:
    sink = RecordingSink()
    approver = SlowApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.ONCE)], seconds=1.5)
    registry = ToolRegistry(settings(ws, approval=ApprovalPolicy.UNTRUSTED), approver=approver, events=sink)
    await registry.add_provider(DemoProvider(specs=[spec("deploy", access=Access.EXECUTE)]))
    started = anyio.current_time()
    assert not (await registry.call(ToolCall(name="deploy", arguments={"message": "x"}, call_id="c"))).is_error
    whole_ms = (anyio.current_time() - started) * 1000
    [finished] = sink.of_type(ToolCallFinished)
    assert finished.approval_wait_ms >= 1500
    # the call's own time is what is left of the whole once the wait is taken out
    assert finished.duration_ms < 1500 and abs(finished.duration_ms + finished.approval_wait_ms - whole_ms) < 100


@pytest.mark.anyio
async def test_an_allowed_call_is_requested_decided_and_finished(ws: Path) -> None:
    sink = RecordingSink()
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover(), events=sink)
    await registry.add_provider(DemoProvider())
    sink.events.clear()
    result = await registry.call(ToolCall(name="echo", arguments={"message": "hi"}, call_id="c1"))
    assert result == ToolResult.text("echo: hi")
    assert without_timing(sink.events) == [
        ToolCallRequested(call_id="c1", tool="echo", arguments={"message": "hi"}),
        ToolCallDecided(
            call_id="c1",
            tool="echo",
            decision="allow",
            reason="echo runs in the workspace_write sandbox",
            source="mode",
        ),
        ToolCallFinished(call_id="c1", tool="echo", duration_ms=0.0, size_chars=8, is_error=False),
    ]


@pytest.mark.anyio
async def test_invalid_arguments_come_back_as_a_tool_error_with_the_validators_message(ws: Path) -> None:
    provider = DemoProvider()
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(provider)
    wrong_type = await registry.call(ToolCall(name="echo", arguments={"message": 3}))
    missing = await registry.call(ToolCall(name="echo", arguments={}))
    extra = await registry.call(ToolCall(name="echo", arguments={"message": "a", "other": 1}))
    misspelt = await registry.call(ToolCall(name="echo", arguments={"mesage": "a"}))
    assert wrong_type == ToolResult.error("invalid arguments for echo: arguments['message']: 3 is not of type 'string'")
    assert missing == ToolResult.error("invalid arguments for echo: arguments: 'message' is a required property")
    assert extra == ToolResult.error(
        "invalid arguments for echo: arguments: Additional properties are not allowed ('other' was unexpected)"
    )
    assert misspelt == ToolResult.error(
        "invalid arguments for echo: arguments: Additional properties are not allowed ('mesage' was unexpected); "
        "required and missing: 'message'"
    )
    assert provider.calls == []


@pytest.mark.anyio
async def test_unknown_tool_is_an_error_with_a_suggestion(ws: Path) -> None:
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider())
    result = await registry.call(ToolCall(name="ecko", arguments={}))
    assert result.is_error
    assert result.text_content() == "ecko was not run: no tool named 'ecko'; did you mean 'echo'?"


@pytest.mark.anyio
async def test_a_provider_that_raises_gives_a_readable_error(ws: Path) -> None:
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(specs=[spec("boom")]))
    assert await registry.call(ToolCall(name="boom", arguments={"message": "x"})) == ToolResult.error(
        "boom failed: RuntimeError: kaput"
    )


@pytest.mark.anyio
@pytest.mark.timeout(30)
async def test_a_call_over_its_timeout_is_cancelled_and_reported(ws: Path) -> None:
    registry = ToolRegistry(settings(ws, timeout=0.2), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(specs=[spec("slow"), spec("own_slow", timeout=0.1)]))
    assert await registry.call(ToolCall(name="slow", arguments={"message": ""})) == ToolResult.error(
        "slow timed out after 0.2s and was cancelled"
    )
    assert await registry.call(ToolCall(name="own_slow", arguments={"message": ""})) == ToolResult.error(
        "own_slow timed out after 0.1s and was cancelled"
    )


@pytest.mark.anyio
async def test_output_over_the_cap_is_spilled_to_a_file_named_in_the_result(ws: Path) -> None:
    sink = RecordingSink()
    registry = ToolRegistry(settings(ws, limit=1000), approver=NonInteractiveApprover(), events=sink)
    await registry.add_provider(DemoProvider(specs=[spec("big")]))
    result = await registry.call(ToolCall(name="big", arguments={"message": "5000"}, call_id="c9"))
    spilled = Path(result.meta["spilled_to"])
    assert spilled.parent == ws.parent / "spill"
    assert spilled.read_text() == "x" * 5000
    note = (
        "\n[output truncated: 5000 characters, limit 1000; the full "
        f"output is in {spilled}; read it with fs.read and a line range]"
    )
    assert result.content == (TextContent(text="x" * (1000 - len(note)) + note),)
    assert result.meta == {"truncated": True, "original_chars": 5000, "spilled_to": str(spilled)}
    finished = sink.of_type(ToolCallFinished)[0]
    assert (finished.size_chars, finished.spilled_to) == (1000, str(spilled))


@pytest.mark.anyio
async def test_name_collisions_keep_the_same_winner_whatever_the_order(ws: Path) -> None:
    for order in ((0, 1), (1, 0)):
        providers = [
            DemoProvider("zeta", [spec("echo", origin="zeta")]),
            DemoProvider("alpha", [spec("echo", origin="alpha")]),
        ]
        registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
        for index in order:
            await registry.add_provider(providers[index])
        assert registry.get("echo") is not None and registry.get("echo").origin == "alpha"  # type: ignore[union-attr]
        assert [d.reason for d in registry.diagnostics] == [
            "tool name 'echo' is provided by both alpha and zeta; the one from alpha is kept"
        ]
        await registry.call(ToolCall(name="echo", arguments={"message": "x"}))
        assert (providers[1].calls, providers[0].calls) == ([("echo", {"message": "x"})], [])


@pytest.mark.anyio
async def test_builtin_wins_a_name_over_a_plugin(ws: Path) -> None:
    registry = await build_registry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider("aaa", [spec("fs.read", origin="aaa")]))
    assert registry.get("fs.read").origin == "builtin"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_tools_changed_replaces_all_tools_of_that_origin(ws: Path) -> None:
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    provider = DemoProvider(specs=[spec("a"), spec("b")])
    await registry.add_provider(provider)
    await registry.add_provider(DemoProvider("other", [spec("c", origin="other")]))
    await provider.change([spec("b"), spec("d")])
    assert [s.name for s in registry.tools()] == ["b", "c", "d"]
    assert (await registry.call(ToolCall(name="a", arguments={"message": ""}))).is_error


@pytest.mark.anyio
async def test_visible_tools_leave_out_disabled_denied_unsafe_and_failed(ws: Path) -> None:
    registry = ToolRegistry(
        settings(ws, Rule(action="deny", pattern="secret_*"), disabled=("noisy*",)), approver=NonInteractiveApprover()
    )
    unsafe = spec("unsafe", schema={"type": "object", "properties": {"a": {"type": "strng"}}})
    await registry.add_provider(DemoProvider(specs=[spec("ok"), spec("noisy_tool"), spec("secret_dump"), unsafe]))
    await registry.add_provider(DemoProvider("broken", fail_listing=True))
    assert [s.name for s in registry.visible_tools()] == ["ok"]
    assert registry.hidden_reason("noisy_tool") == "disabled by tools.disabled ('noisy*')"
    assert registry.hidden_reason("secret_dump") == "denied by deny rule 'secret_*'"
    assert registry.hidden_reason("unsafe") is not None and registry.hidden_reason("unsafe").startswith(
        "its input schema is not valid JSON Schema"
    )  # type: ignore[union-attr]
    assert sorted((d.kind, d.name) for d in registry.diagnostics) == [("tool", "unsafe"), ("tool_provider", "broken")]
    denied = await registry.call(ToolCall(name="noisy_tool", arguments={"message": ""}))
    assert (
        denied.text_content()
        == "noisy_tool was not run: noisy_tool is not available: disabled by tools.disabled ('noisy*')"
    )


@pytest.mark.anyio
async def test_a_hook_deny_stops_the_call(ws: Path) -> None:
    provider = DemoProvider()
    hooks = Hooks(pre=PreToolUseOutcome(decision=HookDecision.DENY, reason="no echo on Fridays"))
    registry = ToolRegistry(
        settings(ws, Rule(action="allow", pattern="echo")), approver=NonInteractiveApprover(), hooks=hooks
    )
    await registry.add_provider(provider)
    result = await registry.call(ToolCall(name="echo", arguments={"message": "x"}))
    assert result.text_content() == "echo was not run: no echo on Fridays"
    assert (provider.calls, hooks.seen) == ([], ["pre echo"])


@pytest.mark.anyio
async def test_a_hook_allow_does_not_skip_an_ask_rule(ws: Path) -> None:
    approver = ScriptedApprover([ApprovalAnswer.deny("not now")])
    hooks = Hooks(pre=PreToolUseOutcome(decision=HookDecision.ALLOW))
    registry = ToolRegistry(
        settings(ws, Rule(action="ask", pattern="echo", file="/u/kairox.toml", line=3)), approver=approver, hooks=hooks
    )
    await registry.add_provider(DemoProvider())
    result = await registry.call(ToolCall(name="echo", arguments={"message": "x"}))
    assert result.text_content() == "echo was not run: not now (/u/kairox.toml:3)"
    assert approver.requests == [
        ApprovalRequest(
            tool="echo",
            arguments={"message": "x"},
            reason="ask rule 'echo' (/u/kairox.toml:3) asks for approval",
            rule=None,
            call_id="call-1",
            source="rule",
            asked_by="ask rule 'echo' (/u/kairox.toml:3)",
        )
    ]


@pytest.mark.anyio
async def test_hooks_can_rewrite_input_and_add_context(ws: Path) -> None:
    hooks = Hooks(
        pre=PreToolUseOutcome(updated_input={"message": "rewritten"}),
        post=PostToolUseOutcome(additional_context="checked by hook", block_reason="contains a secret"),
    )
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover(), hooks=hooks)
    await registry.add_provider(DemoProvider())
    result = await registry.call(ToolCall(name="echo", arguments={"message": "original"}))
    assert result.content == (
        TextContent(text="echo: rewritten"),
        TextContent(text="[post_tool_use hook: contains a secret]"),
        TextContent(text="checked by hook"),
    )
    assert hooks.seen == ["pre echo", "post echo echo: rewritten"]


@pytest.mark.anyio
async def test_a_crashing_hook_fails_closed(ws: Path) -> None:
    provider = DemoProvider()
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover(), hooks=Hooks(crash=True))
    await registry.add_provider(provider)
    result = await registry.call(ToolCall(name="echo", arguments={"message": "x"}))
    assert result.text_content() == "echo was not run: the pre_tool_use hooks failed: hook runner crashed"
    assert provider.calls == []


@pytest.mark.anyio
async def test_without_a_person_ask_becomes_deny_with_approval_required(ws: Path) -> None:
    registry = ToolRegistry(settings(ws, approval=ApprovalPolicy.UNTRUSTED), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(specs=[spec("deploy", access=Access.EXECUTE)]))
    result = await registry.call(ToolCall(name="deploy", arguments={"message": "x"}))
    assert result.text_content() == (
        "deploy was not run: approval required: deploy needs execute access and the approval policy is untrusted "
        "(only read-only tools run without asking)"
    )
    assert result.meta["decision"]["decision"] == "deny"


@pytest.mark.anyio
async def test_a_session_approval_is_not_asked_again(ws: Path) -> None:
    sink = RecordingSink()
    approver = ScriptedApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.SESSION)])
    registry = ToolRegistry(settings(ws, approval=ApprovalPolicy.UNTRUSTED), approver=approver, events=sink)
    provider = DemoProvider(specs=[spec("deploy", access=Access.EXECUTE)])
    await registry.add_provider(provider)
    for _ in range(3):
        assert not (await registry.call(ToolCall(name="deploy", arguments={"message": "x"}))).is_error
    assert len(approver.requests) == 1
    assert [e.source for e in sink.of_type(ToolCallDecided)] == [
        "mode",
        "approver",
        "mode",
        "session",
        "mode",
        "session",
    ]


@pytest.mark.anyio
async def test_always_persists_an_allow_rule(ws: Path) -> None:
    saved: list[tuple[str, RuleLayer]] = []
    sink = RecordingSink()
    approver = ScriptedApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.ALWAYS)])
    registry = ToolRegistry(
        settings(ws, approval=ApprovalPolicy.UNTRUSTED),
        approver=approver,
        events=sink,
        persist_rule=lambda rule, layer: saved.append((rule, layer)),
    )
    await registry.add_provider(DemoProvider(specs=[spec("deploy", access=Access.EXECUTE)]))
    await registry.call(ToolCall(name="deploy", arguments={"message": "x"}, call_id="c"))
    assert saved == [("deploy", RuleLayer.USER)]
    assert sink.of_type(ToolCallApprovalAnswered) == [
        ToolCallApprovalAnswered(call_id="c", tool="deploy", approved=True, scope="always", persisted_rule="deploy")
    ]


@pytest.mark.anyio
async def test_protected_paths_are_asked_about_every_time(ws: Path) -> None:
    approver = ScriptedApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.SESSION), ApprovalAnswer.deny("no")])
    registry = await build_registry(settings(ws), approver=approver)
    first = await registry.call(ToolCall(name="fs.write", arguments={"path": ".git/config", "content": "a"}))
    second = await registry.call(ToolCall(name="fs.write", arguments={"path": ".git/config", "content": "b"}))
    assert (first.is_error, second.is_error) == (False, True)
    assert [r.rule for r in approver.requests] == [None, None]
    assert (ws / ".git" / "config").read_text() == "a"


@pytest.mark.anyio
async def test_check_reports_without_calling(ws: Path) -> None:
    provider = DemoProvider()
    registry = ToolRegistry(
        settings(ws, Rule(action="deny", pattern="echo(*secret*)", file="/u/k.toml", line=9)),
        approver=NonInteractiveApprover(),
    )
    await registry.add_provider(provider)
    decision = registry.check("echo", {"message": "the secret"})
    assert (decision.verdict, decision.where) == (Verdict.DENY, "/u/k.toml:9")
    assert registry.check("echo", {"message": "fine"}).verdict is Verdict.ALLOW
    assert provider.calls == []


@pytest.mark.anyio
async def test_write_outside_the_roots_is_refused_without_a_person(ws: Path) -> None:
    registry = await build_registry(settings(ws), approver=NonInteractiveApprover())
    result = await registry.call(ToolCall(name="fs.write", arguments={"path": "../outside.txt", "content": "x"}))
    assert result.text_content() == (
        f"fs.write was not run: approval required: {ws.parent / 'outside.txt'} is outside the writable roots "
        f"({ws}, {ws.parent / 'tmp'}); add the folder to policy.writable_roots to allow writes there"
    )
    assert not (ws.parent / "outside.txt").exists()


@pytest.mark.anyio
async def test_an_explicit_ask_rule_is_asked_every_time_and_always_saves_nothing_for_it(ws: Path) -> None:
    saved: list[str] = []
    approver = ScriptedApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.ALWAYS), ApprovalAnswer.deny("no")])
    registry = ToolRegistry(
        settings(ws, Rule(action="ask", pattern="echo")),
        approver=approver,
        persist_rule=lambda rule, layer: saved.append(rule),
    )
    await registry.add_provider(DemoProvider())
    first = await registry.call(ToolCall(name="echo", arguments={"message": "x"}))
    second = await registry.call(ToolCall(name="echo", arguments={"message": "x"}))
    assert (first.is_error, second.is_error, len(approver.requests), saved) == (False, True, 2, [])
    assert [(r.grants, r.layers) for r in approver.requests] == [((), ()), ((), ())]


@pytest.mark.anyio
async def test_a_failing_rule_writer_is_a_diagnostic_not_a_failed_call(ws: Path) -> None:
    def broken(rule: str, layer: RuleLayer) -> None:
        raise PermissionError("read-only home")

    approver = ScriptedApprover([ApprovalAnswer(approved=True, scope=ApprovalScope.ALWAYS)])
    registry = ToolRegistry(settings(ws, approval=ApprovalPolicy.UNTRUSTED), approver=approver, persist_rule=broken)
    await registry.add_provider(DemoProvider(specs=[spec("deploy", access=Access.EXECUTE)]))
    assert not (await registry.call(ToolCall(name="deploy", arguments={"message": "x"}))).is_error
    assert [(d.name, d.reason) for d in registry.diagnostics] == [
        ("deploy", "could not save the allow rule in the user layer: read-only home")
    ]


@pytest.mark.anyio
async def test_long_arguments_are_previewed_in_the_requested_event(ws: Path) -> None:
    sink = RecordingSink()
    registry = await build_registry(settings(ws), approver=NonInteractiveApprover(), events=sink)
    await registry.call(ToolCall(name="fs.write", arguments={"path": "big.txt", "content": "y" * 5000}, call_id="w"))
    assert sink.of_type(ToolCallRequested) == [
        ToolCallRequested(
            call_id="w", tool="fs.write", arguments={"path": "big.txt", "content": "y" * 2000 + "… (5000 characters)"}
        )
    ]
    assert (ws / "big.txt").read_text() == "y" * 5000


@pytest.mark.anyio
async def test_secret_looking_arguments_are_redacted_in_the_requested_event(ws: Path) -> None:
    sink = RecordingSink()
    schema = {
        "type": "object",
        "properties": {"api_token": {"type": "string"}, "options": {"type": "object"}, "message": {"type": "string"}},
    }
    provider = DemoProvider("demo", [spec("echo", schema=schema)])
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover(), events=sink)
    await registry.add_provider(provider)
    arguments = {"api_token": "t0k3n", "options": {"password": "hunter2", "user": "me"}, "message": "hi"}
    result = await registry.call(ToolCall(name="echo", arguments=arguments, call_id="s"))
    assert not result.is_error
    assert sink.of_type(ToolCallRequested) == [
        ToolCallRequested(
            call_id="s",
            tool="echo",
            arguments={"api_token": "<redacted>", "options": {"password": "<redacted>", "user": "me"}, "message": "hi"},
        )
    ]
    assert provider.calls == [("echo", arguments)]  # the tool itself gets the real values


@pytest.mark.anyio
async def test_an_mcp_tool_claiming_read_access_is_still_held_as_external(ws: Path) -> None:
    provider = DemoProvider(
        "github", [spec("mcp__github__delete_repo", source=ToolSource.MCP, origin="github", access=Access.READ)]
    )
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(provider)
    result = await registry.call(ToolCall(name="mcp__github__delete_repo", arguments={"message": "x"}))
    assert result.text_content() == (
        "mcp__github__delete_repo was not run: approval required: "
        "mcp tool mcp__github__delete_repo from github may change "
        "things: it is not annotated read-only, so it counts as a write with effects outside Kairox's sandbox"
    )
    assert provider.calls == []


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_on_failure_asks_before_running_a_failed_command_again_without_the_sandbox(ws: Path) -> None:
    target = ws.parent / "outside.txt"
    command = {"command": f"touch {target}"}
    refused = await build_registry(settings(ws, approval=ApprovalPolicy.ON_FAILURE), approver=NonInteractiveApprover())
    assert (await refused.call(ToolCall(name="shell.exec", arguments=command))).is_error
    assert not target.exists()
    approver = ScriptedApprover([ApprovalAnswer(approved=True)])
    approved = await build_registry(settings(ws, approval=ApprovalPolicy.ON_FAILURE), approver=approver)
    result = await approved.call(ToolCall(name="shell.exec", arguments=command))
    assert (result.is_error, target.exists()) == (False, True)
    assert [r.reason for r in approver.requests] == [
        "shell.exec failed inside the workspace_write sandbox; run it again without the sandbox?"
    ]


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_on_request_never_retries_outside_the_sandbox(ws: Path) -> None:
    approver = ScriptedApprover([ApprovalAnswer(approved=True)])
    registry = await build_registry(settings(ws), approver=approver)
    result = await registry.call(
        ToolCall(name="shell.exec", arguments={"command": f"touch {ws.parent / 'outside.txt'}"})
    )
    assert (result.is_error, approver.requests) == (True, [])
