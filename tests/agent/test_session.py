"""AgentSession against the scripted model servers, through the official SDKs, with real tools behind the gate."""

import json
import sys
from pathlib import Path

import anyio
import pytest
from tests.agent._support import (
    BIN,
    EVERYTHING,
    NODE,
    SERVERS,
    call_order,
    transcript_records,
    user_config,
)
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import (
    ApprovalRequested,
    AssistantMessageCompleted,
    ModelFailed,
    ModelRequestRetried,
    ModelSetupError,
    Role,
    TurnEnded,
    TurnEndReason,
    open_session,
)
from kairox.agent._events import SessionStarted
from kairox.config import trust_workspace
from kairox.events import RecordingSink
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.registry import ToolCallFinished, ToolCallRequested

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

WIRES = ["openai", "anthropic"]
HOOK_EVENTS = [
    "session_start",
    "user_prompt_submit",
    "pre_turn",
    "pre_tool_use",
    "post_tool_use",
    "post_turn",
    "session_end",
]


def calls(*items: tuple[str, str, dict[str, object]], text: str = "") -> dict[str, object]:
    return {"reply": "tool_calls", "text": text, "calls": [{"id": i, "name": n, "arguments": a} for i, n, a in items]}


@pytest.mark.parametrize("wire", WIRES)
async def test_turn_calls_an_mcp_an_lsp_and_the_skill_tool_then_answers_with_hooks_in_order(
    wire: str, workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    hooks = "".join(f'[[hooks.{event}]]\ncommand = "echo {event} >> {log}"\n\n' for event in HOOK_EVENTS)
    extra = (
        '[policy]\nsandbox_policy = "danger_full_access"\n\n[policy.rules]\nallow = ["mcp__everything__echo"]\n\n'
        f'[mcp_servers.everything]\ncommand = "{NODE}"\nargs = ["{EVERYTHING}", "stdio"]\n\n'
        f'[lsp_servers.python]\ncommand = "{BIN / "jedi-language-server"}'
        '"\nfile_patterns = ["*.py"]\nlanguages = ["python"]\n\n' + hooks
    )
    script = [
        {
            **calls(("e1", "mcp__everything__echo", {"message": "hi"}), text="Let me check."),
            "expect": {
                "system_contains": "release-notes",
                "last_user_contains": "Where is Cart.total defined?",
                "tools_include": ["mcp__everything__echo", "lsp_definition", "skill"],
            },
        },
        {
            **calls(("d1", "lsp_definition", {"path": "shop/cart.py", "symbol": "Cart.total"})),
            "expect": {"tool_results": {"e1": "Echo: hi"}},
        },
        {**calls(("s1", "skill", {"name": "release-notes"})), "expect": {"tool_results": {"d1": "cart.py:5"}}},
        {
            "reply": "text",
            "text": "Cart.total is in shop/cart.py line 5.",
            "expect": {"tool_results": {"s1": "List the changes under Added"}},
        },
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra=extra)
        trust_workspace(workspace)  # the workspace's skill is offered once it is trusted
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Where is Cart.total defined?")
            transcript = session.transcript.path
    assert result.reason is TurnEndReason.COMPLETED and result.tool_calls == 3
    assert result.text == "Cart.total is in shop/cart.py line 5."
    finished = sink.of_type(ToolCallFinished)
    assert [(e.call_id, e.tool, e.is_error) for e in finished] == [
        ("e1", "mcp__everything__echo", False),
        ("d1", "lsp.definition", False),
        ("s1", "skill", False),
    ]
    assert log.read_text().split() == [
        "session_start",
        "user_prompt_submit",
        "pre_turn",
        *["pre_tool_use", "post_tool_use"] * 3,
        "post_turn",
        "session_end",
    ]
    records = transcript_records(transcript)
    assert records[0]["type"] == "session" and records[0]["model"] == "scripted-model"
    roles = [r["message"]["role"] for r in records if r["type"] == "message"]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    logged = [r["event"] for r in records if r["type"] == "event"]
    for name in (
        "SessionStarted",
        "UserMessageSubmitted",
        "ModelRequestStarted",
        "ToolCallDecided",
        "ToolCallFinished",
        "UsageReported",
        "TurnEnded",
        "SessionEnded",
    ):
        assert name in logged
    assert "sk-test-0123456789abcdef" not in transcript.read_text()


@pytest.mark.parametrize("wire", WIRES)
async def test_an_ask_pauses_the_turn_approve_runs_the_write_and_a_denial_message_reaches_the_model(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    asked: list[ApprovalRequest] = []
    sink = RecordingSink()

    class Person:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            # the turn waits here: nothing of this call may have run yet
            assert not (workspace / str(request.arguments["path"])).exists()
            await anyio.sleep(0.2)
            if len(asked) == 1:
                return ApprovalAnswer(approved=True)
            return ApprovalAnswer.deny("write it under drafts/ instead")

    script = [
        calls(("w1", "fs_write", {"path": "a.txt", "content": "one"})),
        {**calls(("w2", "fs_write", {"path": "b.txt", "content": "two"})), "expect": {"tool_results": {"w1": "a.txt"}}},
        {
            "reply": "text",
            "text": "I will use drafts/.",
            "expect": {"tool_results": {"w2": "write it under drafts/ instead"}},
        },
    ]
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra='[policy.rules]\nask = ["fs.write"]\n')
        async with open_session(workspace, approver=Person(), events=[sink]) as session:
            result = await session.run_turn("Write two files.")
    assert result.reason is TurnEndReason.COMPLETED and result.text == "I will use drafts/."
    assert [r.tool for r in asked] == ["fs.write", "fs.write"]
    assert (workspace / "a.txt").read_text() == "one"
    assert not (workspace / "b.txt").exists()
    kinds = [type(e).__name__ for e in sink.events if isinstance(e, ApprovalRequested | ToolCallFinished)]
    assert kinds == ["ApprovalRequested", "ToolCallFinished", "ApprovalRequested", "ToolCallFinished"]
    assert [e.is_error for e in sink.of_type(ToolCallFinished)] == [False, True]


async def test_headless_asks_are_denials_the_model_is_told_about(workspace: Path, isolated_home: Path) -> None:
    script = [
        calls(("w1", "fs_write", {"path": "a.txt", "content": "one"})),
        {
            "reply": "text",
            "text": "Not allowed here.",
            "expect": {"tool_results": {"w1": "no one can approve in this run"}},
        },
    ]
    sink = RecordingSink()
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra='[policy.rules]\nask = ["fs.write"]\n')
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Write a file.")
    assert result.reason is TurnEndReason.COMPLETED
    assert [e.headless for e in sink.of_type(ApprovalRequested)] == [True]
    assert not (workspace / "a.txt").exists()


