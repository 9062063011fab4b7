"""The cost of ``[sandbox] network = "allowlist"``: a request through the session's egress proxy against the same
request made directly, both from inside the real sandbox, to an HTTP listener on 127.0.0.1.

- per request: a Python client in the sandbox makes REQUESTS requests, each on a new connection (as curl, pip and
  urllib do): by the name ``localhost`` through the proxy (absolute-form ``http://``, and ``CONNECT`` as for
  https), and directly to 127.0.0.1 with the network on. Median milliseconds per request, and the ratio to direct.
- per command: ``true`` in the sandbox with the allowlist (the forwarder starts first) against the network off,
  and beside them an empty Python start with the network off (what the forwarder's own start costs).

Run: .venv/bin/python bench/egress_proxy.py [REQUESTS]
"""

import http.server
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from kairox.sandbox import EgressProxy, SandboxSettings, check_sandbox
from kairox.sandbox._bwrap import sandboxed_argv

ROUNDS = 7
CLIENT = """import http.client, os, socket, sys, time
port, count, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
proxy = int(os.environ.get("HTTP_PROXY", "x:0").rsplit(":", 1)[1])
def once():
    if mode == "direct":
        c = http.client.HTTPConnection("127.0.0.1", port)
        c.request("GET", "/x")
    elif mode == "http":
        c = http.client.HTTPConnection("127.0.0.1", proxy)
        c.request("GET", f"http://localhost:{port}/x")
    else:
        c = http.client.HTTPConnection("127.0.0.1", proxy)
        c.set_tunnel("localhost", port)
        c.request("GET", "/x")
    body = c.getresponse().read()
    c.close()
    assert body == b"ok", body
once()
started = time.perf_counter()
for _ in range(count):
    once()
print((time.perf_counter() - started) / count * 1000)
"""


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        return None


def main(requests: int) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    proxy = EgressProxy()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "client.py").write_text(CLIENT)
        allowlist = SandboxSettings(writable_roots=(ws,), allowed_domains=("localhost",), egress=proxy.route)
        network_on = SandboxSettings(writable_roots=(ws,), network_access=True)
        network_off = SandboxSettings(writable_roots=(ws,))
        bwrap = {id(s): check_sandbox(s) for s in (allowlist, network_on, network_off)}

        def run(settings: SandboxSettings, argv: list[str]) -> str:
            line = sandboxed_argv(argv, settings, ws, bwrap=bwrap[id(settings)])
            return subprocess.run(line, capture_output=True, text=True, check=True, timeout=300).stdout

        client = [sys.executable, "-I", "-S", str(ws / "client.py"), str(port), str(requests)]
        per_request: dict[str, list[float]] = {"direct": [], "http": [], "connect": []}
        per_command: dict[str, list[float]] = {"network off": [], "allowlist": [], "off, python -I -S": []}
        for _ in range(ROUNDS):
            per_request["direct"].append(float(run(network_on, [*client, "direct"])))
            for mode in ("http", "connect"):
                per_request[mode].append(float(run(allowlist, [*client, mode])))
            python = [sys.executable, "-I", "-S", "-c", "pass"]
            for name, settings, argv in (
                ("network off", network_off, ["true"]),
                ("allowlist", allowlist, ["true"]),
                ("off, python -I -S", network_off, python),
            ):
                started = time.perf_counter()
                run(settings, argv)
                per_command[name].append((time.perf_counter() - started) * 1000)
    proxy.close()
    server.shutdown()
    direct = statistics.median(per_request["direct"])
    print(f"per request, {requests} requests x {ROUNDS} rounds, a new connection each (median ms):")
    for mode, label in (("direct", "direct to 127.0.0.1"), ("http", "proxy, http://"), ("connect", "proxy, CONNECT")):
        value = statistics.median(per_request[mode])
        print(f"  {label:22} {value:7.3f} ms  x{value / direct:.2f}")
    off = statistics.median(per_command["network off"])
    print(f"per command in the sandbox x {ROUNDS} (median ms; `true` unless said):")
    for name, values in per_command.items():
        print(f"  {name:22} {statistics.median(values):7.1f} ms  x{statistics.median(values) / off:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
