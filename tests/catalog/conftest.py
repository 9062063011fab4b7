"""The test registry (tests/servers/catalog_registry.py) on 127.0.0.1, started per test and stopped with it."""

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SERVERS = Path(__file__).resolve().parents[1] / "servers"


@dataclass
class RunningRegistry:
    url: str
    process: subprocess.Popen[str]

    def control(self, **query: str) -> None:
        params = "&".join(f"{k}={v}" for k, v in query.items())
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/control?{params}", method="POST"), timeout=10).read()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=10) as response:
            data: dict[str, Any] = json.loads(response.read())
        return data


def start_registry(entries: int = 250) -> RunningRegistry:
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "catalog_registry.py"), "--entries", str(entries)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return RunningRegistry(url=f"http://127.0.0.1:{port}", process=process)


@pytest.fixture
def registry() -> Iterator[RunningRegistry]:
    server = start_registry()
    try:
        yield server
    finally:
        assert server.process.stdin is not None
        server.process.stdin.close()  # it stops when its stdin closes
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(5)