@pytest.mark.parametrize("wire", WIRES)
async def test_two_reads_of_one_message_run_concurrently_and_two_writes_one_after_the_other(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    script = [
        calls(("r1", "fs_read", {"path": "notes.txt"}), ("r2", "fs_read", {"path": "todo.txt"})),
        {
            **calls(
                ("w1", "fs_write", {"path": "out.txt", "content": "first"}),
                ("w2", "fs_write", {"path": "out.txt", "content": "second"}),
            ),
            "expect": {"tool_results": {"r1": "first note", "r2": "second note"}},
        },
        {"reply": "text", "text": "Both done.", "expect": {"tool_results": {"w1": "out.txt", "w2": "out.txt"}}},
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra='[policy.rules]\nallow = ["fs.write(./out.txt)"]\n')
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Read both notes, then write out.txt twice.")
    assert result.reason is TurnEndReason.COMPLETED
    order = call_order(sink.events)
    reads = [step for step in order if step[1] in ("r1", "r2")]
    assert [kind for kind, _ in reads] == ["start", "start", "end", "end"]  # both started before either finished
    writes = [step for step in order if step[1] in ("w1", "w2")]
    assert writes == [("start", "w1"), ("end", "w1"), ("start", "w2"), ("end", "w2")]
    assert (workspace / "out.txt").read_text() == "second"


@pytest.mark.parametrize("trusted", [True, False])
async def test_mcp_calls_run_side_by_side_only_when_their_read_only_annotation_is_trusted(
    trusted: bool, workspace: Path, isolated_home: Path
) -> None:
    extra = (
        '[policy.rules]\nallow = ["mcp__basic__echo"]\n\n'
        f'[mcp_servers.basic]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n'
        f"trust_annotations = {str(trusted).lower()}\n"
    )
    script = [
        calls(("m1", "mcp__basic__echo", {"message": "one"}), ("m2", "mcp__basic__echo", {"message": "two"})),
        {"reply": "text", "text": "Echoed.", "expect": {"tool_results": {"m1": "one", "m2": "two"}}},
    ]
    sink = RecordingSink()
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra=extra)
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Echo twice.")
    assert result.reason is TurnEndReason.COMPLETED
    order = call_order(sink.events)
    if trusted:
        assert [kind for kind, _ in order] == ["start", "start", "end", "end"]
    else:  # an MCP tool counts as a write: one at a time, in the order the model gave
        assert order == [("start", "m1"), ("end", "m1"), ("start", "m2"), ("end", "m2")]


