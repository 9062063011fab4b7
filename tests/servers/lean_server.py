"""A minimal MCP server on the standard library only (JSON lines on stdio, the classic handshake).

It starts in milliseconds, so start-up benchmarks measure the host rather than the SDK's import time.
``--delay-init-ms N`` answers ``initialize`` only after N ms. Tools: ``echo``, plus ``--extra-tools N`` more
listed ``--page-size K`` per page (cursor pagination). ``--exit-on-discover`` exits when probed with the 2026
``server/discover`` request, as some older servers do with any method they do not know.

For the tool-list cache: ``--methods-log FILE`` appends the method of every request it gets, ``--server-version V``
is the version it reports, ``--tools-file FILE`` names its tools (one a line, read at every ``tools/list``;
``--fail-if-missing`` makes it exit at start, with a message on stderr, when that file is gone), and its
``retool`` tool rewrites that file with the given ``names`` and sends ``notifications/tools/list_changed``.
``--times-log FILE`` appends ``boot PID T`` when it starts and ``listed PID T`` when it answers ``tools/list``
(``T``: ``time.monotonic()``, one clock for every process of the machine), so a test can tell which starts ran at
once and what came before what.
"""

import argparse
import json
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--delay-init-ms", type=int, default=0)
parser.add_argument("--extra-tools", type=int, default=0)
parser.add_argument("--page-size", type=int, default=0)
parser.add_argument("--exit-on-discover", action="store_true")
parser.add_argument("--methods-log")
parser.add_argument("--server-version", default="1")
parser.add_argument("--tools-file")
parser.add_argument("--fail-if-missing", action="store_true")
parser.add_argument("--times-log")
options = parser.parse_args()


def note(what: str) -> None:
    if options.times_log:
        with open(options.times_log, "a", encoding="utf-8") as log:
            log.write(f"{what} {os.getpid()} {time.monotonic()}\n")


note("boot")

if options.fail_if_missing and options.tools_file and not __import__("os").path.exists(options.tools_file):
    sys.stderr.write(f"lean_server: {options.tools_file} is missing\n")
    sys.exit(3)

ECHO = {
    "name": "echo",
    "description": "Return the message unchanged.",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
}


def reply(message_id: object, result: object = None, error: object = None) -> None:
    body = {"jsonrpc": "2.0", "id": message_id, **({"error": error} if error else {"result": result})}
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    method, message_id = message.get("method"), message.get("id")
    if message_id is None:
        continue  # notifications
    if options.methods_log:
        with open(options.methods_log, "a", encoding="utf-8") as log:
            log.write(f"{method}\n")
    if method == "server/discover" and options.exit_on_discover:
        sys.stderr.write("lean_server: unknown method server/discover, exiting\n")
        sys.exit(2)
    if method == "initialize":
        time.sleep(options.delay_init_ms / 1000)
        version = message["params"].get("protocolVersion", "2025-11-25")
        reply(
            message_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "lean", "version": options.server_version},
            },
        )
    elif method == "tools/list":
        tools = [ECHO] + [{**ECHO, "name": f"tool_{i:03d}"} for i in range(options.extra_tools)]
        if options.tools_file:
            with open(options.tools_file, encoding="utf-8") as names:
                tools += [{**ECHO, "name": name.strip()} for name in names if name.strip()]
            tools.append({**ECHO, "name": "retool", "description": "Replace the listed tools with `names`."})
        start = int((message.get("params") or {}).get("cursor") or 0)
        size = options.page_size or len(tools)
        page: dict[str, object] = {"tools": tools[start : start + size]}
        if start + size < len(tools):
            page["nextCursor"] = str(start + size)
        reply(message_id, page)
        note("listed")
    elif method == "tools/call" and message["params"].get("name") == "retool":
        with open(options.tools_file, "w", encoding="utf-8") as names:
            names.write("\n".join(message["params"].get("arguments", {}).get("names", [])) + "\n")
        reply(message_id, {"content": [{"type": "text", "text": "retooled"}]})
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\n")
        sys.stdout.flush()
    elif method == "tools/call":
        text = message["params"].get("arguments", {}).get("message", "")
        reply(message_id, {"content": [{"type": "text", "text": text}]})
    elif method == "ping":
        reply(message_id, {})
    else:
        reply(message_id, error={"code": -32601, "message": f"method not found: {method}"})
