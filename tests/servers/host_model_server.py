"""A scripted model for real coding hosts (Codex CLI, Claude Code, Gemini CLI) on 127.0.0.1, and a runner that
starts one host against it, for the tests that drive those hosts as MCP clients of ``kairox serve`` and ``kairox
proxy``.

Wires: OpenAI Responses (``POST /v1/responses``, SSE; the tools of an MCP server come as a namespace, and a call
names it), Anthropic Messages (``POST /v1/messages``, streamed or not) and the Gemini API
(``:streamGenerateContent?alt=sse``, ``:generateContent``, ``:countTokens``).
The script is a list of steps ``{"tool": SUFFIX, "args": {...}}``. The server holds no conversation state: it
counts the tool results a request carries, calls the step after them (the offered tool whose name ends with
SUFFIX), and says "done" after the last. A request that offers none of the script's tools (a host's side request:
a title, a routing classifier) is answered "ok", or with JSON filling the request's response schema.

Run as a program: ``host_model_server.py --wire responses|gemini --port N --steps JSON --report FILE [--lo-up]
-- COMMAND ...`` serves, runs COMMAND (the host) until it ends (or ``--timeout``), and writes a report: every
request's path, and the tool results in the order the model received them, as text.
"""

import argparse
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

WAIT = "toolu_wait_for_mcp"
"""The id of Claude Code's wait for its MCP servers, asked once when a first request offers none of their tools."""
_ANSWERS = {"next_speaker": "user", "model_choice": "flash", "complexity_score": 1}
"""What Gemini CLI's side requests are answered (it asks who speaks next and which model to route to)."""


