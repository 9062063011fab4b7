"""The context window (A1): the measure front ends show, the warning about tool definitions, and compaction —
automatic near ``agent.compact_threshold`` and ``AgentSession.compact`` (``/compact``) — on both wires against the
scripted model servers, with the ``pre_compact`` hook, and a resume that starts from the summary in the transcript."""

import json
from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import transcript_records, user_config
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import (
    CompactionFailed,
    CompactionStarted,
    ContextCompacted,
    ContextMeasured,
    Role,
    ToolDefinitionsLarge,
    TurnEndReason,
    UsageReported,
    open_session,
)
from kairox.agent._context import SUMMARY_REQUEST, SUMMARY_SYSTEM, cut_point
from kairox.agent._messages import Message, ToolCallPart, ToolResultPart
from kairox.agent._provider import context_window, known_window
from kairox.agent._transcript import read_session
from kairox.config import resolve_config
from kairox.events import RecordingSink

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

WIRES = ["openai", "anthropic"]
LONG = "The notes list the release steps in order. " * 240  # about 10,600 characters: 2,600 tokens of answer
SUMMARY = "SUMMARY: the user asked what notes.txt says; it holds one line; the long answer listed the release steps."
WINDOW = 4000
"""Small enough that one long answer passes 85% of it; a request of the bare session takes about 1,200 tokens."""


def conversation(body: dict[str, Any]) -> str:
    """Everything the request sends as conversation, as one text to search."""
    return json.dumps(body.get("messages"), ensure_ascii=False)


