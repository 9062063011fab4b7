"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, LM Studio, llama.cpp, OpenRouter), streamed over
``httpx`` (see ``_http.py`` for why not the SDK). Tool calls arrive as deltas keyed by index."""

import json
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from kairox._util._decode import DecodeProblem, decode_json
from kairox._util._json import JsonObject
from kairox.agent._client import ModelEvent, ResponseEnd, TextDelta
from kairox.agent._http import HttpWire, broken_off
from kairox.agent._messages import Message, ModelRequest, Role, ToolCallPart, ToolResultPart, Usage
from kairox.agent._provider import ModelProviderError, ModelSettings
from kairox.events import EventSink
from kairox.registry import ModelProvider

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def chat_messages(system: str, messages: tuple[Message, ...]) -> list[JsonObject]:
    """The conversation as chat-completions messages."""
    out: list[JsonObject] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role is Role.USER:
            if message.images:
                parts: list[JsonObject] = [{"type": "text", "text": message.text}]
                parts += [
                    {"type": "image_url", "image_url": {"url": f"data:{i.mime_type};base64,{i.data}"}}
                    for i in message.images
                ]
                out.append({"role": "user", "content": parts})
            else:
                out.append({"role": "user", "content": message.text})
        elif message.role is Role.ASSISTANT:
            entry: JsonObject = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
                    }
                    for c in message.tool_calls
                ]
            out.append(entry)
        else:
            out += [
                {"role": "tool", "tool_call_id": result.call_id, "content": result_text(result)}
                for result in message.tool_results
            ]
    return out


def result_text(result: ToolResultPart) -> str:
    """A tool result as the text both OpenAI wires send back (they carry no images in a result)."""
    text = result.text + "".join(
        f"\n[image {i.mime_type}, {len(i.data) * 3 // 4} bytes, not shown]" for i in result.images
    )
    return ("[error] " if result.is_error else "") + text


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
        return ToolCallPart(
            id=call_id, name=pending.name, invalid_arguments=f"the arguments are not valid JSON ({exc}): {text[:200]}"
        )
    if not isinstance(value, dict):
        return ToolCallPart(
            id=call_id, name=pending.name, invalid_arguments=f"the arguments must be a JSON object, not {text[:200]}"
        )
    return ToolCallPart(id=call_id, name=pending.name, arguments=value)


class OpenAiChatClient(HttpWire):
    """Streams chat completions: text deltas as they arrive, tool calls assembled from their deltas (keyed by
    ``index``) and yielded when the answer is complete."""

    dialect = ModelProvider.OPENAI
    path = "/chat/completions"

    def __init__(
        self,
        settings: ModelSettings,
        *,
        events: EventSink,
        api_key: str | None,
        on_request_sent: Callable[[], None] | None = None,
    ) -> None:
        base = settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        key = settings.prompt_cache_key
        self._cache_key = key if key is not None else base.startswith("https://api.openai.com/")
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        for variable, header in (("OPENAI_ORG_ID", "openai-organization"), ("OPENAI_PROJECT_ID", "openai-project")):
            if os.environ.get(variable):  # what the official client sends from the same variables
                headers[header] = os.environ[variable]
        url = base.rstrip("/") + self.path
        super().__init__(settings, url=url, events=events, headers=headers, on_sent=on_request_sent)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": chat_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = list(request.tools)
        if request.cache_key and self._cache_key:
            body["prompt_cache_key"] = request.cache_key
        calls: dict[int, _PendingCall] = {}
        usage = Usage()
        finish: str | None = None
        async with self.post(body) as events:
            try:
                async for event in events:
                    if event.data.strip() == "[DONE]":
                        break
                    chunk = _chunk(event.data)
                    if isinstance(chunk.get("error"), dict | str):
                        raise ModelProviderError(
                            self.settings.provider, f"the answer broke off: {_stream_error(chunk['error'])}"
                        )
                    if isinstance(chunk.get("usage"), dict):
                        counts = chunk["usage"]
                        usage = Usage(
                            input_tokens=counts.get("prompt_tokens") or 0,
                            output_tokens=counts.get("completion_tokens") or 0,
                            cache_read_tokens=(counts.get("prompt_tokens_details") or {}).get("cached_tokens") or 0,
                        )
                    for choice in chunk.get("choices") or ():
                        delta = choice.get("delta") or {}
                        if delta.get("content"):
                            yield TextDelta(text=delta["content"])
                        for part in delta.get("tool_calls") or ():
                            pending = calls.setdefault(int(part.get("index", 0)), _PendingCall())
                            if part.get("id"):
                                pending.id = part["id"]
                            function = part.get("function") or {}
                            if function.get("name"):
                                pending.name += function["name"]
                            if function.get("arguments"):
                                pending.arguments.append(function["arguments"])
                        if choice.get("finish_reason"):
                            finish = choice["finish_reason"]
            except ModelProviderError:
                raise
            except Exception as exc:
                raise broken_off(self.settings, exc) from exc
        if finish is None:
            raise ModelProviderError(
                self.settings.provider, "the answer broke off: the stream ended before the model finished"
            )
        for index in sorted(calls):
            yield _tool_call(calls[index], index)
        yield ResponseEnd(usage=usage, stop_reason=finish)


def _chunk(data: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise ValueError(f"a streamed chunk is not JSON: {data[:200]}") from exc
    if not isinstance(value, dict):
        raise ValueError(f"a streamed chunk is not a JSON object: {data[:200]}")
    return value


def _stream_error(error: object) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error)[:300])
    return str(error)
