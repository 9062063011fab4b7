"""Anthropic messages through the official ``anthropic`` SDK, imported when the first request is made: a
top-level system prompt, ``max_tokens``, and all tool results of a turn in one user message with ``is_error``."""

from collections.abc import AsyncIterator
from typing import Any

import anyio

from kairox._util import DecodeProblem, JsonObject, decode_json
from kairox.agent._client import ModelEvent, ResponseEnd, TextDelta
from kairox.agent._messages import ImagePart, Message, ModelRequest, Role, ToolCallPart, Usage
from kairox.agent._provider import ModelProviderError, ModelSettings, sdk_failure, with_retries
from kairox.events import EventSink
from kairox.registry import ModelProvider


def _image(image: ImagePart) -> JsonObject:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def anthropic_messages(messages: tuple[Message, ...]) -> list[JsonObject]:
    """The conversation as Anthropic messages; consecutive user content (results, then a prompt) is merged."""
    out: list[JsonObject] = []
    for message in messages:
        blocks: list[JsonObject] = []
        if message.role is Role.TOOL:
            role = "user"
            for result in message.tool_results:
                content: list[JsonObject] = [{"type": "text", "text": result.text or "(no output)"}]
                content += [_image(i) for i in result.images]
                blocks.append({"type": "tool_result", "tool_use_id": result.call_id, "content": content, "is_error": result.is_error})
        else:
            role = str(message.role)
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            blocks += [_image(i) for i in message.images]
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


class AnthropicMessagesClient:
    """Streams messages: text deltas as they arrive, ``tool_use`` blocks assembled from their JSON deltas."""

    def __init__(self, settings: ModelSettings, *, events: EventSink, api_key: str | None) -> None:
        import anthropic  # the SDK loads when a session first talks to a model

        self.settings = settings
        self.events = events
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key or "unused", base_url=settings.base_url, timeout=settings.request_timeout_sec,
            max_retries=0,  # Kairox retries itself, with events, honouring Retry-After
            default_headers=dict(settings.headers) or None,
        )

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def dialect(self) -> ModelProvider:
        return ModelProvider.ANTHROPIC

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_output_tokens,
            "messages": anthropic_messages(request.messages),
            "stream": True,
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = list(request.tools)
        stream = await with_retries(
            self.settings, lambda: self._client.messages.create(**params), lambda e: sdk_failure(e, self._sdk), self.events
        )
        blocks: dict[int, dict[str, Any]] = {}
        input_tokens = output_tokens = 0
        stop_reason: str | None = None
        finished = False
        try:
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    usage = event.message.usage
                    input_tokens = (usage.input_tokens or 0) + (getattr(usage, "cache_read_input_tokens", 0) or 0)
                    output_tokens = usage.output_tokens or 0
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        blocks[event.index] = {"type": "tool_use", "id": block.id, "name": block.name, "json": []}
                    elif block.type == "text":
                        blocks[event.index] = {"type": "text"}
                        if block.text:
                            yield TextDelta(text=block.text)
                elif kind == "content_block_delta":
                    delta, current = event.delta, blocks.get(event.index)
                    if current is None:
                        continue
                    if delta.type == "text_delta" and current["type"] == "text":
                        yield TextDelta(text=delta.text)
                    elif delta.type == "input_json_delta" and current["type"] == "tool_use":
                        current["json"].append(delta.partial_json)
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    if event.usage is not None and event.usage.output_tokens is not None:
                        output_tokens = event.usage.output_tokens
                elif kind == "message_stop":
                    finished = True
        except Exception as exc:
            failure = sdk_failure(exc, self._sdk)
            message = failure.message if failure else f"{type(exc).__name__}: {exc}"
            raise ModelProviderError(self.settings.provider, f"the answer broke off: {message}") from exc
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await stream.close()
        if not finished:
            raise ModelProviderError(self.settings.provider, "the answer broke off: the stream ended before message_stop")
        for _, block in sorted(blocks.items()):
            if block["type"] == "tool_use":
                yield _tool_use(block)
        yield ResponseEnd(usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens), stop_reason=stop_reason)


def _tool_use(block: dict[str, Any]) -> ToolCallPart:
    text = "".join(block["json"]).strip() or "{}"
    try:
        value = decode_json(text)
    except DecodeProblem as exc:
        return ToolCallPart(id=block["id"], name=block["name"], invalid_arguments=f"the input is not valid JSON ({exc.message}): {text[:200]}")
    if not isinstance(value, dict):
        return ToolCallPart(id=block["id"], name=block["name"], invalid_arguments=f"the input must be a JSON object, not {text[:200]}")
    return ToolCallPart(id=block["id"], name=block["name"], arguments=value)