async def test_cancel_during_a_slow_mcp_call_cancels_it_on_the_server_and_leaves_a_consistent_transcript(
    workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    extra = (
        '[policy.rules]\nallow = ["mcp__slow__wait_forever"]\n\n'
        f'[mcp_servers.slow]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n'
        f'env = {{ KAIROX_TEST_MARKER = "{marker}" }}\n'
    )
    sink = RecordingSink()
    with ScriptedModelServer("anthropic", [calls(("x1", "mcp__slow__wait_forever", {}), text="Waiting.")]) as server:
        user_config(isolated_home, server, wire="anthropic", extra=extra)
        async with open_session(workspace, events=[sink]) as session:
            async with anyio.create_task_group() as group:

                async def cancel_when_running() -> None:
                    while not sink.of_type(ToolCallRequested):
                        await anyio.sleep(0.02)
                    await anyio.sleep(0.3)
                    session.cancel()

                group.start_soon(cancel_when_running)
                with anyio.fail_after(30):
                    result = await session.run_turn("Wait for it.")
            with anyio.fail_after(10):
                while not marker.exists():
                    await anyio.sleep(0.05)
            messages = list(session.messages)
            transcript = session.transcript.path
    assert result.reason is TurnEndReason.CANCELLED
    assert [(e.call_id, e.is_error, e.error) for e in sink.of_type(ToolCallFinished)] == [
        ("x1", True, "cancelled by the user")
    ]
    assert marker.read_text() == "cancelled"
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert messages[2].tool_results[0].call_id == "x1" and messages[2].tool_results[0].is_error
    records = transcript_records(transcript)
    assert [r["message"]["role"] for r in records if r["type"] == "message"] == ["user", "assistant", "tool"]
    ended = [r for r in records if r.get("event") == "TurnEnded"]
    assert [e["reason"] for e in ended] == ["cancelled"]


@pytest.mark.parametrize("wire", WIRES)
async def test_429_with_retry_after_is_retried_after_that_wait(wire: str, workspace: Path, isolated_home: Path) -> None:
    script = [
        {"reply": "error", "status": 429, "message": "rate limited, slow down", "headers": {"Retry-After": "1"}},
        {"reply": "text", "text": "Hello after the wait."},
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Hello?")
    assert result.reason is TurnEndReason.COMPLETED and result.text == "Hello after the wait."
    retries = sink.of_type(ModelRequestRetried)
    assert [(r.attempt, r.delay_sec) for r in retries] == [(1, 1.0)]
    assert "429" in retries[0].reason and "rate limited, slow down" in retries[0].reason


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_cut_halfway_is_an_error_event_and_the_turn_ends_with_error(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    sink = RecordingSink()
    with ScriptedModelServer(
        wire, [{"reply": "cut", "text": "This answer will not arrive whole, it breaks off."}]
    ) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Tell me something.")
            messages = list(session.messages)
    assert result.reason is TurnEndReason.ERROR
    [failed] = sink.of_type(ModelFailed)
    assert failed.provider == "scripted"
    assert "broke off" in failed.message and "incomplete chunked read" in failed.message
    assert sink.of_type(TurnEnded)[0].reason is TurnEndReason.ERROR
    # what streamed before the cut stays in the conversation as the user saw it
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT] and messages[1].text
    assert "This answer will not arrive whole".startswith(messages[1].text[:10])


async def test_a_missing_api_key_names_the_variable_before_anything_starts(
    workspace: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KAIROX_TEST_MODEL_KEY")
    with ScriptedModelServer("openai", []) as server:
        user_config(isolated_home, server, wire="openai")
        with pytest.raises(ModelSetupError) as caught:
            async with open_session(workspace):
                pass
    assert "KAIROX_TEST_MODEL_KEY is not set" in str(caught.value)
    assert "export KAIROX_TEST_MODEL_KEY" in str(caught.value)


async def test_too_many_tool_calls_are_answered_as_not_run_and_the_turn_stops_at_the_limit(
    workspace: Path, isolated_home: Path
) -> None:
    script = [calls(("r1", "fs_read", {"path": "notes.txt"}), ("r2", "fs_read", {"path": "todo.txt"}))]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra="[agent]\nmax_tool_calls_per_turn = 1\n")
        async with open_session(workspace) as session:
            result = await session.run_turn("Read both.")
            last = session.messages[-1]
    assert result.reason is TurnEndReason.MAX_TOOL_CALLS and result.tool_calls == 1
    assert [(r.call_id, r.is_error) for r in last.tool_results] == [("r1", False), ("r2", True)]
    assert "max_tool_calls_per_turn" in last.tool_results[1].text


async def test_resumed_session_sends_its_history(workspace: Path, isolated_home: Path) -> None:
    def has_history(body: dict[str, object]) -> None:
        text = json.dumps(body["messages"])
        assert "first question" in text and "first answer" in text, text[:500]

    script = [
        {"reply": "text", "text": "first answer"},
        {"reply": "text", "text": "second answer", "check": has_history},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_session(workspace) as session:
            await session.run_turn("first question")
            session_id = session.session_id
        events = RecordingSink()
        async with open_session(workspace, resume=session_id, events=[events]) as again:
            result = await again.run_turn("second question")
            assert again.session_id == session_id
    assert result.text == "second answer"
    assert events.of_type(SessionStarted)[0].resumed is True
    assert [e.text for e in events.of_type(AssistantMessageCompleted)] == ["second answer"]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_session_that_crashed_mid_call_resumes_twice_with_every_call_answered(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    # the server answers 400 to a conversation with a tool call left without its result (as the real APIs do)
    ended = "not run: the session ended before this call ran"
    script = [
        calls(("c1", "fs_read", {"path": "notes.txt"}), ("c2", "fs_read", {"path": "todo.txt"})),
        {"reply": "text", "text": "first answer"},
        {
            "reply": "text",
            "text": "second answer",
            "expect": {"last_user_contains": "second question", "tool_results": {"c1": ended, "c2": ended}},
        },
        {
            "reply": "text",
            "text": "third answer",
            "expect": {"last_user_contains": "third question", "tool_results": {"c1": ended, "c2": ended}},
        },
    ]
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace) as session:
            await session.run_turn("first question")
            session_id, transcript = session.session_id, session.transcript.path
        # what a crash while the calls ran leaves: the transcript ends at the message that asked for them
        lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
        calling = next(
            i for i, line in enumerate(lines) if '"tool_calls"' in line and json.loads(line).get("type") == "message"
        )
        transcript.write_text("".join(lines[: calling + 1]), encoding="utf-8")
        for question, answer in (("second question", "second answer"), ("third question", "third answer")):
            async with open_session(workspace, resume=session_id) as again:
                result = await again.run_turn(question)
                history = list(again.messages)
            assert result.text == answer, result
            # the calls keep their place, each answered right after the message that made them
            index = next(i for i, m in enumerate(history) if m.tool_calls)
            answered = history[index + 1]
            assert answered.role is Role.TOOL and [(r.call_id, r.is_error, r.text) for r in answered.tool_results] == [
                ("c1", True, ended),
                ("c2", True, ended),
            ], answered


async def test_hooks_add_context_to_the_session_and_the_prompt_and_a_blocking_hook_keeps_the_prompt_from_the_model(
    workspace: Path, isolated_home: Path
) -> None:
    extra = (
        '[policy]\nsandbox_policy = "danger_full_access"\n\n'
        '[[hooks.session_start]]\ncommand = "echo Deploys are frozen this week."\n\n'
        '[[hooks.user_prompt_submit]]\ncommand = "echo The build is green."\n\n'
        "[[hooks.pre_turn]]\ncommand = \"grep -q forbidden && { echo 'no forbidden words' >&2; exit 2; } || true\"\n"
    )
    script = [
        {
            "reply": "text",
            "text": "Fine.",
            "expect": {"system_contains": "Deploys are frozen this week.", "last_user_contains": "The build is green."},
        }
    ]
    sink = RecordingSink()
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai", extra=extra)
        async with open_session(workspace, events=[sink]) as session:
            first = await session.run_turn("How is the build?")
            second = await session.run_turn("Do the forbidden thing.")
            roles = [m.role for m in session.messages]
    assert first.reason is TurnEndReason.COMPLETED
    assert (
        second.reason is TurnEndReason.BLOCKED and second.message is not None and "no forbidden words" in second.message
    )
    assert roles == [Role.USER, Role.ASSISTANT]  # the blocked prompt never joined the conversation
    assert [e.reason for e in sink.of_type(TurnEnded)] == [TurnEndReason.COMPLETED, TurnEndReason.BLOCKED]


async def test_a_request_that_would_not_fit_the_context_budget_is_not_sent(
    workspace: Path, isolated_home: Path
) -> None:
    with ScriptedModelServer("openai", []) as server:
        user_config(isolated_home, server, wire="openai", extra="[agent]\ncontext_budget_tokens = 500\n")
        async with open_session(workspace) as session:
            result = await session.run_turn("Hello")
    assert result.reason is TurnEndReason.CONTEXT_BUDGET
    assert result.message is not None and "agent.context_budget_tokens (500)" in result.message
