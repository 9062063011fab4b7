"""Scripted model servers for Kairox's tests: real HTTP on 127.0.0.1 speaking the OpenAI chat-completions, the
OpenAI Responses or the Anthropic messages wire format, streaming (SSE) and not, driven by a script of replies.

A script is a list of steps, one per request, in order. A step is a dict (JSON-able, so a script can be a file):

    {"reply": "text", "text": "Hello"}
    {"reply": "tool_calls", "calls": [{"id": "c1", "name": "fs_read", "arguments": {"path": "a.py"}}], "text": ""}
    {"reply": "error", "status": 429, "message": "slow down", "headers": {"Retry-After": "1"}}
    {"reply": "cut", "text": "an answer that breaks off halfway"}
    {"reply": "stream_error", "text": "an answer the provider", "message": "overloaded"}  (an error event mid-stream)

``"anthropic_usage"`` adds fields to the usage of Anthropic's ``message_start`` (``cache_read_input_tokens``).
On the Responses wire, ``"reasoning": "summary text"`` answers with a reasoning item first (its summary streamed,
``encrypted_content`` set), ``"cached_tokens": N`` reports N cached input tokens, ``"incomplete": "reason"`` ends
the answer as ``response.incomplete``; a request is checked against the ``openai`` SDK's input and tool types, and
each reasoning item the server sent must come back (encrypted content intact) before the calls it led to.

The server keeps a prompt cache as the providers describe theirs, and reports it in the usage: Anthropic's holds the
prefix (tools, system, messages, block by block) up to each ``cache_control`` breakpoint of at least 1,024 tokens
and reads the longest one it holds (``cache_read_input_tokens``, ``cache_creation_input_tokens``); OpenAI's holds
every prompt and reads the longest common prefix of 1,024 tokens or more, in steps of 128
(``prompt_tokens_details.cached_tokens``; on the Responses wire ``input_tokens_details.cached_tokens``). A token
is four bytes of the request's JSON.

``routes`` (tests) maps a text to a script of its own: a request whose system prompt holds the text is answered
from that script (a subagent's requests, told apart by its prompt, in whatever order they come).

With optional ``"expect"``: ``{"last_user_contains": "...", "tool_results": {"c1": "substring"},
"tools_include": ["fs_read"], "system_contains": "..."}`` and, in tests, ``"check"``: a callable given the
request body that raises AssertionError. ``"delay_sec"`` waits between streamed events.

A request the script does not expect (none left, a wrong path, a failed expectation, a malformed conversation)
is answered with HTTP 400 and recorded; ``verify()`` (called when the ``with`` block ends) fails on recorded
problems and on replies left over. Run as a program (``--wire openai|responses|anthropic --script FILE``) it serves
until the script is used up (or ``--idle-timeout`` passes) and exits 1 on any problem.
"""

import argparse
import asyncio
import contextlib
import hashlib
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Step = dict[str, Any]


def _split(text: str, parts: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)]


# --- request checks ------------------------------------------------------------------------------------------


def _openai_problems(body: dict[str, Any]) -> list[str]:
    problems = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["no messages"]
    open_calls: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if open_calls and role != "tool":
            problems.append(f"message {index} ({role}) comes before the results of tool calls {open_calls}")
            open_calls = []
        if role == "assistant":
            open_calls = [c["id"] for c in message.get("tool_calls") or []]
        elif role == "tool":
            if message.get("tool_call_id") not in open_calls:
                problems.append(
                    f"message {index}: tool result for {message.get('tool_call_id')!r}, which no open call has"
                )
            else:
                open_calls.remove(message["tool_call_id"])
    if open_calls:
        problems.append(f"tool calls {open_calls} have no result")
    return problems


