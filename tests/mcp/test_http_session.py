"""Streamable HTTP: a server that forgot our session (HTTP 404) is re-initialized once and the call retried (M7)."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kairox._rpc._status import ServerStatus
from kairox.config import McpServerConfig
from kairox.events import RecordingSink
from kairox.mcp import McpClient, McpServerFailed, McpServerReady

SERVER = Path(__file__).resolve().parents[1] / "servers" / "basic_server.py"

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    def __init__(self, port: int) -> None:
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--http-port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("the HTTP test server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    server = HttpServer(_free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_forgotten_session_is_reinitialized_and_the_call_retried(http_server: HttpServer, tmp_path: Path) -> None:
    sink = RecordingSink()
    config = McpServerConfig(
        type="streamable_http", url=f"http://127.0.0.1:{http_server.port}/mcp", protocol_mode="legacy"
    )
    async with McpClient("web", config, workspace=tmp_path, events=sink) as client:
        first = await client.call_tool("echo", {"message": "one"})
        http_server.stop()
        http_server.start()  # same port, no memory of our session: it answers 404
        second = await client.call_tool("echo", {"message": "two"})
        status = client.status
    assert (first.text_content(), second.text_content(), status) == ("one", "two", ServerStatus.READY)
    assert sink.of_type(McpServerFailed) == [
        McpServerFailed(server="web", reason="the session expired (HTTP 404)", stderr_tail="", will_restart=True)
    ]
    assert len(sink.of_type(McpServerReady)) == 2
