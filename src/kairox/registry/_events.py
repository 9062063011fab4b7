"""Events of the gate (R7): every call is requested, decided, and finished."""

from dataclasses import dataclass, field
from typing import Any, ClassVar

from kairox._util._json import JsonObject
from kairox.config import REDACTED, is_secret_key
from kairox.events import Event
from kairox.policy import Decision

EVENT_STRING_LIMIT = 2_000


def event_arguments(arguments: JsonObject) -> JsonObject:
    """Arguments as an event records them (traces are files): long strings (a whole file for fs.write) cut to a
    preview, and the values of arguments whose names look like credentials redacted."""

    def cut(value: Any) -> Any:
        if isinstance(value, str):
            return (
                value
                if len(value) <= EVENT_STRING_LIMIT
                else value[:EVENT_STRING_LIMIT] + f"… ({len(value)} characters)"
            )
        if isinstance(value, dict):
            return {
                k: REDACTED if isinstance(v, str) and v and is_secret_key(str(k)) else cut(v) for k, v in value.items()
            }
        if isinstance(value, list):
            return [cut(v) for v in value]
        return value

    return dict(cut(arguments))


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallRequested(Event):
    call_id: str
    tool: str
    arguments: JsonObject = field(default_factory=dict)
    """Long strings are cut to a preview (``event_arguments``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallDecided(Event):
    """The policy's (or the person's) verdict, with the rule that decided and where it was written."""

    kind: ClassVar[str] = "tool.call.decided"
    call_id: str
    tool: str
    decision: str
    """``allow``, ``ask`` or ``deny``."""
    reason: str
    source: str
    """Which part decided: ``rule``, ``hook``, ``mode``, ``sandbox``, ``protected_path``, ``session``, ``approver``."""
    rule: str | None = None
    file: str | None = None
    line: int | None = None
    layer: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallApprovalAnswered(Event):
    call_id: str
    tool: str
    approved: bool
    scope: str
    reason: str | None = None
    persisted_rule: str | None = None
    """The allow rule written to the user layer after an "always" answer."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallFinished(Event):
    kind: ClassVar[str] = "tool.call.finished"
    call_id: str
    tool: str
    duration_ms: float
    """How long the call took, without the time spent waiting for the person to answer its approval."""
    size_chars: int
    """Characters of text the result holds (after the output cap)."""
    is_error: bool
    error: str | None = None
    spilled_to: str | None = None
    approval_wait_ms: float = 0.0
    """How long the call waited for the person's answer (0 when it did not ask)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolsChanged(Event):
    """The tools of one origin were (re)listed and replaced."""

    origin: str
    tools: int


def decided_event(call_id: str, tool: str, decision: Decision) -> ToolCallDecided:
    rule = decision.rule
    return ToolCallDecided(
        call_id=call_id,
        tool=tool,
        decision=str(decision.verdict),
        reason=decision.reason,
        source=str(decision.source),
        rule=rule.pattern if rule else None,
        file=rule.file if rule else None,
        line=rule.line if rule else None,
        layer=rule.layer if rule else None,
    )