def _flat(value: Any) -> str:
    """A tool result as the model reads it: text parts joined, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_flat(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "llmContent"):
            if key in value and len(value) <= 2:
                return _flat(value[key])
    return json.dumps(value, ensure_ascii=False)


def _filled(schema: Any, name: str = "") -> Any:
    if name in _ANSWERS:
        return _ANSWERS[name]
    if not isinstance(schema, dict):
        return "ok"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {key: _filled(sub, key) for key, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "ok"


class Script:
    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = steps
        self.paths: list[str] = []
        self.results: dict[str, str] = {}
        """Call id -> the tool result as it came back, in the order first seen."""
        self.lock = threading.Lock()

    def next_call(self, offered: list[str], answered: int) -> tuple[str, dict[str, Any]] | str | None:
        """(tool name, arguments) of the next step, "done", or None for a side request."""
        suffixes = {step["tool"] for step in self.steps}
        if not any(name.endswith(suffix) for name in offered for suffix in suffixes):
            return None
        if answered >= len(self.steps):
            return "done"
        step = self.steps[answered]
        matches = [name for name in offered if name.endswith(step["tool"])]
        return (matches[0], step["args"]) if matches else "done"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: Script

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        with self.script.lock:
            self.script.paths.append(f"GET {self.path}")
        self._send(200, json.dumps({"object": "list", "data": [], "models": []}).encode(), "application/json")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.loads(raw or b"{}")
        with self.script.lock:
            self.script.paths.append(f"POST {self.path}")
        path = self.path.split("?")[0]
        if path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/messages/count_tokens"):
            self._send(200, b'{"input_tokens": 10}', "application/json")
        elif path.endswith("/messages"):
            self._messages(body)
        elif ":countTokens" in self.path:
            self._send(200, b'{"totalTokens": 10}', "application/json")
        elif ":generateContent" in self.path or ":streamGenerateContent" in self.path:
            self._gemini(body, stream=":streamGenerateContent" in self.path)
        else:
            self._send(404, b'{"error": {"message": "not scripted"}}', "application/json")

    # --- OpenAI Responses ------------------------------------------------------------------------------------

    def _responses(self, body: dict[str, Any]) -> None:
        offered: list[str] = []
        for tool in body.get("tools") or []:
            if isinstance(tool, dict) and tool.get("name"):
                offered.append(str(tool["name"]))
            for inner in (tool.get("tools") or []) if isinstance(tool, dict) else []:
                offered.append(f"{tool.get('name', '')}\0{inner.get('name', '')}")  # a tool of a namespace
        outputs = [
            i for i in body.get("input") or [] if isinstance(i, dict) and str(i.get("type", "")).endswith("_output")
        ]
        with self.script.lock:
            for item in outputs:
                self.script.results.setdefault(str(item.get("call_id")), _flat(item.get("output")))
        decision = self.script.next_call(offered, len(outputs))
        number = [0]

        def event(kind: str, data: dict[str, Any]) -> str:
            number[0] += 1
            return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': number[0], **data})}\n\n"

        response = {
            "id": f"resp_{len(outputs)}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": body.get("model", "scripted"),
            "output": [],
        }
        events = [event("response.created", {"response": response})]
        if isinstance(decision, tuple):
            namespace, _, name = decision[0].rpartition("\0")
            arguments = json.dumps(decision[1])
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{len(outputs)}",
                "call_id": f"call_{len(outputs)}",
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }
            if namespace:
                item["namespace"] = namespace
        else:
            text = "done" if decision == "done" else "ok"
            item = {
                "type": "message",
                "id": f"msg_{len(outputs)}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        events.append(event("response.output_item.added", {"output_index": 0, "item": item}))
        events.append(event("response.output_item.done", {"output_index": 0, "item": item}))
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        events.append(
            event(
                "response.completed",
                {"response": {**response, "status": "completed", "output": [item], "usage": usage}},
            )
        )
        self._send(200, "".join(events).encode(), "text/event-stream")

    # --- Anthropic Messages ---------------------------------------------------------------------------------

    def _messages(self, body: dict[str, Any]) -> None:
        offered = [str(t.get("name", "")) for t in body.get("tools") or [] if isinstance(t, dict)]
        results = [
            block
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") != WAIT
        ]
        with self.script.lock:
            for block in results:
                self.script.results.setdefault(str(block.get("tool_use_id")), _flat(block.get("content")))
        decision = self.script.next_call(offered, len(results))
        if decision is None and "WaitForMcpServers" in offered and WAIT not in json.dumps(body.get("messages")):
            # Claude Code may send its first request while MCP servers still connect: wait for them, once
            decision = ("WaitForMcpServers", {})
        if isinstance(decision, tuple):
            call_id = WAIT if decision[0] == "WaitForMcpServers" else f"toolu_{len(results)}"
            block = {"type": "tool_use", "id": call_id, "name": decision[0], "input": decision[1]}
            stop = "tool_use"
        else:
            block, stop = {"type": "text", "text": "done" if decision == "done" else "ok"}, "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {
            "id": f"msg_{len(results)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            self._send(200, json.dumps(message).encode(), "application/json")
            return

        def event(kind: str, data: dict[str, Any]) -> str:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start, delta = (
                {**block, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            )
        events = [
            event("message_start", {"message": {**message, "content": [], "stop_reason": None}}),
            event("content_block_start", {"index": 0, "content_block": start}),
            event("content_block_delta", {"index": 0, "delta": delta}),
            event("content_block_stop", {"index": 0}),
            event(
                "message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}
            ),
            event("message_stop", {}),
        ]
        self._send(200, "".join(events).encode(), "text/event-stream")

    # --- Gemini ---------------------------------------------------------------------------------------------

    def _gemini(self, body: dict[str, Any], *, stream: bool) -> None:
        offered = [
            str(d.get("name", "")) for t in body.get("tools") or [] for d in (t or {}).get("functionDeclarations") or []
        ]
        answers = [
            p["functionResponse"]
            for c in body.get("contents") or []
            for p in c.get("parts") or []
            if "functionResponse" in p
        ]
        with self.script.lock:
            for index, answer in enumerate(answers):
                self.script.results.setdefault(str(answer.get("id") or index), _flat(answer.get("response")))
        decision = self.script.next_call(offered, len(answers))
        config = body.get("generationConfig") or {}
        if isinstance(decision, tuple):
            parts: list[dict[str, Any]] = [
                {"functionCall": {"id": f"call_{len(answers)}", "name": decision[0], "args": decision[1]}}
            ]
        elif decision is None and (config.get("responseJsonSchema") or config.get("responseSchema")):
            parts = [{"text": json.dumps(_filled(config.get("responseJsonSchema") or config.get("responseSchema")))}]
        else:
            parts = [{"text": "done" if decision == "done" else "ok"}]
        payload = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        }
        if stream:
            self._send(200, f"data: {json.dumps(payload)}\r\n\r\n".encode(), "text/event-stream")
        else:
            self._send(200, json.dumps(payload).encode(), "application/json")


def serve(script: Script, port: int) -> ThreadingHTTPServer:
    handler = type("Handler", (_Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--steps", required=True, help="JSON list of {tool, args}")
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--lo-up", action="store_true", help="bring up the loopback of a fresh network namespace first")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    if options.lo_up:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    script = Script(json.loads(options.steps))
    server = serve(script, options.port)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    try:
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=options.timeout
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = -1, str(exc.stdout or ""), str(exc.stderr or "")
    finally:
        server.shutdown()
    report = {
        "exit_code": code,
        "paths": script.paths,
        "results": list(script.results.values()),
        "stdout": out[-6000:],
        "stderr": err[-6000:],
    }
    options.report.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
