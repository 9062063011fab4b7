"""The plan (A6): ``todo.write`` replaces the model's list of steps, each change a ``PlanUpdated`` event in the
transcript; a compaction keeps the plan in its summary and a resumed session starts from it."""

from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import transcript_records, user_config
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import PlanUpdated, TurnEndReason, open_session
from kairox.agent._events import PlanEntry, PlanStatus
from kairox.events import RecordingSink

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

WIRES = ["openai", "anthropic"]
STEPS = ["Read the cart", "Add a discount", "Run the tests"]


def plan_call(call_id: str, *statuses: str) -> dict[str, Any]:
    todos = [{"content": c, "status": s, "activeForm": c + "ing"} for c, s in zip(STEPS, statuses, strict=True)]
    return {"reply": "tool_calls", "calls": [{"id": call_id, "name": "todo_write", "arguments": {"todos": todos}}]}


def entries(*statuses: str) -> tuple[PlanEntry, ...]:
    return tuple(PlanEntry(content=c, status=PlanStatus(s)) for c, s in zip(STEPS, statuses, strict=True))


@pytest.mark.parametrize("wire", WIRES)
async def test_the_plan_is_sent_as_events_kept_by_a_compaction_and_restored_on_resume(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    script = [
        {**plan_call("p1", "in_progress", "pending", "pending"), "expect": {"tools_include": ["todo_write"]}},
        {**plan_call("p2", "completed", "in_progress", "pending"), "expect": {"tool_results": {"p1": "[>] Read"}}},
        {"reply": "text", "text": "Working on the discount."},
        {"reply": "text", "text": "Still on it.", "expect": {"last_user_contains": "go on"}},
        {"reply": "text", "text": "The user wants a discount on the cart; the cart was read."},  # the summary
    ]
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace, events=[sink]) as session:
            assert (await session.run_turn("Add a discount to the cart.")).reason is TurnEndReason.COMPLETED
            await session.run_turn("go on")  # a second turn, so there is an earlier one to compact
            await session.compact()
            transcript = session.transcript.path
    plans = [e.entries for e in sink.of_type(PlanUpdated)]
    assert plans == [entries("in_progress", "pending", "pending"), entries("completed", "in_progress", "pending")]
    logged = [r for r in transcript_records(transcript) if r.get("event") == "PlanUpdated"]
    assert logged[-1]["kind"] == "agent.plan"
    assert logged[-1]["entries"][1] == {"content": "Add a discount", "status": "in_progress"}
    summary = next(r for r in transcript_records(transcript) if r.get("type") == "compaction")
    assert "[x] Read the cart\n[>] Add a discount\n[ ] Run the tests" in summary["message"]["text"], (
        "the compacted conversation still holds the plan"
    )

    resumed = RecordingSink()
    with ScriptedModelServer(wire, [{"reply": "text", "text": "ok"}]) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace, events=[resumed], resume=transcript.stem) as session:
            assert session.plan is not None and session.plan.entries == plans[-1]
            await session.run_turn("and now?")
    assert [e.entries for e in resumed.of_type(PlanUpdated)] == [plans[-1]]
