"""Events of a session: every step of a turn is one (the gate adds its ToolCall* events to the same stream)."""

import enum
from dataclasses import dataclass, field
from typing import ClassVar

from kairox._util._json import JsonObject
from kairox.events import Event


class TurnEndReason(enum.StrEnum):
    COMPLETED = "completed"
    """The model answered without further tool calls."""
    BLOCKED = "blocked"
    """A ``user_prompt_submit`` or ``pre_turn`` hook blocked the prompt."""
    ERROR = "error"
    """The model provider failed (the error event says how)."""
    CANCELLED = "cancelled"
    MAX_TURNS = "max_turns"
    MAX_TOOL_CALLS = "max_tool_calls"
    CONTEXT_BUDGET = "context_budget"


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionStarted(Event):
    session_id: str
    model: str
    provider: str
    workspace: str
    resumed: bool = False
    transcript: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSwitched(Event):
    """The session talks to another model from its next turn on (``/model``); the transcript keeps it."""

    model: str
    provider: str
    previous_model: str
    previous_provider: str


@dataclass(frozen=True, kw_only=True, slots=True)
class UserMessageSubmitted(Event):
    turn: int
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnHookOutcome(Event):
    """The combined answer of the hooks of a session or turn event (each hook's run is a ``HookFinished``)."""

    hook_event: str
    hooks: int
    blocked: bool = False
    reason: str | None = None
    added_context: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequestStarted(Event):
    turn: int
    step: int
    """The model request within the turn, from 1."""
    messages: int
    tools: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequestRetried(Event):
    attempt: int
    delay_sec: float
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AssistantTextDelta(Event):
    kind: ClassVar[str] = "agent.text.delta"
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AssistantThoughtDelta(Event):
    """A piece of the model's reasoning summary (Responses), shown apart from the answer; never sent as text."""

    kind: ClassVar[str] = "agent.thought.delta"
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AssistantMessageCompleted(Event):
    kind: ClassVar[str] = "agent.message.completed"
    turn: int
    text: str
    tool_calls: tuple[JsonObject, ...] = ()
    """``{"id", "name", "tool", "arguments"}`` per call (``tool`` is the registry name)."""
    stop_reason: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequested(Event):
    """A tool call (or a plugin hook) waits for the person at the front end."""

    tool: str
    reason: str
    call_id: str = ""
    arguments: JsonObject = field(default_factory=dict)
    source: str = ""
    """Which part of the policy asked: ``rule``, ``protected_path``, ``sandbox``, ``mode``, ``hook``."""
    asked_by: str | None = None
    command: str | None = None
    grants: tuple[str, ...] = ()
    """What each "for the session" choice would cover."""
    headless: bool = False
    """No one to ask: the request is denied and the model is told."""
    agent: str | None = None
    """The subagent whose call asks; None for the session's own."""


@dataclass(frozen=True, kw_only=True, slots=True)
class UsageReported(Event):
    input_tokens: int
    output_tokens: int
    session_input_tokens: int
    session_output_tokens: int
    cache_read_tokens: int = 0
    """Of ``input_tokens``: read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of ``input_tokens``: written to the prompt cache."""
    session_cache_read_tokens: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelFailed(Event):
    kind: ClassVar[str] = "agent.model.failed"
    provider: str
    message: str
    status: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnEnded(Event):
    kind: ClassVar[str] = "agent.turn.ended"
    turn: int
    reason: TurnEndReason
    message: str | None = None
    tool_calls: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionEnded(Event):
    session_id: str
    turns: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextMeasured(Event):
    """How full the model's context window is: measured before each model request, after each answer, after a
    compaction and when the session opens. Front ends show it as the context meter."""

    kind: ClassVar[str] = "agent.context"
    used_tokens: int
    """What the next request takes: system prompt, conversation and tool definitions (``tools_tokens``)."""
    window_tokens: int
    tools_tokens: int
    """The tool definitions alone (always an estimate: no provider reports them apart)."""
    tools: int
    """Tool definitions sent with each request (deferred ones behind ``tool_search`` are not sent)."""
    source: str
    """``usage``: the provider's reported count of the last request and answer, plus an estimate of what came after;
    ``estimate``: about four characters a token, until a provider reports usage (or after a compaction)."""
    share: float = 0.0
    """``used_tokens / window_tokens``, to three places."""
    cached_tokens: int = 0
    """What the last request read from the provider's prompt cache."""

    def meter(self) -> str:
        """The meter every front end shows: ``context 41.2k/200k (21%, 38.1k cached)``, ``~`` before an estimate."""
        cached = f", {_thousands(self.cached_tokens)} cached" if self.cached_tokens else ""
        return (
            f"context {'~' * (self.source != 'usage')}{_thousands(self.used_tokens)}"
            f"/{_thousands(self.window_tokens)} ({self.share:.0%}{cached})"
        )


def _thousands(tokens: int) -> str:
    if tokens < 1000:
        return str(tokens)
    value = tokens / 1000
    return f"{value:.1f}k" if value < 100 and value != int(value) else f"{value:.0f}k"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDefinitionsLarge(Event):
    """The tool definitions sent with every request alone pass ``agent.tools_warning_share`` of the window."""

    kind: ClassVar[str] = "agent.context.tools_warning"
    tools_tokens: int
    window_tokens: int
    tools: int
    threshold: float
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactionStarted(Event):
    kind: ClassVar[str] = "agent.compaction.started"
    trigger: str
    """``manual`` (``/compact``, ``AgentSession.compact``) or ``auto`` (near ``agent.compact_threshold``)."""
    messages: int
    """Older messages that are being summarised."""
    used_tokens: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextCompacted(Event):
    """Older turns were replaced by the model's summary of them (kept in the transcript: a resume starts from it)."""

    kind: ClassVar[str] = "agent.compaction.done"
    trigger: str
    replaced_messages: int
    kept_messages: int
    tokens_before: int
    tokens_after: int
    summary: str


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactionFailed(Event):
    """Nothing was compacted: nothing old enough, a ``pre_compact`` hook blocked it, or the summary request failed."""

    kind: ClassVar[str] = "agent.compaction.failed"
    trigger: str
    message: str


class PlanStatus(enum.StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanEntry:
    content: str
    status: PlanStatus


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanUpdated(Event):
    """The model's plan (``todo.write``) as it stands now, whole: front ends show it, ACP sends it as ``plan``."""

    kind: ClassVar[str] = "agent.plan"
    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Rewound(Event):
    """The files went back to how they were before ``turn`` (``/rewind``), and the conversation too when
    ``messages`` is set (it keeps that many)."""

    kind: ClassVar[str] = "agent.rewind"
    turn: int
    restored: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    irreversible: tuple[str, ...] = ()
    """What was done in those turns that no rewind undoes."""
    messages: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentStarted(Event):
    """A ``task`` call (``parent_call_id``) started a subagent: a child session with the agent's prompt and tools."""

    kind: ClassVar[str] = "agent.subagent.started"
    agent: str
    agent_id: str
    parent_call_id: str
    description: str
    model: str
    tools: int
    transcript: str
    depth: int = 1


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentStopped(Event):
    kind: ClassVar[str] = "agent.subagent.stopped"
    agent: str
    agent_id: str
    parent_call_id: str
    reason: TurnEndReason
    tool_calls: int
    input_tokens: int
    output_tokens: int
    duration_ms: float


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentEvent(Event):
    """A subagent's event in its parent's stream: front ends nest it under the ``task`` call ``parent_call_id``."""

    kind: ClassVar[str] = "agent.subagent.event"
    agent: str
    agent_id: str
    parent_call_id: str
    inner: Event
