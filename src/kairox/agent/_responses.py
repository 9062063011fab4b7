"""The OpenAI Responses API (``wire_api = "responses"``: OpenAI and compatible endpoints), streamed over ``httpx``
as chat is (see ``_http.py``). Stateless (``store: false``): each request carries the whole conversation with the
model's reasoning items as they came (encrypted where the model reasons), so a resumed transcript, a compaction or
another front end goes on from the same data, and nothing is kept on the provider's side."""

import json
from collections.abc import AsyncIterator
from typing import Any

from kairox._util._json import JsonObject
from kairox.agent._client import ModelEvent, ReasoningPart, ResponseEnd, TextDelta, ThoughtDelta
from kairox.agent._http import broken_off
from kairox.agent._messages import Message, ModelRequest, Role, Usage
from kairox.agent._openai import OpenAiChatClient, _chunk, _PendingCall, _stream_error, _tool_call, result_text
from kairox.agent._provider import ModelProviderError

REASONING_FAMILIES = ("o1", "o3", "o4", "gpt-5", "codex-")
"""Model names (prefixes) that reason: their requests ask for a reasoning summary and the encrypted reasoning
(other models reject both)."""


def responses_input(messages: tuple[Message, ...]) -> list[JsonObject]:
    """The conversation as Responses input items: reasoning before the answer it led to, calls and their outputs
    as items of their own."""
    out: list[JsonObject] = []
    for message in messages:
        if message.role is Role.USER:
            content: list[JsonObject] = [{"type": "input_text", "text": message.text}]
            content += [
                {"type": "input_image", "image_url": f"data:{i.mime_type};base64,{i.data}"} for i in message.images
            ]
            out.append({"role": "user", "content": content})
        elif message.role is Role.ASSISTANT:
            out += [dict(item) for item in message.reasoning]
            if message.text:
                out.append({"role": "assistant", "content": message.text})
            out += [
                {
                    "type": "function_call",
                    "call_id": c.id,
                    "name": c.name,
                    "arguments": json.dumps(c.arguments, ensure_ascii=False),
                }
                for c in message.tool_calls
            ]
        else:
            out += [
                {"type": "function_call_output", "call_id": r.call_id, "output": result_text(r)}
                for r in message.tool_results
            ]
    return out


class OpenAiResponsesClient(OpenAiChatClient):
    """Streams a Responses answer: text and reasoning-summary deltas as they arrive; reasoning items and function
    calls when their item is done (several calls of one answer run as the session runs them)."""

    path = "/responses"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body: dict[str, Any] = {
            "model": request.model,
            "instructions": request.system,
            "input": responses_input(request.messages),
            "stream": True,
            "store": False,
        }
        if request.tools:  # the OpenAI dialect's definitions, strict where the schema allows, in the Responses shape
            # (``strict`` always said: the Responses API takes a definition without it as strict)
            tools = [{"type": "function", "strict": False, **d["function"]} for d in request.tools]
            body.update(tools=tools, tool_choice="auto", parallel_tool_calls=True)
        if request.cache_key and self._cache_key:
            body["prompt_cache_key"] = request.cache_key
        if request.model.rsplit("/", 1)[-1].lower().startswith(REASONING_FAMILIES):
            body.update(reasoning={"summary": "auto"}, include=["reasoning.encrypted_content"])
        calls: list[JsonObject] = []
        end: JsonObject | None = None
        refused = False
        provider = self.settings.provider
        async with self.post(body) as events:
            try:
                async for event in events:
                    data = _chunk(event.data)
                    kind = data.get("type") or event.event
                    if kind == "response.output_text.delta":
                        yield TextDelta(text=str(data.get("delta", "")))
                    elif kind == "response.refusal.delta":
                        refused = True
                        yield TextDelta(text=str(data.get("delta", "")))
                    elif kind == "response.reasoning_summary_text.delta":
                        yield ThoughtDelta(text=str(data.get("delta", "")))
                    elif kind == "response.output_item.done":
                        item = data.get("item") or {}
                        if item.get("type") == "function_call":
                            calls.append(item)
                        elif item.get("type") == "reasoning":
                            yield ReasoningPart(item=item)
                    elif kind in ("response.completed", "response.incomplete"):
                        end = data.get("response") or {}
                        break
                    elif kind in ("response.failed", "error"):
                        error = (data.get("response") or {}).get("error") or data
                        raise ModelProviderError(provider, f"the answer broke off: {_stream_error(error)}")
            except ModelProviderError:
                raise
            except Exception as exc:
                raise broken_off(self.settings, exc) from exc
        if end is None:
            raise ModelProviderError(provider, "the answer broke off: the stream ended before the model finished")
        for index, item in enumerate(calls):
            pending = _PendingCall(id=str(item.get("call_id", "")), name=str(item.get("name", "")))
            pending.arguments.append(str(item.get("arguments") or ""))
            yield _tool_call(pending, index)
        counts = end.get("usage") or {}
        incomplete = (end.get("incomplete_details") or {}).get("reason")
        stop = "refusal" if refused else incomplete or ("tool_calls" if calls else "stop")
        cached = (counts.get("input_tokens_details") or {}).get("cached_tokens") or 0
        yield ResponseEnd(
            usage=Usage(
                input_tokens=counts.get("input_tokens") or 0,
                output_tokens=counts.get("output_tokens") or 0,
                cache_read_tokens=cached,
            ),
            stop_reason=stop,
        )
