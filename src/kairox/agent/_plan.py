"""The plan (A6): ``todo.write``, the list of steps the model keeps while it works, in the shape models know from
Claude Code's TodoWrite (``todos`` of ``content`` and ``status``). Each call replaces the whole list and is sent as
a ``PlanUpdated`` event, which front ends show and the transcript keeps; a compaction keeps the plan in its
summary, and a resumed session starts from the last plan of its transcript."""

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from kairox._util._json import JsonObject
from kairox.agent._events import PlanEntry, PlanStatus, PlanUpdated
from kairox.events import Event
from kairox.tools import Access, CallContext, PermissionProfile, ToolProvider, ToolResult, ToolSource, ToolSpec

PLAN_TOOL = "todo.write"

PLAN_SPEC = ToolSpec(
    name=PLAN_TOOL,
    description=(
        "Keep a short plan of the steps of a task of three or more steps, so the user can follow along: send the "
        "whole list each time, with exactly one step in_progress while you work and each step completed as soon as "
        "it is done. Skip it for a single quick step."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1, "description": "The step, in a few words."},
                        "status": {"type": "string", "enum": [str(s) for s in PlanStatus]},
                        "activeForm": {"type": "string", "description": "The step as it is being done (optional)."},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    },
    source=ToolSource.BUILTIN,
    origin="plan",
    permission=PermissionProfile(access=Access.READ),
)

MARKS = {PlanStatus.PENDING: "[ ]", PlanStatus.IN_PROGRESS: "[>]", PlanStatus.COMPLETED: "[x]"}


def plan_text(entries: Sequence[PlanEntry]) -> str:
    """``[x] done`` / ``[>] doing`` / ``[ ] to do``, one line a step."""
    return "\n".join(f"{MARKS[e.status]} {e.content}" for e in entries)


class PlanToolProvider(ToolProvider):
    """``todo.write`` for one session: the plan is the session's, so each session registers its own."""

    origin = "plan"

    def __init__(self, emit: Callable[[Event], None], entries: tuple[PlanEntry, ...] = ()) -> None:
        super().__init__()
        self._emit = emit
        self.entries = entries

    async def list_tools(self) -> Sequence[ToolSpec]:
        return (PLAN_SPEC,)

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        self.entries = tuple(
            PlanEntry(content=" ".join(str(t["content"]).split()), status=PlanStatus(t["status"]))
            for t in arguments["todos"]
        )
        self._emit(PlanUpdated(entries=self.entries))
        return ToolResult.text(f"The plan now reads:\n{plan_text(self.entries) or '(empty)'}")


def last_plan(transcript: Path) -> tuple[PlanEntry, ...]:
    """The plan of the transcript's last ``PlanUpdated`` event (a resumed session goes on with it)."""
    entries: list[JsonObject] = []
    for line in transcript.read_text(encoding="utf-8", errors="replace").splitlines():
        if '"PlanUpdated"' in line:
            try:
                entries = json.loads(line)["entries"]
            except (ValueError, KeyError, TypeError):
                continue
    try:
        return tuple(PlanEntry(content=str(e["content"]), status=PlanStatus(e["status"])) for e in entries)
    except (ValueError, KeyError, TypeError):
        return ()
