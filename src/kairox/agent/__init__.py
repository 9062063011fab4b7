"""The agent loop (A1): ``AgentSession`` drives a model (OpenAI-compatible chat completions or Anthropic
messages, streamed over ``httpx``) over an ExtensionContext: tool calls through the gate, approvals
mid-turn, hooks around turns, JSON-lines transcripts. Every step is an event; front ends subscribe.

A caller with a model client of their own passes it to ``open_session(client=...)``: any object with the
:class:`ModelClient` members (``model``, ``dialect``, ``stream(request)`` yielding :class:`TextDelta`,
:class:`ToolCallPart` and a last :class:`ResponseEnd`)."""

from kairox.agent._client import ModelClient, ModelEvent, ResponseEnd, TextDelta
from kairox.agent._events import (
    ApprovalRequested,
    AssistantMessageCompleted,
    AssistantTextDelta,
    ModelFailed,
    ModelRequestRetried,
    ModelRequestStarted,
    SessionEnded,
    SessionStarted,
    TurnEnded,
    TurnEndReason,
    TurnHookOutcome,
    UsageReported,
    UserMessageSubmitted,
)
from kairox.agent._messages import (
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    Role,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from kairox.agent._opener import OpenedWorkspace, open_workspace
from kairox.agent._provider import (
    BUILTIN_PROVIDERS,
    ModelProviderError,
    ModelSettings,
    ModelSetupError,
    model_settings,
)
from kairox.agent._session import AgentSession, SessionApprover, TurnResult, client_for, open_session
from kairox.agent._transcript import (
    SessionInfo,
    SessionNotFoundError,
    Transcript,
    find_session,
    list_sessions,
    read_session,
)

__all__ = [
    "BUILTIN_PROVIDERS",
    "AgentSession",
    "ApprovalRequested",
    "AssistantMessageCompleted",
    "AssistantTextDelta",
    "ImagePart",
    "Message",
    "ModelClient",
    "ModelEvent",
    "ModelFailed",
    "ModelProviderError",
    "ModelRequest",
    "ModelRequestRetried",
    "ModelRequestStarted",
    "ModelResponse",
    "ModelSettings",
    "ModelSetupError",
    "OpenedWorkspace",
    "ResponseEnd",
    "Role",
    "SessionApprover",
    "SessionEnded",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionStarted",
    "TextDelta",
    "ToolCallPart",
    "ToolResultPart",
    "Transcript",
    "TurnEndReason",
    "TurnEnded",
    "TurnHookOutcome",
    "TurnResult",
    "Usage",
    "UsageReported",
    "UserMessageSubmitted",
    "client_for",
    "find_session",
    "list_sessions",
    "model_settings",
    "open_session",
    "open_workspace",
    "read_session",
]
