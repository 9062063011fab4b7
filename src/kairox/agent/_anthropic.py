"""Anthropic messages, streamed over ``httpx`` (see ``_http.py`` for why not the SDK): a top-level system
prompt, ``max_tokens``, and all tool results of a turn in one user message with ``is_error``."""

import json
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from kairox._util._decode import DecodeProblem, decode_json
from kairox._util._json import JsonObject
from kairox.agent._client import ModelEvent, ResponseEnd, TextDelta
from kairox.agent._http import HttpWire, broken_off
from kairox.agent._messages import ImagePart, Message, ModelRequest, Role, ToolCallPart, Usage
from kairox.agent._provider import ModelProviderError, ModelSettings
from kairox.events import EventSink
from kairox.registry import ModelProvider

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


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
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": result.call_id,
                        "content": content,
                        "is_error": result.is_error,
                    }
                )
        else:
            role = str(message.role)
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            blocks += [_image(i) for i in message.images]
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls
            ]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


EPHEMERAL: JsonObject = {"type": "ephemeral"}


def cache_breakpoints(messages: list[JsonObject]) -> list[JsonObject]:
    """The rolling breakpoint: the last block of the conversation is marked, so the next request (the same
    prefix and more) reads everything up to it from the cache. The tools and the system prompt carry the other two."""
    if messages and messages[-1]["content"]:
        last = messages[-1]
        blocks = last["content"]
        messages[-1] = {**last, "content": [*blocks[:-1], {**blocks[-1], "cache_control": EPHEMERAL}]}
    return messages


class AnthropicMessagesClient(HttpWire):
    """Streams messages: text deltas as they arrive, ``tool_use`` blocks assembled from their JSON deltas."""

    dialect = ModelProvider.ANTHROPIC

    def __init__(
        self,
        settings: ModelSettings,
        *,
        events: EventSink,
        api_key: str | None,
        on_request_sent: Callable[[], None] | None = None,
    ) -> None:
        base = settings.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        headers = {"anthropic-version": API_VERSION, **({"x-api-key": api_key} if api_key else {})}
        url = base.rstrip("/") + "/v1/messages"
        super().__init__(settings, url=url, events=events, headers=headers, on_sent=on_request_sent)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_output_tokens,
            "messages": cache_breakpoints(anthropic_messages(request.messages)),
            "stream": True,
        }
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, "cache_control": EPHEMERAL}]
        if request.tools:
            body["tools"] = [*request.tools[:-1], {**request.tools[-1], "cache_control": EPHEMERAL}]
        blocks: dict[int, dict[str, Any]] = {}
        input_tokens = output_tokens = cache_read = cache_write = 0
        stop_reason: str | None = None
        finished = False
        async with self.post(body) as events:
            try:
                async for sse in events:
                    event = json.loads(sse.data)
                    kind = event.get("type", sse.event) if isinstance(event, dict) else sse.event
                    if kind == "error":
                        error = event.get("error") or {}
                        detail = error.get("message") if isinstance(error, dict) else None
                        raise ModelProviderError(
                            self.settings.provider, f"the answer broke off: {detail or sse.data[:300]}"
                        )
                    if kind == "message_start":
                        usage = (event.get("message") or {}).get("usage") or {}
                        # with prompt caching the prompt is split three ways;
                        # together they are what it takes of the window
                        cache_read = usage.get("cache_read_input_tokens") or 0
                        cache_write = usage.get("cache_creation_input_tokens") or 0
                        input_tokens = (usage.get("input_tokens") or 0) + cache_read + cache_write
                        output_tokens = usage.get("output_tokens") or 0
                    elif kind == "content_block_start":
                        block, index = event.get("content_block") or {}, event.get("index", 0)
                        if block.get("type") == "tool_use":
                            blocks[index] = {
                                "type": "tool_use",
                                "id": block.get("id", ""),
                                "name": block.get("name", ""),
                                "json": [],
                            }
                        elif block.get("type") == "text":
                            blocks[index] = {"type": "text"}
                            if block.get("text"):
                                yield TextDelta(text=block["text"])
                    elif kind == "content_block_delta":
                        delta, current = event.get("delta") or {}, blocks.get(event.get("index", 0))
                        if current is None:
                            continue
                        if delta.get("type") == "text_delta" and current["type"] == "text":
                            yield TextDelta(text=delta.get("text", ""))
                        elif delta.get("type") == "input_json_delta" and current["type"] == "tool_use":
                            current["json"].append(delta.get("partial_json", ""))
                    elif kind == "message_delta":
                        stop_reason = (event.get("delta") or {}).get("stop_reason") or stop_reason
                        usage = event.get("usage") or {}
                        if usage.get("output_tokens") is not None:
                            output_tokens = usage["output_tokens"]
                    elif kind == "message_stop":
                        finished = True
                        break
            except ModelProviderError:
                raise
            except Exception as exc:
                raise broken_off(self.settings, exc) from exc
        if not finished:
            raise ModelProviderError(
                self.settings.provider, "the answer broke off: the stream ended before message_stop"
            )
        for _, block in sorted(blocks.items()):
            if block["type"] == "tool_use":
                yield _tool_use(block)
        usage = Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
        yield ResponseEnd(usage=usage, stop_reason=stop_reason)


def _tool_use(block: dict[str, Any]) -> ToolCallPart:
    text = "".join(block["json"]).strip() or "{}"
    try:
        value = decode_json(text)
    except DecodeProblem as exc:
        return ToolCallPart(
            id=block["id"],
            name=block["name"],
            invalid_arguments=f"the input is not valid JSON ({exc.message}): {text[:200]}",
        )
    if not isinstance(value, dict):
        return ToolCallPart(
            id=block["id"], name=block["name"], invalid_arguments=f"the input must be a JSON object, not {text[:200]}"
        )
    return ToolCallPart(id=block["id"], name=block["name"], arguments=value)
