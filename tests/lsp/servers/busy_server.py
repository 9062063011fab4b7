"""A tiny language server for tests: it prints noise before its first header, asks the client the requests real
servers ask, reports indexing progress that does not end, can flood stderr and can hang a request.

Usage: busy_server.py [--flood BYTES] [--index-sec SECONDS] [--die-on-definition TEXT]

With --die-on-definition it writes TEXT (when not empty) on stderr and exits with code 1 at its first
textDocument/definition, as a server that crashes does.

With --index-sec it also answers workspace/symbol: with a stack trace while it indexes (as tsserver does before
it has a project) and after SECONDS, when its indexing ends, with one symbol; the query ``crash`` always fails
with a stack trace.
"""

import json
import sys
import threading

out = sys.stdout.buffer
lock = threading.Lock()
replies: dict[str, object] = {}
asked: dict[int, str] = {}
indexing = threading.Event()
root = {"uri": "file:///"}
TRACE = (
    "Error processing request. No Project.\nError: No Project.\n"
    "    at Object.ThrowNoProject (/srv/tsserver.js:151:15)\n    at ProjectService.getProject (/srv/tsserver.js:9:3)"
)


def end_indexing() -> None:
    indexing.clear()
    send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "idx", "value": {"kind": "end"}}})


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    with lock:
        out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        out.flush()


def read() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is not None:
                break
            continue
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def ask(request_id: int, method: str, params: object) -> None:
    asked[request_id] = method
    send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def main() -> None:
    flood = int(sys.argv[sys.argv.index("--flood") + 1]) if "--flood" in sys.argv else 0
    index_sec = float(sys.argv[sys.argv.index("--index-sec") + 1]) if "--index-sec" in sys.argv else None
    die = sys.argv[sys.argv.index("--die-on-definition") + 1] if "--die-on-definition" in sys.argv else None
    out.write(b"busy server starting (noise on stdout)\n")
    out.flush()
    while (message := read()) is not None:
        method, request_id = message.get("method"), message.get("id")
        if method is None:  # a reply to one of our requests
            replies[asked.get(request_id, str(request_id))] = message.get("result", message.get("error"))
            continue
        if method == "initialize":
            if flood:
                sys.stderr.write("x" * flood + "\n")
                sys.stderr.flush()
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "capabilities": {
                    "definitionProvider": True, "textDocumentSync": 1,
                    "implementationProvider": True, "callHierarchyProvider": True,
                    "diagnosticProvider": {"interFileDependencies": False, "workspaceDiagnostics": False},
                    **({"workspaceSymbolProvider": True} if index_sec is not None else {}),
                },
                "serverInfo": {"name": "busy"},
            }})  # fmt: skip
            root["uri"] = message["params"].get("rootUri") or root["uri"]
        elif method == "initialized":
            ask(1, "window/workDoneProgress/create", {"token": "idx"})
            ask(2, "workspace/configuration", {"items": [{"section": "busy.mode"}, {"section": "missing"}]})
            ask(3, "client/registerCapability", {"registrations": [{"id": "r", "method": "workspace/symbol"}]})
            ask(4, "workspace/applyEdit", {"edit": {"changes": {}}})
            ask(5, "custom/unknown", {})
            send({"jsonrpc": "2.0", "method": "$/progress", "params": {
                "token": "idx", "value": {"kind": "begin", "title": "Indexing"},
            }})  # fmt: skip
            indexing.set()
            if index_sec is not None:
                threading.Timer(index_sec, end_indexing).start()
        elif method == "workspace/symbol":
            if indexing.is_set() or message["params"]["query"] == "crash":
                send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": TRACE}})
            else:
                uri = root["uri"].rstrip("/") + "/pkg/greeting.py"
                where = {"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 13}}
                found = {"name": "Greeter", "kind": 5, "location": {"uri": uri, "range": where}}
                send({"jsonrpc": "2.0", "id": request_id, "result": [found]})
        elif method == "textDocument/definition":
            if die is not None:
                sys.stderr.write(die)
                sys.stderr.flush()
                sys.exit(1)
            send({"jsonrpc": "2.0", "id": request_id, "result": []})
        elif method == "textDocument/implementation":
            uri = message["params"]["textDocument"]["uri"]
            send({"jsonrpc": "2.0", "id": request_id, "result": [{"targetUri": uri,
                "targetRange": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 40}},
                "targetSelectionRange": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 11}},
            }]})  # fmt: skip
        elif method == "textDocument/prepareCallHierarchy":
            uri = message["params"]["textDocument"]["uri"]
            item = {"name": "greet", "kind": 6, "uri": uri,
                "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 40}},
                "selectionRange": {"start": {"line": 2, "character": 33}, "end": {"line": 2, "character": 38}},
            }  # fmt: skip
            send({"jsonrpc": "2.0", "id": request_id, "result": [item]})
        elif method in ("callHierarchy/incomingCalls", "callHierarchy/outgoingCalls"):
            item = dict(message["params"]["item"], name="caller" if "incoming" in method else "callee")
            key = "from" if "incoming" in method else "to"
            send({"jsonrpc": "2.0", "id": request_id, "result": [{key: item, "fromRanges": []}]})
        elif method == "textDocument/diagnostic":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"kind": "full", "items": [{
                "range": {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": 9}},
                "severity": 2, "message": "pulled, not pushed", "source": "busy", "code": "B1",
            }]}})  # fmt: skip
        elif method == "test/replies":
            send({"jsonrpc": "2.0", "id": request_id, "result": replies})
        elif method == "test/endIndexing":
            end_indexing()
            send({"jsonrpc": "2.0", "id": request_id, "result": None})
        elif method == "test/hang":
            pass
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": request_id, "result": None})
        elif method == "exit":
            return
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})


if __name__ == "__main__":
    main()
