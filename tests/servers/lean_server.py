"""A minimal MCP server on the standard library only (JSON lines on stdio, the classic handshake).

It starts in milliseconds, so start-up benchmarks measure the host rather than the SDK's import time.
``--delay-init-ms N`` answers ``initialize`` only after N ms. Tools: ``echo``, plus ``--extra-tools N`` more
listed ``--page-size K`` per page (cursor pagination). ``--exit-on-discover`` exits when probed with the 2026
``server/discover`` request, as some older servers do with any method they do not know.
"""

import argparse
import json
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--delay-init-ms", type=int, default=0)
parser.add_argument("--extra-tools", type=int, default=0)
parser.add_argument("--page-size", type=int, default=0)
parser.add_argument("--exit-on-discover", action="store_true")
options = parser.parse_args()

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
    if method == "server/discover" and options.exit_on_discover:
        sys.stderr.write("lean_server: unknown method server/discover, exiting\n")
        sys.exit(2)
    if method == "initialize":
        time.sleep(options.delay_init_ms / 1000)
        version = message["params"].get("protocolVersion", "2025-11-25")
        reply(message_id, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "lean", "version": "1"}})
    elif method == "tools/list":
        tools = [ECHO] + [{**ECHO, "name": f"tool_{i:03d}"} for i in range(options.extra_tools)]
        start = int((message.get("params") or {}).get("cursor") or 0)
        size = options.page_size or len(tools)
        page: dict[str, object] = {"tools": tools[start : start + size]}
        if start + size < len(tools):
            page["nextCursor"] = str(start + size)
        reply(message_id, page)
    elif method == "tools/call":
        text = message["params"].get("arguments", {}).get("message", "")
        reply(message_id, {"content": [{"type": "text", "text": text}]})
    elif method == "ping":
        reply(message_id, {})
    else:
        reply(message_id, error={"code": -32601, "message": f"method not found: {method}"})
