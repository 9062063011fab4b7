"""A JSON-RPC peer for tests: echoes, answers late or out of order, asks the client, or dies mid-request."""

import json
import sys
import time

out = sys.stdout.buffer


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def read() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if not line.strip():
            if length is not None:
                return json.loads(sys.stdin.buffer.read(length))
            continue
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)


held: list[dict] = []
while (message := read()) is not None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params")
    if method == "echo":
        send({"jsonrpc": "2.0", "id": request_id, "result": params})
    elif method == "hold":  # answered in reverse order once two are held
        held.append(message)
        if len(held) == 2:
            for item in reversed(held):
                send({"jsonrpc": "2.0", "id": item["id"], "result": item["params"]})
            held.clear()
    elif method == "fail":
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": 7, "message": "no such thing", "data": [1]},
            }
        )
    elif method == "odd_error":  # an error whose code is not a number
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": "E42", "message": "odd"}})
    elif method == "ask":  # asks the client a question and answers with its reply
        send({"jsonrpc": "2.0", "id": "q1", "method": params["method"], "params": params.get("params")})
        reply = read()
        send({"jsonrpc": "2.0", "id": request_id, "result": reply})
    elif method == "notify_me":
        send({"jsonrpc": "2.0", "method": "note", "params": params})
        send({"jsonrpc": "2.0", "id": request_id, "result": None})
    elif method == "garbage":  # a body that is not JSON, then a good answer
        out.write(b"Content-Length: 5\r\n\r\n{oops")
        out.flush()
        send({"jsonrpc": "2.0", "id": request_id, "result": "after garbage"})
    elif method == "$/cancelRequest":
        send({"jsonrpc": "2.0", "method": "cancelled", "params": params})
    elif method == "slow":
        time.sleep(float(params))
    elif method == "die":
        sys.stderr.write("peer exits on purpose\n")
        sys.exit(4)
