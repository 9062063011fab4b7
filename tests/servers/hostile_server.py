"""An MCP server (newline-delimited JSON-RPC on stdio, standard library only) that tries to flood or hide.

Options: ``--tools N`` lists N tools ``t0``..``tN-1`` (default 3); ``--description-chars N`` gives ``t0`` a
description that long; ``--bad-schema`` adds tools whose input schema is not an object (``bad_type``) or is
missing (``no_schema``); ``--refs`` adds ``loop`` (a ``$ref`` to itself), ``dangling`` (a ``$ref`` to nothing)
and ``remote`` (a ``$ref`` to another host); ``--stderr-mb N`` writes N MiB to stderr before answering;
``--read-only`` annotates every tool ``readOnlyHint: true, openWorldHint: false``; ``--marker-dir DIR`` makes
every call write the file ``DIR/<tool>-<n>`` (its n-th call) before answering, so a test sees what really ran;
``--properties a,b`` declares those string arguments in every tool's schema instead of ``x``.
Every tool answers ``ok <name>``.
"""

import json
import sys
from pathlib import Path


def option(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


MARKERS = Path(sys.argv[sys.argv.index("--marker-dir") + 1]) if "--marker-dir" in sys.argv else None
CALLS: dict[str, int] = {}


OBJECT: dict[str, object] = {"type": "object", "properties": {"x": {"type": "string"}}}
if "--properties" in sys.argv:
    OBJECT = {
        "type": "object",
        "properties": {name: {} for name in sys.argv[sys.argv.index("--properties") + 1].split(",")},
    }


def tools() -> list[dict[str, object]]:
    listed: list[dict[str, object]] = []
    for index in range(option("--tools", 3)):
        listed.append({"name": f"t{index}", "description": f"tool {index}", "inputSchema": OBJECT})
        if "--read-only" in sys.argv:
            listed[-1]["annotations"] = {"readOnlyHint": True, "openWorldHint": False}
    if listed and "--description-chars" in sys.argv:
        listed[0]["description"] = "d" * option("--description-chars", 0)
    if "--bad-schema" in sys.argv:
        listed.append({"name": "bad_type", "description": "schema is a string", "inputSchema": "object"})
        listed.append({"name": "no_schema", "description": "schema is missing"})
    if "--refs" in sys.argv:
        listed.append(
            {
                "name": "loop",
                "inputSchema": {
                    "type": "object",
                    "properties": {"a": {"$ref": "#/$defs/node"}},
                    "$defs": {"node": {"$ref": "#/$defs/node"}},
                },
            }
        )
        listed.append(
            {"name": "dangling", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}}
        )
        listed.append(
            {
                "name": "remote",
                "inputSchema": {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/schema.json"}}},
            }
        )
    return listed


def answer(request: dict[str, object]) -> dict[str, object] | None:
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        return None
    if method == "initialize":
        params = request.get("params") or {}
        version = params.get("protocolVersion", "2025-06-18") if isinstance(params, dict) else "2025-06-18"
        result: object = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": tools()}
    elif method == "tools/call":
        params = request.get("params") or {}
        name = params.get("name") if isinstance(params, dict) else None
        if MARKERS is not None:
            CALLS[str(name)] = CALLS.get(str(name), 0) + 1
            (MARKERS / f"{name}-{CALLS[str(name)]}").write_text("ran", encoding="utf-8")
        result = {"content": [{"type": "text", "text": f"ok {name}"}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    chunk = "e" * 1023 + "\n"
    for _ in range(option("--stderr-mb", 0) * 1024):
        sys.stderr.write(chunk)
    sys.stderr.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        reply = answer(request) if isinstance(request, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


main()
