"""The agent loop (A1): ``AgentSession`` drives a model (OpenAI-compatible chat completions, the OpenAI Responses
API or Anthropic messages, streamed over ``httpx``) over an ExtensionContext: tool calls through the gate, approvals
mid-turn, hooks around turns, JSON-lines transcripts, a context-window measure and
compaction (``/compact`` and near the window). Every step is an event; front ends subscribe.

A caller with a model client of their own passes it to ``open_session(client=...)``: any object with the
:class:`ModelClient` members (``model``, ``dialect``, ``stream(request)`` yielding :class:`TextDelta`,
:class:`ToolCallPart` and a last :class:`ResponseEnd`)."""

from kairox.agent._client import ModelClient, ResponseEnd, TextDelta
from kairox.agent._events import (
    ApprovalRequested,
    AssistantMessageCompleted,
    AssistantTextDelta,
    CompactionFailed,
    CompactionStarted,
    ContextCompacted,
    ContextMeasured,
    ModelFailed,
    ModelRequestRetried,
    ModelRequestStarted,
    PlanUpdated,
    Rewound,
    SubagentEvent,
    SubagentStarted,
    SubagentStopped,
    ToolDefinitionsLarge,
    TurnEnded,
    TurnEndReason,
    TurnHookOutcome,
    UsageReported,
)
from kairox.agent._messages import ImagePart, Message, ModelRequest, Role, ToolCallPart, Usage
from kairox.agent._opener import open_session, open_workspace
from kairox.agent._plan import plan_text
from kairox.agent._provider import (
    ModelSettings,
    ModelSetupError,
    choose_model,
    known_providers,
    model_choices,
    model_settings,
)
from kairox.agent._rewind import rewind_transcript, session_checkpoints
from kairox.agent._session import AgentSession, TurnResult
from kairox.agent._task import serve_tasks
from kairox.agent._transcript import SessionNotFoundError, list_sessions, subagent_history

__all__ = [
    "AgentSession",
    "ApprovalRequested",
    "AssistantMessageCompleted",
    "AssistantTextDelta",
    "CompactionFailed",
    "CompactionStarted",
    "ContextCompacted",
    "ContextMeasured",
    "ImagePart",
    "Message",
    "ModelClient",
    "ModelFailed",
    "ModelRequest",
    "ModelRequestRetried",
    "ModelRequestStarted",
    "ModelSettings",
    "ModelSetupError",
    "PlanUpdated",
    "ResponseEnd",
    "Rewound",
    "Role",
    "SessionNotFoundError",
    "SubagentEvent",
    "SubagentStarted",
    "SubagentStopped",
    "TextDelta",
    "ToolCallPart",
    "ToolDefinitionsLarge",
    "TurnEndReason",
    "TurnEnded",
    "TurnHookOutcome",
    "TurnResult",
    "Usage",
    "UsageReported",
    "choose_model",
    "known_providers",
    "list_sessions",
    "model_choices",
    "model_settings",
    "open_session",
    "open_workspace",
    "plan_text",
    "rewind_transcript",
    "serve_tasks",
    "session_checkpoints",
    "subagent_history",
]
