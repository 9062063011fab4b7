"""Fixture programs and the debugpy adapter configuration for the DAP tests."""

import socket
import sys
from pathlib import Path

import anyio
import pytest

from kairox.config import DapServerConfig

PROGRAM = """import time


def compute(n):
    x = 42
    y = x + n
    return y


def main():
    data = {"a": [1, 2], "b": "text"}
    total = compute(1)
    print("total", total)
    return data


main()
"""

LOOP = """import time

while True:
    time.sleep(0.01)
"""


def debugpy_config(**changes: object) -> DapServerConfig:
    fields: dict[str, object] = {
        "command": sys.executable,
        "args": ["-m", "debugpy.adapter"],
        "languages": ["python"],
        **changes,
    }
    return DapServerConfig(**fields)  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def wait_for_listener(port: int, *, within: float = 30.0) -> None:
    """Wait until something listens on 127.0.0.1:``port``, read from ``/proc/net/tcp`` (a probing connection would
    be taken for the debugger a program waits for)."""
    wanted = f"0100007F:{port:04X}"
    with anyio.fail_after(within):
        while True:
            rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
            if any(row.split()[1] == wanted and row.split()[3] == "0A" for row in rows):  # 0A: LISTEN
                return
            await anyio.sleep(0.02)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    (root / "program.py").write_text(PROGRAM)
    (root / "loop.py").write_text(LOOP)
    return root
