"""An agent session whose MCP servers' tool lists are cached: eager servers start in the background once the first
model request is out, not between the user and it; a call in that turn waits for its server; ``required`` servers
are waited for before the first request; a session waiting for its first prompt starts them at once."""

import json
import sys
import time
from pathlib import Path

import anyio
import pytest
from tests.agent._support import SERVERS, user_config
from tests.servers.model_server import ScriptedModelServer

from kairox._rpc._status import ServerStatus
from kairox.agent import TurnEndReason, open_session

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

EAGER = ("s0", "s1", "s2")


def servers_toml(logs: Path) -> str:
    """Three eager servers slow to shake hands and one required server, each noting when it booted."""
    out = '[policy.rules]\nallow = ["mcp__s1__echo"]\n\n'
    for name, delay, required in [*((n, 800, False) for n in EAGER), ("req", 300, True)]:
        args = [str(SERVERS / "lean_server.py"), "--delay-init-ms", str(delay), "--times-log", str(logs / name)]
        out += f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps(args)}\n"
        out += f"required = {str(required).lower()}\n\n"
    return out


def boots(logs: Path) -> dict[str, float]:
    """When each server's process began running (``time.monotonic()``), for those that did."""
    out = {}
    for log in logs.iterdir():
        for line in log.read_text(encoding="utf-8").splitlines():
            what, _, at = line.split()
            if what == "boot":
                out[log.name] = float(at)
    return out


async def fill_cache(workspace: Path, home: Path, logs: Path, wire: str) -> None:
    with ScriptedModelServer(wire, [{"reply": "text", "text": "ok"}]) as server:
        user_config(home, server, wire=wire, extra=servers_toml(logs))
        async with open_session(workspace) as session:  # cold: every server is waited for, and its list cached
            assert {c.status for c in session.context.mcp.clients.values()} == {ServerStatus.READY}  # type: ignore[union-attr]
            await session.run_turn("hi")
    for log in logs.iterdir():
        log.unlink()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_the_first_request_goes_out_before_cached_eager_servers_start_and_a_call_waits_for_its_server(
    wire: str, workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    await fill_cache(workspace, isolated_home, logs, wire)
    first: dict[str, object] = {}

    def at_first_request(body: dict[str, object]) -> None:
        first["at"], first["booted"] = time.monotonic(), boots(logs)

    script = [
        {
            "reply": "tool_calls",
            "calls": [{"id": "c1", "name": "mcp__s1__echo", "arguments": {"message": "early"}}],
            "check": at_first_request,
            "expect": {"tools_include": ["mcp__s0__echo", "mcp__s1__echo", "mcp__s2__echo", "mcp__req__echo"]},
        },
        {"reply": "text", "text": "done", "expect": {"tool_results": {"c1": "early"}}},
    ]
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra=servers_toml(logs))
        async with open_session(workspace) as session:
            manager = session.context.mcp
            assert manager is not None
            assert manager.clients["req"].status is ServerStatus.READY  # required: waited for, cached or not
            assert [manager.clients[n].status for n in EAGER] == [ServerStatus.STOPPED] * 3
            result = await session.run_turn("Echo early.")
            with anyio.fail_after(30):  # the other two come up in the background
                for name in EAGER:
                    await manager.clients[name].wait_for(lambda status: status is ServerStatus.READY)
    assert (result.reason, result.text) == (TurnEndReason.COMPLETED, "done")
    # at the first request only the required server had started; every eager one started after it arrived
    assert list(first["booted"]) == ["req"]  # type: ignore[call-overload]
    started = boots(logs)
    assert sorted(started) == ["req", *EAGER]
    assert all(started[name] > first["at"] for name in EAGER)  # type: ignore[operator]


async def test_a_session_waiting_for_its_first_prompt_starts_its_cached_servers_in_the_background(
    workspace: Path, isolated_home: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    await fill_cache(workspace, isolated_home, logs, "openai")
    with ScriptedModelServer("openai", [], idle_timeout=60) as server:
        user_config(isolated_home, server, wire="openai", extra=servers_toml(logs))
        async with open_session(workspace) as session:  # no turn: a front end waiting for the user to type
            manager = session.context.mcp
            assert manager is not None
            with anyio.fail_after(30):
                for name in EAGER:
                    await manager.clients[name].wait_for(lambda status: status is ServerStatus.READY)
        assert server.requests == []
    assert sorted(boots(logs)) == ["req", *EAGER]
