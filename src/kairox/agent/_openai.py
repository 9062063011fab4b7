"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, LM Studio, llama.cpp, OpenRouter) through the
official ``openai`` SDK, imported when the first request is made. Tool calls arrive as deltas keyed by index."""

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio

from kairox._util import DecodeProblem, JsonObject, decode_json
from kairox.agent._client import ModelEvent, ResponseEnd, TextDelta
from kairox.agent._messages import Message, ModelRequest, Role, ToolCallPart, Usage
from kairox.agent._provider import ModelProviderError, ModelSettings, sdk_failure, with_retries
from kairox.events import EventSink
from kairox.registry import ModelProvider


def chat_messages(system: str, messages: tuple[Message, ...]) -> list[JsonObject]:
    """The conversation as chat-completions messages."""
    out: list[JsonObject] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role is Role.USER:
            if message.images:
                parts: list[JsonObject] = [{"type": "text", "text": message.text}]
                parts += [{"type": "image_url", "image_url": {"url": f"data:{i.mime_type};base64,{i.data}"}} for i in message.images]
                out.append({"role": "user", "content": parts})
            else:
                out.append({"role": "user", "content": message.text})
        elif message.role is Role.ASSISTANT:
            entry: JsonObject = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                    for c in message.tool_calls
                ]
            out.append(entry)
        else:
            for result in message.tool_results:
                text = result.text
                if result.images:  # tool messages carry text only
                    text += "".join(f"\n[image {i.mime_type}, {len(i.data) * 3 // 4} bytes, not shown]" for i in result.images)
                out.append({"role": "tool", "tool_call_id": result.call_id, "content": ("[error] " if result.is_error else "") + text})
    return out


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _tool_call(pending: _PendingCall, index: int) -> ToolCallPart:
    text = "".join(pending.arguments).strip() or "{}"
    call_id = pending.id or f"call_{index}"
    try:
        value = decode_json(text)
    except DecodeProblem as exc:
        return ToolCallPart(id=call_id, name=pending.name, invalid_arguments=f"the arguments are not valid JSON ({exc}): {text[:200]}")
    if not isinstance(value, dict):
        return ToolCallPart(id=call_id, name=pending.name, invalid_arguments=f"the arguments must be a JSON object, not {text[:200]}")
    return ToolCallPart(id=call_id, name=pending.name, arguments=value)


class OpenAiChatClient:
    """Streams chat completions: text deltas as they arrive, tool calls assembled from their deltas (keyed by
    ``index``) and yielded when the answer is complete."""

    def __init__(self, settings: ModelSettings, *, events: EventSink, api_key: str | None) -> None:
        import openai  # the SDK loads when a session first talks to a model

        self.settings = settings
        self.events = events
        self._sdk = openai
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "unused", base_url=settings.base_url, timeout=settings.request_timeout_sec,
            max_retries=0,  # Kairox retries itself, with events, honouring Retry-After
            default_headers=dict(settings.headers) or None,
        )

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def dialect(self) -> ModelProvider:
        return ModelProvider.OPENAI

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": chat_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = list(request.tools)
        stream = await with_retries(
            self.settings, lambda: self._client.chat.completions.create(**params), lambda e: sdk_failure(e, self._sdk), self.events
        )
        calls: dict[int, _PendingCall] = {}
        usage = Usage()
        finish: str | None = None
        try:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = Usage(input_tokens=chunk.usage.prompt_tokens or 0, output_tokens=chunk.usage.completion_tokens or 0)
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None and delta.content:
                        yield TextDelta(text=delta.content)
                    for part in (delta.tool_calls or ()) if delta is not None else ():
                        pending = calls.setdefault(part.index, _PendingCall())
                        if part.id:
                            pending.id = part.id
                        if part.function is not None:
                            if part.function.name:
                                pending.name += part.function.name
                            if part.function.arguments:
                                pending.arguments.append(part.function.arguments)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except Exception as exc:
            failure = sdk_failure(exc, self._sdk)
            message = failure.message if failure else f"{type(exc).__name__}: {exc}"
            raise ModelProviderError(self.settings.provider, f"the answer broke off: {message}") from exc
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await stream.close()
        if finish is None:
            raise ModelProviderError(self.settings.provider, "the answer broke off: the stream ended before the model finished")
        for index in sorted(calls):
            yield _tool_call(calls[index], index)
        yield ResponseEnd(usage=usage, stop_reason=finish)
