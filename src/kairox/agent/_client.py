"""The model-client protocol: what an ``AgentSession`` needs from a model, so a caller can bring their own.

A client is given one :class:`ModelRequest` (system prompt, the conversation, tool definitions in the client's
``dialect``) and streams typed events back: any number of :class:`TextDelta` and :class:`ToolCallPart`, then one
:class:`ResponseEnd` with the usage. Kairox's own OpenAI and Anthropic clients are such clients; so is any class
with these three members. A stream that stops before its ``ResponseEnd`` counts as an answer that broke off.
"""

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kairox._util._json import JsonObject
from kairox.agent._messages import Message, ModelRequest, ModelResponse, Role, ToolCallPart, Usage
from kairox.agent._provider import ModelProviderError
from kairox.registry import ModelProvider


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    """A piece of the answer's text, as it arrives (front ends show it at once)."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ThoughtDelta:
    """A piece of the model's reasoning summary, as it arrives (front ends show it apart from the answer)."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ReasoningPart:
    """One reasoning item of the answer, opaque to Kairox: kept on the message and sent back with the conversation."""

    item: JsonObject


@dataclass(frozen=True, kw_only=True, slots=True)
class ResponseEnd:
    """The model finished this answer; always the stream's last event."""

    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    """The provider's word for why it stopped (``stop``, ``tool_calls``, ``end_turn`` ...), if it gives one."""


ModelEvent = TextDelta | ToolCallPart | ResponseEnd | ThoughtDelta | ReasoningPart
"""What a model client's stream yields (a caller's client needs only the first three). A :class:`ToolCallPart` is
one whole call (its ``name`` is the wire name of the definition the model chose; arguments that are not a JSON
object go in ``invalid_arguments``)."""


@runtime_checkable
class ModelClient(Protocol):
    """A model behind the neutral message model. Raise a ``KairoxError`` (:class:`ModelProviderError` to name the
    provider and an HTTP status) from ``stream`` to end the turn with an error the session reports
    (``TurnEndReason.ERROR`` and a ``ModelFailed`` event); any other exception leaves ``run_turn`` as it is."""

    @property
    def model(self) -> str:
        """The model's name: sent in each request, written to the transcript."""
        ...

    @property
    def dialect(self) -> ModelProvider:
        """Which tool-definition format ``ModelRequest.tools`` holds (``ToolRegistry.definitions``)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The answer to ``request``, as events (an ``async def`` with ``yield`` is the usual way to write it)."""
        ...


async def collect(
    client: ModelClient,
    request: ModelRequest,
    on_text: Callable[[str], None],
    *,
    provider: str,
    on_thought: Callable[[str], None] | None = None,
) -> ModelResponse:
    """Read one answer from ``client``: text deltas go to ``on_text`` (reasoning summaries to ``on_thought``) as they
    arrive; the stream is closed in this task also when the caller is cancelled halfway."""
    text: list[str] = []
    calls: list[ToolCallPart] = []
    reasoning: list[JsonObject] = []
    end: ResponseEnd | None = None
    stream = client.stream(request)
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                if event.text:
                    text.append(event.text)
                    on_text(event.text)
            elif isinstance(event, ToolCallPart):
                calls.append(event)
            elif isinstance(event, ThoughtDelta):
                if on_thought is not None and event.text:
                    on_thought(event.text)
            elif isinstance(event, ReasoningPart):
                reasoning.append(event.item)
            elif isinstance(event, ResponseEnd):
                end = event
                break
            else:
                raise ModelProviderError(
                    provider,
                    f"the model client yielded a {type(event).__name__}; a "
                    "stream yields TextDelta, ToolCallPart and ResponseEnd only",
                )
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    if end is None:
        raise ModelProviderError(provider, "the answer broke off: the stream ended without a ResponseEnd")
    message = Message(role=Role.ASSISTANT, text="".join(text), tool_calls=tuple(calls), reasoning=tuple(reasoning))
    return ModelResponse(message=message, usage=end.usage, stop_reason=end.stop_reason)