def first_user_text(body: dict[str, Any]) -> str:
    first = next(m for m in body["messages"] if m["role"] == "user")
    content = first["content"]
    return (
        content
        if isinstance(content, str)
        else "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    )


def summary_request_check(body: dict[str, Any]) -> None:
    assert SUMMARY_SYSTEM in json.dumps(body.get("system") or body["messages"][0]), (
        "the summary request has its own system prompt"
    )
    assert "fs_read" in json.dumps(body.get("tools")), (
        "the summary request sends the definitions the conversation's calls refer to"
    )
    assert LONG[:200] in conversation(body), "the older turns are what is summarised"


def continued_check(body: dict[str, Any]) -> None:
    text = conversation(body)
    assert "<conversation-summary>" in first_user_text(body) and SUMMARY in first_user_text(body)
    assert LONG[:200] not in text, "the summarised answer is no longer sent"
    assert "first note" not in text, "the summarised tool result is no longer sent"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_session_past_a_small_window_compacts_continues_and_resumes_from_the_transcript(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    script: list[dict[str, Any]] = [
        {"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}]},
        {"reply": "text", "text": LONG, "expect": {"tool_results": {"r1": "first note"}}},
        {
            "reply": "text",
            "text": SUMMARY,
            "expect": {"last_user_contains": SUMMARY_REQUEST[:40]},
            "check": summary_request_check,
        },
        {
            "reply": "text",
            "text": "Answer two.",
            "expect": {"last_user_contains": "Second question"},
            "check": continued_check,
        },
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(
            isolated_home, server, wire=wire, extra=f'context_window = {WINDOW}\n\n[tools]\nsearch_threshold = "off"\n'
        )
        async with open_session(workspace, events=[sink]) as session:
            assert session.window_tokens == WINDOW
            first = await session.run_turn("What do the notes say?")
            assert not sink.of_type(CompactionStarted), "the first turn fits"
            second = await session.run_turn("Second question: what next?")
            messages = list(session.messages)
            session_id, transcript = session.session_id, session.transcript.path
    assert first.reason is TurnEndReason.COMPLETED and first.text == LONG
    assert second.reason is TurnEndReason.COMPLETED and second.text == "Answer two."

    measured = sink.of_type(ContextMeasured)
    assert measured[0].source == "estimate" and measured[0].tools == 9 and measured[0].tools_tokens > 0
    assert {m.source for m in measured} == {"estimate", "usage"}, "the provider's usage is used once a wire reports it"
    assert all(m.window_tokens == WINDOW for m in measured)
    [started] = sink.of_type(CompactionStarted)
    [done] = sink.of_type(ContextCompacted)
    assert started.trigger == done.trigger == "auto"
    before = sink.events[sink.events.index(started) - 1]
    assert isinstance(before, ContextMeasured) and before.source == "usage" and before.share >= 0.85
    assert (started.messages, done.replaced_messages, done.kept_messages) == (4, 4, 1)
    assert done.summary == SUMMARY and done.tokens_after < WINDOW * 0.85 < done.tokens_before
    assert len(sink.of_type(UsageReported)) == 4, "the summary request's usage counts too"
    assert [m.role for m in messages] == [Role.USER, Role.USER, Role.ASSISTANT] and messages[0].summary

    records = transcript_records(transcript)
    [line] = [r for r in records if r["type"] == "compaction"]
    assert line["kept"] == 1 and SUMMARY in line["message"]["text"] and line["message"]["summary"] is True

    _, history = read_session(transcript)
    assert history == messages, "the transcript gives back the compacted conversation"

    def resumed_check(body: dict[str, Any]) -> None:
        continued_check(body)
        assert "Second question" in conversation(body) and "Answer two." in conversation(body)

    resumed = [
        {"reply": "text", "text": "Answer three.", "expect": {"last_user_contains": "Third"}, "check": resumed_check}
    ]
    with ScriptedModelServer(wire, resumed) as server:
        user_config(
            isolated_home, server, wire=wire, extra=f'context_window = {WINDOW}\n\n[tools]\nsearch_threshold = "off"\n'
        )
        async with open_session(workspace, resume=session_id) as session:
            assert session.messages == messages
            third = await session.run_turn("Third question")
    assert third.reason is TurnEndReason.COMPLETED and third.text == "Answer three."


@pytest.mark.parametrize("wire", WIRES)
async def test_compact_runs_the_pre_compact_hook_whose_output_joins_the_instructions(
    wire: str, workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    payload = tmp_path / "pre_compact.json"
    hook = f"[[hooks.pre_compact]]\ncommand = \"cat > {payload}; echo 'Keep every file path that was read.'\"\n"

    def instructions_check(body: dict[str, Any]) -> None:
        last = conversation(body)
        assert "Mention the release." in last and "Keep every file path that was read." in last

    script: list[dict[str, Any]] = [
        {"reply": "text", "text": LONG},  # longer than its summary: compacting it saves something
        {"reply": "text", "text": "Two."},
        {"reply": "text", "text": "Three."},
        {
            "reply": "text",
            "text": SUMMARY,
            "expect": {"last_user_contains": SUMMARY_REQUEST[:40]},
            "check": instructions_check,
        },
        {"reply": "text", "text": "Four.", "check": continued_check},
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra=hook)
        async with open_session(workspace, events=[sink]) as session:
            for prompt in ("first prompt", "second prompt", "third prompt"):
                await session.run_turn(prompt)
            result = await session.compact("Mention the release.")
            kept = [m.text for m in session.messages[1:]]
            await session.run_turn("fourth prompt")
    assert isinstance(result, ContextCompacted) and result.trigger == "manual"
    assert (result.replaced_messages, result.kept_messages) == (2, 4), (
        "the last two prompts (agent.compact_keep_turns) stay"
    )
    assert kept == ["second prompt", "Two.", "third prompt", "Three."]
    sent = json.loads(payload.read_text())
    assert sent["hook_event_name"] == "PreCompact" and sent["kairox_event"] == "pre_compact"
    assert sent["trigger"] == "manual" and sent["custom_instructions"] == "Mention the release."


async def test_a_blocking_pre_compact_hook_keeps_the_conversation(workspace: Path, isolated_home: Path) -> None:
    hook = '[[hooks.pre_compact]]\ncommand = "echo not now >&2; exit 2"\n'
    sink = RecordingSink()
    # no summary request may reach the server: the script has no step for one
    with ScriptedModelServer(
        "openai", [{"reply": "text", "text": "One."}, {"reply": "text", "text": "Two."}]
    ) as server:
        user_config(isolated_home, server, wire="openai", extra=hook)
        async with open_session(workspace, events=[sink]) as session:
            await session.run_turn("first prompt")
            await session.run_turn("second prompt")
            before = list(session.messages)
            result = await session.compact()
            assert session.messages == before
    assert isinstance(result, CompactionFailed) and "pre_compact hook" in result.message and "not now" in result.message
    assert not sink.of_type(CompactionStarted)


async def test_compact_with_nothing_older_says_so_and_sends_nothing(workspace: Path, isolated_home: Path) -> None:
    with ScriptedModelServer("anthropic", [{"reply": "text", "text": "One."}]) as server:
        user_config(isolated_home, server, wire="anthropic")
        async with open_session(workspace) as session:
            await session.run_turn("only prompt")
            result = await session.compact()
    assert isinstance(result, CompactionFailed) and "nothing to compact" in result.message


async def test_a_failed_summary_request_keeps_the_conversation_and_the_turn_goes_on(
    workspace: Path, isolated_home: Path
) -> None:
    def kept_check(body: dict[str, Any]) -> None:
        assert LONG[:200] in conversation(body), "the conversation is sent as it was"

    script: list[dict[str, Any]] = [
        {"reply": "text", "text": LONG},
        {"reply": "error", "status": 400, "message": "prompt is too long"},
        {"reply": "text", "text": "Answered anyway.", "check": kept_check},
    ]
    sink = RecordingSink()
    with ScriptedModelServer("openai", script) as server:
        user_config(
            isolated_home,
            server,
            wire="openai",
            extra=f'context_window = {WINDOW}\n\n[tools]\nsearch_threshold = "off"\n',
        )
        async with open_session(workspace, events=[sink]) as session:
            await session.run_turn("first prompt")
            result = await session.run_turn("second prompt")
    assert result.reason is TurnEndReason.COMPLETED and result.text == "Answered anyway."
    [failed] = sink.of_type(CompactionFailed)
    assert failed.trigger == "auto" and "prompt is too long" in failed.message


async def test_compact_threshold_off_never_compacts(workspace: Path, isolated_home: Path) -> None:
    script = [{"reply": "text", "text": LONG}, {"reply": "text", "text": "Two."}]
    sink = RecordingSink()
    with ScriptedModelServer("anthropic", script) as server:
        extra = (
            f'context_window = {WINDOW}\n\n[agent]\ncompact_threshold = "off"\n\n[tools]\nsearch_threshold = "off"\n'
        )
        user_config(isolated_home, server, wire="anthropic", extra=extra)
        async with open_session(workspace, events=[sink]) as session:
            await session.run_turn("first prompt")
            await session.run_turn("second prompt")
    assert not sink.of_type(CompactionStarted) and not sink.of_type(CompactionFailed)
    assert sink.of_type(ContextMeasured)[-1].share > 0.85


@pytest.mark.parametrize("wire", WIRES)
async def test_tool_definitions_past_their_share_warn_once(wire: str, workspace: Path, isolated_home: Path) -> None:
    script = [{"reply": "text", "text": "One."}, {"reply": "text", "text": "Two."}]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        extra = 'context_window = 5000\n\n[agent]\ntools_warning_share = 0.15\n\n[tools]\nsearch_threshold = "off"\n'
        user_config(isolated_home, server, wire=wire, extra=extra)
        async with open_session(workspace, events=[sink]) as session:
            await session.run_turn("first prompt")
            await session.run_turn("second prompt")
            usage = session.context_usage
    [warning] = sink.of_type(ToolDefinitionsLarge)
    assert warning.tools == 9 and warning.window_tokens == 5000 and warning.threshold == 0.15
    assert warning.tools_tokens >= 750 and "agent.tools_warning_share" in warning.message
    assert sink.events.index(warning) < sink.events.index(sink.of_type(UsageReported)[0]), (
        "warned when the session opens"
    )
    assert usage is not None and usage.source == "usage" and usage.tools_tokens == warning.tools_tokens


async def test_no_warning_under_the_share(workspace: Path, isolated_home: Path) -> None:
    sink = RecordingSink()
    with ScriptedModelServer("openai", [{"reply": "text", "text": "One."}]) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_session(workspace, events=[sink]) as session:
            await session.run_turn("first prompt")
    assert not sink.of_type(ToolDefinitionsLarge)


# --- the window and the cut, without a model ------------------------------------------------------------------


def test_the_window_comes_from_the_provider_entry_then_the_agent_setting_then_the_model_name(
    isolated_home: Path, tmp_path: Path
) -> None:
    config = isolated_home / "kairox.toml"
    config.write_text(
        '[model_providers.big]\nbase_url = "http://127.0.0.1:9"\ncontext_window = 300000\n', encoding="utf-8"
    )
    resolved = resolve_config(tmp_path)
    entry = resolved.config.model_providers["big"]
    assert context_window(resolved, "claude-sonnet-4-5", entry) == 300_000
    assert context_window(resolved, "claude-sonnet-4-5") == 200_000
    assert context_window(resolved, "openai/gpt-4.1-mini") == 1_047_576
    assert context_window(resolved, "local-llama") == 128_000
    config.write_text("[agent]\ncontext_window_tokens = 32000\n", encoding="utf-8")
    assert context_window(resolve_config(tmp_path), "claude-sonnet-4-5") == 32_000, (
        "a window the user set wins over the name"
    )
    assert known_window("gpt-4") == 8_192 and known_window("gpt-4o-mini") == 128_000


def test_a_share_out_of_range_is_an_error_naming_the_key(isolated_home: Path, tmp_path: Path) -> None:
    (isolated_home / "kairox.toml").write_text("[agent]\ncompact_threshold = 85\n", encoding="utf-8")
    resolved = resolve_config(tmp_path)
    [problem] = resolved.problems
    assert (
        problem.key == "agent.compact_threshold"
        and problem.line == 2
        and problem.file == str(isolated_home / "kairox.toml")
    )
    assert "0.85 is 85%" in problem.message
    assert resolved.config.agent.compact_threshold == 0.85, "the bad value is not used"


def test_the_cut_keeps_calls_with_their_results() -> None:
    call = Message(role=Role.ASSISTANT, tool_calls=(ToolCallPart(id="c1", name="fs_read"),))
    result = Message(role=Role.TOOL, tool_results=(ToolResultPart(call_id="c1", name="fs_read", text="x"),))
    answer = Message(role=Role.ASSISTANT, text="done")
    one_turn = [Message.user("a"), call, result, call, result]
    assert cut_point(one_turn, 2) == 3, "inside a long first turn: before the latest call that follows results"
    assert cut_point(one_turn[:3], 2) is None
    two_turns = [Message.user("a"), call, result, answer, Message.user("b"), answer]
    assert cut_point(two_turns, 2) == 4 and cut_point(two_turns, 1) == 4
    assert cut_point(two_turns, 0) == 6, "keep nothing: everything is summarised"
    summarised = [Message(role=Role.USER, text="s", summary=True), Message.user("b"), answer]
    assert cut_point(summarised, 1) is None, "only the earlier summary is older than the kept turn"


async def test_a_summary_no_shorter_than_what_it_replaces_keeps_the_conversation(
    workspace: Path, isolated_home: Path
) -> None:
    wordy = "SUMMARY: " + "the user asked a question and got an answer; " * 20
    script = [
        {"reply": "text", "text": "One."},
        {"reply": "text", "text": "Two."},
        {"reply": "text", "text": wordy},
    ]
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        async with open_session(workspace) as session:
            await session.run_turn("first prompt")
            await session.run_turn("second prompt")
            before = list(session.messages)
            result = await session.compact()
            assert session.messages == before
    assert isinstance(result, CompactionFailed) and "no shorter than the 2 messages" in result.message
