"""Scripted model servers for Kairox's tests: real HTTP on 127.0.0.1 speaking the OpenAI chat-completions or
the Anthropic messages wire format, streaming (SSE) and not, driven by a script of replies.

A script is a list of steps, one per request, in order. A step is a dict (JSON-able, so a script can be a file):

    {"reply": "text", "text": "Hello"}
    {"reply": "tool_calls", "calls": [{"id": "c1", "name": "fs_read", "arguments": {"path": "a.py"}}], "text": ""}
    {"reply": "error", "status": 429, "message": "slow down", "headers": {"Retry-After": "1"}}
    {"reply": "cut", "text": "an answer that breaks off halfway"}
    {"reply": "stream_error", "text": "an answer the provider", "message": "overloaded"}  (an error event mid-stream)

``"anthropic_usage"`` adds fields to the usage of Anthropic's ``message_start`` (``cache_read_input_tokens``).

With optional ``"expect"``: ``{"last_user_contains": "...", "tool_results": {"c1": "substring"},
"tools_include": ["fs_read"], "system_contains": "..."}`` and, in tests, ``"check"``: a callable given the
request body that raises AssertionError. ``"delay_sec"`` waits between streamed events.

A request the script does not expect (none left, a wrong path, a failed expectation, a malformed conversation)
is answered with HTTP 400 and recorded; ``verify()`` (called when the ``with`` block ends) fails on recorded
problems and on replies left over. Run as a program (``--wire openai|anthropic --script FILE``) it serves until
the script is used up (or ``--idle-timeout`` passes) and exits 1 on any problem.
"""

import argparse
import asyncio
import contextlib
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


def _expectation_problems(step: Step, body: dict[str, Any], wire: str) -> list[str]:
    problems = []
    expect = step.get("expect") or {}
    messages = body.get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    if "last_user_contains" in expect:
        texts = _texts(users[-1]) if users else ""
        if expect["last_user_contains"] not in texts:
            problems.append(f"the last user message does not contain {expect['last_user_contains']!r}: {texts[:300]!r}")
    if "system_contains" in expect:
        system = (
            body.get("system")
            if wire == "anthropic"
            else next((m.get("content") for m in messages if m.get("role") == "system"), "")
        )
        if expect["system_contains"] not in str(system):
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
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.append(_texts(block))
    return "\n".join(out)


def _tool_result(messages: list[dict[str, Any]], call_id: str, wire: str) -> str | None:
    for message in messages:
        if wire == "openai" and message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return str(message.get("content"))
        if wire == "anthropic" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                    return ("[is_error] " if block.get("is_error") else "") + _texts(block)
    return None


# --- replies -------------------------------------------------------------------------------------------------


def _openai_events(step: Step, model: str, usage: dict[str, int], include_usage: bool) -> list[str]:
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
                "usage": {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
            }
        )
    return [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]


def _openai_body(step: Step, model: str, usage: dict[str, int]) -> dict[str, Any]:
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
        "usage": {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
    }


def _anthropic_content(step: Step) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"type": "text", "text": step["text"]}] if step.get("text") else []
    content += [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c.get("arguments", {})}
        for c in step.get("calls") or []
    ]
    return content


def _anthropic_events(step: Step, model: str, usage: dict[str, int]) -> list[str]:
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
        "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": 1, **(step.get("anthropic_usage") or {})},
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


def _anthropic_body(step: Step, model: str, usage: dict[str, int]) -> dict[str, Any]:
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


def _error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 400: "invalid_request_error", 401: "authentication_error"}.get(status, "api_error")
    if wire == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}


# --- the server ----------------------------------------------------------------------------------------------


class ScriptedModelServer:
    """One scripted endpoint on 127.0.0.1. Use as a context manager; ``base_url`` is what the SDK is given."""

    def __init__(
        self, wire: str, script: list[Step], *, idle_timeout: float = 120.0, stop_when_done: bool = False
    ) -> None:
        if wire not in ("openai", "anthropic"):
            raise ValueError(f"wire must be openai or anthropic, not {wire!r}")
        self.wire = wire
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.failures: list[str] = []
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
        return root + "/v1" if self.wire == "openai" else root

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
        if self.script:
            problems.append(
                f"{len(self.script)} scripted replies were never requested: {[s.get('reply') for s in self.script]}"
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
        want = "/v1/chat/completions" if self.wire == "openai" else "/v1/messages"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        self.requests.append(body)
        problems: list[str] = []
        if method != "POST" or path.split("?")[0] != want:
            problems.append(f"unexpected request {method} {path} (this server answers POST {want})")
        elif not self.script:
            problems.append(f"request {len(self.requests)} came after the script ended")
        else:
            problems += _openai_problems(body) if self.wire == "openai" else _anthropic_problems(body)
            problems += _expectation_problems(self.script[0], body, self.wire)
        if problems:
            self.failures += [f"request {len(self.requests)}: {p}" for p in problems]
            if self.stop_when_done and self._loop is not None:  # the program mode: a failed script ends the run
                self._loop.call_later(0.5, self.done.set)
            await self._json(writer, 400, _error_body(self.wire, 400, "scripted model server: " + "; ".join(problems)))
            return
        step = self.script.pop(0)
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
        usage = {"prompt_tokens": len(raw) // 4, "completion_tokens": len(step.get("text", "")) // 4 + 1}
        if not body.get("stream"):
            payload = _openai_body(step, model, usage) if self.wire == "openai" else _anthropic_body(step, model, usage)
            await self._json(writer, 200, payload)
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = (
            _openai_events(step, model, usage, include_usage)
            if self.wire == "openai"
            else _anthropic_events(step, model, usage)
        )
        if reply in ("cut", "stream_error"):
            events = events[: max(2, len(events) // 2)]
        if reply == "stream_error":  # what a provider sends when it fails after the answer started
            error = _error_body(self.wire, 529, str(step.get("message", "overloaded")))
            events.append(
                f"event: error\ndata: {json.dumps(error)}\n\n"
                if self.wire == "anthropic"
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
    parser.add_argument("--wire", choices=["openai", "anthropic"], required=True)
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
