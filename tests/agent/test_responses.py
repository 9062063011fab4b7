"""A session on ``wire_api = "responses"``: reasoning items kept and sent back (also from a resumed transcript),
reasoning summaries as their own events, cached input counted in the context measure, strict tool definitions in
the Responses shape, and the provider's reason for an incomplete answer."""

from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import user_config
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import AssistantMessageCompleted, ContextMeasured, UsageReported, open_session
from kairox.agent._events import AssistantThoughtDelta
from kairox.events import RecordingSink

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

READ_BOTH = {
    "reply": "tool_calls",
    "reasoning": "Both notes files matter.",
    "cached_tokens": 2048,
    "calls": [
        {"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}},
        {"id": "r2", "name": "fs_read", "arguments": {"path": "todo.txt"}},
    ],
}


def strict_flat_tools(body: dict[str, Any]) -> None:
    [read] = [t for t in body["tools"] if t["name"] == "fs_read"]
    assert read["type"] == "function" and read["strict"] is True and "function" not in read
    assert read["parameters"]["additionalProperties"] is False


async def test_reasoning_goes_back_with_the_calls_it_led_to_and_cached_input_counts_in_the_meter(
    workspace: Path, isolated_home: Path
) -> None:
    script = [
        {**READ_BOTH, "check": strict_flat_tools, "expect": {"system_contains": "coding agent"}},
        {"reply": "text", "text": "Two notes.", "expect": {"tool_results": {"r1": "first note", "r2": "second note"}}},
    ]
    sink = RecordingSink()
    with ScriptedModelServer("responses", script) as server:
        user_config(isolated_home, server, wire="responses")
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("What do the notes say?")
            second = server.requests[1]["input"]
    assert result.text == "Two notes." and result.tool_calls == 2
    assert "".join(e.text for e in sink.of_type(AssistantThoughtDelta)) == "Both notes files matter."
    kinds = [item.get("type", "message") for item in second]
    assert kinds == ["message", "reasoning", "function_call", "function_call", *["function_call_output"] * 2]
    assert second[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Both notes files matter."}],
        "encrypted_content": "enc-1",
    }
    first_usage = sink.of_type(UsageReported)[0]
    assert first_usage.input_tokens > 2048, "cached input is part of the prompt"
    measured = [m for m in sink.of_type(ContextMeasured) if m.source == "usage"]
    assert measured[0].used_tokens > 2048, "the meter after the first answer counts its cached input"


async def test_a_resumed_session_sends_the_reasoning_of_its_transcript_and_an_incomplete_answer_says_why(
    workspace: Path, isolated_home: Path
) -> None:
    with ScriptedModelServer("responses", [READ_BOTH, {"reply": "text", "text": "Read."}]) as server:
        user_config(isolated_home, server, wire="responses")
        async with open_session(workspace) as session:
            await session.run_turn("Read the notes.")
            session_id = session.session_id
    sink = RecordingSink()
    cut = {"reply": "text", "text": "Cut", "incomplete": "max_output_tokens"}
    later = [{**cut, "expect": {"last_user_contains": "More"}}]
    with ScriptedModelServer("responses", later) as resumed:
        resumed.reasoning = {"rs_1": "enc-1"}  # the reasoning the first server sent must come back from the transcript
        user_config(isolated_home, resumed, wire="responses")
        async with open_session(workspace, resume=session_id, events=[sink]) as session:
            await session.run_turn("More, please.")
    [completed] = sink.of_type(AssistantMessageCompleted)
    assert (completed.text, completed.stop_reason) == ("Cut", "max_output_tokens")