def _anthropic_problems(body: dict[str, Any]) -> list[str]:
    problems = []
    if not isinstance(body.get("max_tokens"), int):
        problems.append("max_tokens is missing")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "no messages"]
    expected: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"message {index} has role {role!r} (the system prompt is a top-level field)")
        if index and messages[index - 1].get("role") == role:
            problems.append(f"messages {index - 1} and {index} are both {role}")
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if role == "user":
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if sorted(results) != sorted(expected):
                problems.append(
                    f"message {index} answers tool uses {results}, expected all of {expected} in this one message"
                )
            expected = []
        else:
            expected = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    if expected:
        problems.append(f"tool uses {expected} have no result")
    return problems


def _responses_problems(body: dict[str, Any], sent_reasoning: dict[str, str]) -> list[str]:
    from openai.types.responses import FunctionToolParam, ResponseInputParam
    from pydantic import TypeAdapter, ValidationError

    items = body.get("input")
    if not isinstance(items, list) or not items:
        return ["no input items"]
    problems = []
    for shape, value in ((ResponseInputParam, items), (list[FunctionToolParam], body.get("tools") or [])):
        try:
            TypeAdapter(shape).validate_python(value)
        except ValidationError as exc:
            problems.append(f"not what the Responses API takes: {str(exc)[:400]}")
    if body.get("store") is not False:
        problems.append("store is not false: a stateless request must say so")
    calls: list[str] = []
    seen = set()
    for index, item in enumerate(items):
        if item.get("type") == "reasoning":
            seen.add(item.get("id"))
            if sent_reasoning.get(item.get("id")) != item.get("encrypted_content"):
                problems.append(f"item {index}: reasoning {item.get('id')!r} came back changed or unknown")
        elif item.get("type") == "function_call":
            calls.append(item.get("call_id"))
        elif item.get("type") == "function_call_output":
            if item.get("call_id") not in calls:
                problems.append(f"item {index}: output for {item.get('call_id')!r}, which no earlier call has")
            else:
                calls.remove(item["call_id"])
    if calls:
        problems.append(f"function calls {calls} have no output")
    missing = sorted(set(sent_reasoning) - seen)
    if missing:
        problems.append(f"reasoning items {missing} were not sent back")
    return problems


def system_text(body: dict[str, Any], wire: str) -> str:
    """The system prompt of a request, wherever its wire puts it."""
    messages = body.get("messages") or []
    return str(
        body.get("system")
        if wire == "anthropic"
        else body.get("instructions")
        if wire == "responses"
        else next((m.get("content") for m in messages if m.get("role") == "system"), "")
    )


def _expectation_problems(step: Step, body: dict[str, Any], wire: str) -> list[str]:
    problems = []
    expect = step.get("expect") or {}
    messages = body.get("messages") or body.get("input") or []
    users = [m for m in messages if m.get("role") == "user"]
    if "last_user_contains" in expect:
        texts = _texts(users[-1]) if users else ""
        if expect["last_user_contains"] not in texts:
            problems.append(f"the last user message does not contain {expect['last_user_contains']!r}: {texts[:300]!r}")
    if "system_contains" in expect and expect["system_contains"] not in system_text(body, wire):
        problems.append(f"the system prompt does not contain {expect['system_contains']!r}")
    for call_id, needle in (expect.get("tool_results") or {}).items():
        found = _tool_result(messages, call_id, wire)
        if found is None:
            problems.append(f"no tool result for {call_id!r}")
        elif needle not in found:
            problems.append(f"the result of {call_id!r} does not contain {needle!r}: {found[:300]!r}")
    names = [t.get("name") or (t.get("function") or {}).get("name") for t in body.get("tools") or []]
    for name in expect.get("tools_include") or []:
        if name not in names:
            problems.append(f"tool {name!r} is not offered (offered: {names})")
    check: Callable[[dict[str, Any]], None] | None = step.get("check")
    if check is not None:
        try:
            check(body)
        except AssertionError as exc:
            problems.append(f"check failed: {exc}")
    return problems


def _texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if block.get("type") in ("text", "input_text"):
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.append(_texts(block))
    return "\n".join(out)


def _tool_result(messages: list[dict[str, Any]], call_id: str, wire: str) -> str | None:
    for message in messages:
        if wire == "openai" and message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return str(message.get("content"))
        if message.get("type") == "function_call_output" and message.get("call_id") == call_id:
            return str(message.get("output"))
        if wire == "anthropic" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                    return ("[is_error] " if block.get("is_error") else "") + _texts(block)
    return None


# --- the prompt cache ---------------------------------------------------------------------------------------

MIN_CACHED = 1024


def _tokens(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True)) // 4


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings."""
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size


class PromptCache:
    def __init__(self) -> None:
        self.prefixes: set[str] = set()
        self.prompts: list[str] = []

    def anthropic(self, body: dict[str, Any], total: int) -> dict[str, int]:
        system = body.get("system")
        blocks: list[Any] = [*(body.get("tools") or [])]
        blocks += system if isinstance(system, list) else [system] if system else []
        for message in body.get("messages") or []:
            content = message.get("content")
            for block in content if isinstance(content, list) else [content]:
                blocks.append([message.get("role"), block])
        digest, size, read, write = "", 0, 0, 0
        marked: list[tuple[str, int]] = []
        for block in blocks:
            inner = block[1] if isinstance(block, list) else block
            plain = {k: v for k, v in inner.items() if k != "cache_control"} if isinstance(inner, dict) else inner
            digest = hashlib.sha256((digest + json.dumps(plain, sort_keys=True)).encode()).hexdigest()
            size += _tokens(plain)
            if digest in self.prefixes:
                read = size
            if isinstance(inner, dict) and "cache_control" in inner and size >= MIN_CACHED:
                marked.append((digest, size))
        if marked and marked[-1][0] not in self.prefixes:
            write = max(0, marked[-1][1] - read)
        self.prefixes.update(d for d, _ in marked)
        return {
            "input_tokens": max(0, total - read - write),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
        }

    def openai(self, body: dict[str, Any]) -> int:
        conversation = [body.get("instructions"), body["input"]] if "input" in body else body.get("messages")
        prompt = json.dumps(body.get("tools") or [], sort_keys=True) + json.dumps(conversation, sort_keys=True)
        common = max((_common(prompt, p) for p in self.prompts), default=0) // 4
        self.prompts.append(prompt)
        return 0 if common < MIN_CACHED else common // 128 * 128


# --- replies -------------------------------------------------------------------------------------------------


def _openai_events(step: Step, model: str, usage: dict[str, Any], include_usage: bool) -> list[str]:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    chunks: list[dict[str, Any]] = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    ]
    for piece in _split(step.get("text", "")):
        chunks.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    for index, call in enumerate(step.get("calls") or []):
        arguments = json.dumps(call.get("arguments", {}))
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }
        chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]})
        for piece in _split(arguments, 2):
            chunks.append(
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"index": index, "function": {"arguments": piece}}]},
                            "finish_reason": None,
                        }
                    ],
                }
            )
    finish = "tool_calls" if step.get("calls") else "stop"
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if include_usage:
        chunks.append(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": usage["prompt_tokens"],
                    "completion_tokens": usage["completion_tokens"],
                    "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
                    "prompt_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
                },
            }
        )
    return [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]


def _openai_body(step: Step, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.get("text") or None}
    if step.get("calls"):
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
            }
            for c in step["calls"]
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if step.get("calls") else "stop"}],
        "usage": {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
        },
    }


def _anthropic_content(step: Step) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"type": "text", "text": step["text"]}] if step.get("text") else []
    content += [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c.get("arguments", {})}
        for c in step.get("calls") or []
    ]
    return content


def _anthropic_events(step: Step, model: str, usage: dict[str, Any]) -> list[str]:
    def event(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    message = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": 1,
            **(usage.get("anthropic_cache") or {}),
            **(step.get("anthropic_usage") or {}),
        },
    }
    out = [event("message_start", {"message": message})]
    for index, block in enumerate(_anthropic_content(step)):
        if block["type"] == "text":
            out.append(event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}))
            out += [
                event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": p}})
                for p in _split(block["text"])
            ]
        else:
            out.append(event("content_block_start", {"index": index, "content_block": {**block, "input": {}}}))
            out += [
                event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta", "partial_json": p}})
                for p in _split(json.dumps(block["input"]), 2)
            ]
        out.append(event("content_block_stop", {"index": index}))
    stop = "tool_use" if step.get("calls") else "end_turn"
    out.append(
        event(
            "message_delta",
            {
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["completion_tokens"]},
            },
        )
    )
    out.append(event("message_stop", {}))
    return out


def _anthropic_body(step: Step, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_content(step),
        "stop_reason": "tool_use" if step.get("calls") else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]},
    }


def _responses_output(step: Step, number: int) -> list[dict[str, Any]]:
    """The output items of an answer: reasoning (when scripted), the message, the function calls."""
    out: list[dict[str, Any]] = []
    if step.get("reasoning"):
        summary = [{"type": "summary_text", "text": step["reasoning"]}]
        encrypted = f"enc-{number}"
        out.append({"type": "reasoning", "id": f"rs_{number}", "summary": summary, "encrypted_content": encrypted})
    if step.get("text"):
        content = [{"type": "output_text", "text": step["text"], "annotations": []}]
        out.append(
            {"type": "message", "id": f"msg_{number}", "role": "assistant", "status": "completed", "content": content}
        )
    out += [
        {
            "type": "function_call",
            "id": f"fc_{number}_{i}",
            "call_id": c["id"],
            "name": c["name"],
            "arguments": json.dumps(c.get("arguments", {})),
            "status": "completed",
        }
        for i, c in enumerate(step.get("calls") or [])
    ]
    return out


def _responses_body(step: Step, model: str, usage: dict[str, Any], number: int) -> dict[str, Any]:
    scripted = int(step.get("cached_tokens", 0))  # on top of the prompt; the simulated cache's are part of it
    cached = scripted + int(usage.get("cached_tokens", 0))
    incomplete = step.get("incomplete")
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "error": None,
        "output": _responses_output(step, number),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": usage["prompt_tokens"] + scripted,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 1 if step.get("reasoning") else 0},
            "total_tokens": usage["prompt_tokens"] + scripted + usage["completion_tokens"],
        },
    }


def _responses_events(step: Step, model: str, usage: dict[str, Any], number: int) -> list[str]:
    sequence = iter(range(1_000_000))

    def event(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': next(sequence), **data})}\n\n"

    final = _responses_body(step, model, usage, number)
    started = {**final, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    out = [event("response.created", {"response": started}), event("response.in_progress", {"response": started})]
    for index, item in enumerate(final["output"]):
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "reasoning":
            out.append(event("response.output_item.added", {"output_index": index, "item": {**item, "summary": []}}))
            part = {"type": "summary_text", "text": ""}
            out.append(event("response.reasoning_summary_part.added", {**where, "summary_index": 0, "part": part}))
            out += [
                event("response.reasoning_summary_text.delta", {**where, "summary_index": 0, "delta": piece})
                for piece in _split(step["reasoning"])
            ]
        elif item["type"] == "message":
            out.append(event("response.output_item.added", {"output_index": index, "item": {**item, "content": []}}))
            part = {"type": "output_text", "text": "", "annotations": []}
            out.append(event("response.content_part.added", {**where, "content_index": 0, "part": part}))
            out += [
                event("response.output_text.delta", {**where, "content_index": 0, "delta": piece, "logprobs": []})
                for piece in _split(step["text"])
            ]
            out.append(event("response.output_text.done", {**where, "content_index": 0, "text": step["text"]}))
        else:
            out.append(event("response.output_item.added", {"output_index": index, "item": {**item, "arguments": ""}}))
            out += [
                event("response.function_call_arguments.delta", {**where, "delta": piece})
                for piece in _split(item["arguments"], 2)
            ]
            out.append(event("response.function_call_arguments.done", {**where, "arguments": item["arguments"]}))
        out.append(event("response.output_item.done", {"output_index": index, "item": item}))
    kind = "response.incomplete" if step.get("incomplete") else "response.completed"
    out.append(event(kind, {"response": final}))
    return out


def _error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 400: "invalid_request_error", 401: "authentication_error"}.get(status, "api_error")
    if wire == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}


# --- the server ----------------------------------------------------------------------------------------------


class ScriptedModelServer:
    """One scripted endpoint on 127.0.0.1. Use as a context manager; ``base_url`` is what the SDK is given."""

    def __init__(
        self,
        wire: str,
        script: list[Step],
        *,
        idle_timeout: float = 120.0,
        stop_when_done: bool = False,
        routes: dict[str, list[Step]] | None = None,
    ) -> None:
        if wire not in ("openai", "responses", "anthropic"):
            raise ValueError(f"wire must be openai, responses or anthropic, not {wire!r}")
        self.wire = wire
        self.script = list(script)
        self.routes = {key: list(steps) for key, steps in (routes or {}).items()}
        self.requests: list[dict[str, Any]] = []
        self.cache = PromptCache()
        self.usages: list[dict[str, Any]] = []
        """The usage reported for each answered request (with its cache figures)."""
        self.failures: list[str] = []
        self.reasoning: dict[str, str] = {}
        """The reasoning items sent (Responses): id -> encrypted content, each expected back in later requests."""
        self.port = 0
        self.idle_timeout = idle_timeout
        self.stop_when_done = stop_when_done
        """Stop half a second after the last scripted reply (the program mode)."""
        self.done = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._last_activity = time.monotonic()

    @property
    def base_url(self) -> str:
        root = f"http://127.0.0.1:{self.port}"
        return root if self.wire == "anthropic" else root + "/v1"

    def __enter__(self) -> "ScriptedModelServer":
        return self.start()

    def start(self) -> "ScriptedModelServer":
        self._thread = threading.Thread(target=self._serve_thread, name=f"scripted-{self.wire}", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the scripted model server did not start")
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.stop()
        if kind is None:
            self.verify()

    def stop(self) -> None:
        """Stop serving (again is fine); ``verify`` still reports what happened."""
        if self._thread is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                self._loop.call_soon_threadsafe(self.done.set)
        self._thread.join(10)
        self._thread = None

    def verify(self) -> None:
        problems = list(self.failures)
        for name, script in [("", self.script), *self.routes.items()]:
            if script:
                problems.append(
                    f"{len(script)} scripted replies{f' for {name!r}' if name else ''} were never requested: "
                    f"{[s.get('reply') for s in script]}"
                )
        assert not problems, "scripted model server: " + "; ".join(problems)

    def _serve_thread(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            async with server:
                while not self.done.is_set():
                    await asyncio.sleep(0.05)
                    if time.monotonic() - self._last_activity > self.idle_timeout:
                        self.failures.append(f"no request for {self.idle_timeout:g}s; stopped")
                        break
        finally:
            self.done.set()  # whoever waits for the end (the program mode) sees it, however serving ended

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._last_activity = time.monotonic()
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            body_bytes = await reader.readexactly(int(headers.get("content-length", "0")))
            await self._respond(method, path, headers, body_bytes, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._last_activity = time.monotonic()
            with contextlib.suppress(Exception):
                writer.close()
                await writer.wait_closed()

    async def _respond(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> None:
        want = {"openai": "/v1/chat/completions", "responses": "/v1/responses"}.get(self.wire, "/v1/messages")
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        self.requests.append(body)
        problems: list[str] = []
        script = self._script_for(body)
        if method != "POST" or path.split("?")[0] != want:
            problems.append(f"unexpected request {method} {path} (this server answers POST {want})")
        elif not script:
            problems.append(f"request {len(self.requests)} came after the script ended")
        else:
            problems += (
                _openai_problems(body)
                if self.wire == "openai"
                else _responses_problems(body, self.reasoning)
                if self.wire == "responses"
                else _anthropic_problems(body)
            )
            problems += _expectation_problems(script[0], body, self.wire)
        if problems:
            self.failures += [f"request {len(self.requests)}: {p}" for p in problems]
            if self.stop_when_done and self._loop is not None:  # the program mode: a failed script ends the run
                self._loop.call_later(0.5, self.done.set)
            await self._json(writer, 400, _error_body(self.wire, 400, "scripted model server: " + "; ".join(problems)))
            return
        step = script.pop(0)
        if not self.script and self.stop_when_done and self._loop is not None:
            self._loop.call_later(0.5, self.done.set)
        model = str(body.get("model", "scripted"))
        reply = step.get("reply", "text")
        if reply == "error":
            status = int(step.get("status", 500))
            await self._json(
                writer,
                status,
                _error_body(self.wire, status, str(step.get("message", "scripted error"))),
                step.get("headers") or {},
            )
            return
        usage: dict[str, Any] = {
            "prompt_tokens": len(raw) // 4,
            "completion_tokens": len(step.get("text", "")) // 4 + 1,
        }
        if self.wire == "anthropic":
            usage["anthropic_cache"] = self.cache.anthropic(body, usage["prompt_tokens"])
        else:
            usage["cached_tokens"] = self.cache.openai(body)
        self.usages.append(usage)
        number = len(self.requests)
        if step.get("reasoning") and reply != "cut":
            self.reasoning[f"rs_{number}"] = f"enc-{number}"
        if not body.get("stream"):
            payload = (
                _openai_body(step, model, usage)
                if self.wire == "openai"
                else _responses_body(step, model, usage, number)
                if self.wire == "responses"
                else _anthropic_body(step, model, usage)
            )
            await self._json(writer, 200, payload)
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = (
            _openai_events(step, model, usage, include_usage)
            if self.wire == "openai"
            else _responses_events(step, model, usage, number)
            if self.wire == "responses"
            else _anthropic_events(step, model, usage)
        )
        if reply in ("cut", "stream_error"):
            events = events[: max(2, len(events) // 2)]
        if reply == "stream_error":  # what a provider sends when it fails after the answer started
            error = _error_body(self.wire, 529, str(step.get("message", "overloaded")))
            if self.wire == "responses":
                inner = error["error"]
                error = {"type": "error", "code": inner["type"], "message": inner["message"], "param": None}
            events.append(
                f"event: error\ndata: {json.dumps(error)}\n\n"
                if self.wire != "openai"
                else f"data: {json.dumps(error)}\n\n"
            )
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        for event in events:
            data = event.encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
            if step.get("delay_sec"):
                await asyncio.sleep(float(step["delay_sec"]))
        if reply != "cut":  # a cut stream never sends the last chunk: the body is incomplete
            writer.write(b"0\r\n\r\n")
        await writer.drain()

    def _script_for(self, body: dict[str, Any]) -> list[Step]:
        system = system_text(body, self.wire)
        return next((steps for key, steps in self.routes.items() if key in system), self.script)

    async def _json(
        self, writer: asyncio.StreamWriter, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        reason = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error"}.get(
            status, "Error"
        )
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        writer.write(
            (
                f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(data)}\r\n{extra}connection: close\r\n\r\n"
            ).encode()
            + data
        )
        await writer.drain()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wire", choices=["openai", "responses", "anthropic"], required=True)
    parser.add_argument("--script", type=Path, required=True, help="JSON file: a list of steps")
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--idle-timeout", type=float, default=60.0)
    args = parser.parse_args()
    script = json.loads(args.script.read_text(encoding="utf-8"))
    server = ScriptedModelServer(args.wire, script, idle_timeout=args.idle_timeout, stop_when_done=True).start()
    if args.port_file:
        args.port_file.write_text(str(server.port), encoding="utf-8")
    server.done.wait()
    server.stop()
    try:
        server.verify()
    except AssertionError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
