"""Deferred tools (R2): past ``tools.search_threshold`` the model gets a tool index and ``tool_search``; what it
finds is sent in full from the next step and called through the gate; hidden and denied tools are never found."""

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import EVERYTHING, NODE, make_workspace, user_config
from tests.helpers import kairox
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import TurnEndReason, open_session
from kairox.events import RecordingSink
from kairox.registry import ToolCallDecided, ToolCallFinished

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

WIRES = ["openai", "anthropic"]
EVERYTHING_SERVER = f'[mcp_servers.everything]\ncommand = "{NODE}"\nargs = ["{EVERYTHING}", "stdio"]\n\n'


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] if "function" in t else t["name"] for t in body.get("tools") or []]


def _system(body: dict[str, Any]) -> str:
    if "system" in body:
        system = body["system"]
        return system if isinstance(system, str) else "".join(part.get("text", "") for part in system)
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def _result_text(body: dict[str, Any], call_id: str) -> str:
    for message in body["messages"]:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return str(message["content"])
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for part in message["content"]:
                if part.get("type") == "tool_result" and part.get("tool_use_id") == call_id:
                    content = part.get("content")
                    return content if isinstance(content, str) else json.dumps(content)
    raise AssertionError(f"no result for {call_id}")


def calls(*items: tuple[str, str, dict[str, object]]) -> dict[str, object]:
    return {"reply": "tool_calls", "text": "", "calls": [{"id": i, "name": n, "arguments": a} for i, n, a in items]}


@pytest.mark.parametrize("wire", WIRES)
async def test_deferred_tool_is_found_then_called_through_the_gate_and_a_denied_one_is_never_found(
    wire: str, tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")
    seen: dict[str, Any] = {}

    def first(body: dict[str, Any]) -> None:
        names = _tool_names(body)
        assert "tool_search" in names and "fs_read" in names, names
        assert not any(name.startswith("mcp__") for name in names), names
        system = _system(body)
        assert "<deferred-tools>" in system and "- everything (mcp): " in system, system

    def second(body: dict[str, Any]) -> None:
        assert "mcp__everything__echo" in _tool_names(body)
        assert "mcp__everything__get-env" not in _tool_names(body)  # only what was found is loaded
        assert "mcp__everything__echo" in _result_text(body, "s1")
        assert "not loaded yet" in _result_text(body, "early")

    def third(body: dict[str, Any]) -> None:
        seen["sum_search"] = _result_text(body, "s2")
        seen["tools"] = _tool_names(body)

    script = [
        {
            **calls(
                ("s1", "tool_search", {"query": "echo a message back to me"}), ("early", "mcp__everything__get-env", {})
            ),
            "check": first,
        },
        {
            **calls(
                ("e1", "mcp__everything__echo", {"message": "hi"}),
                ("s2", "tool_search", {"query": "sum of two numbers", "limit": 10}),
            ),
            "check": second,
        },
        {"reply": "text", "text": "done", "check": third, "expect": {"tool_results": {"e1": "Echo: hi"}}},
    ]
    extra = (
        "[tools]\nsearch_threshold = 50\n\n"
        '[policy]\nsandbox_policy = "danger_full_access"\n\n'
        '[policy.rules]\nallow = ["mcp__everything__echo"]\ndeny = ["mcp__everything__get-sum"]\n\n' + EVERYTHING_SERVER
    )
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra=extra)
        async with open_session(workspace, events=[sink]) as session:
            result = await session.run_turn("Echo hi, then add two numbers.")
    assert result.reason is TurnEndReason.COMPLETED and result.text == "done"
    # the found tool passed the gate: the allow rule decided it
    decided = [(e.tool, e.decision) for e in sink.of_type(ToolCallDecided)]
    assert ("mcp__everything__echo", "allow") in decided
    finished = {e.call_id: e.is_error for e in sink.of_type(ToolCallFinished)}
    assert finished == {"s1": False, "early": True, "e1": False, "s2": False}
    assert "get-sum" not in seen["sum_search"] and "mcp__everything__get-sum" not in seen["tools"]


@pytest.mark.parametrize("wire", WIRES)
async def test_under_the_threshold_every_definition_is_sent_and_no_search_tool(
    wire: str, tmp_path: Path, isolated_home: Path
) -> None:
    workspace = make_workspace(tmp_path / "repo")

    def check(body: dict[str, Any]) -> None:
        names = _tool_names(body)
        assert "mcp__everything__echo" in names and "tool_search" not in names
        assert "<deferred-tools>" not in _system(body)

    script = [{"reply": "text", "text": "ok", "check": check}]
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra='[tools]\nsearch_threshold = "off"\n\n' + EVERYTHING_SERVER)
        async with open_session(workspace) as session:
            result = await session.run_turn("hello")
    assert result.reason is TurnEndReason.COMPLETED


def test_tools_search_cli_ranks_visible_tools_and_never_shows_a_denied_one(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "kairox.toml").write_text(EVERYTHING_SERVER, encoding="utf-8")
    run = kairox("tools", "search", "sum of two numbers", "--json", cwd=tmp_path)
    assert run.code == 0, run.stderr
    matches = run.json()["matches"]
    assert matches[0]["name"] == "mcp__everything__get-sum"
    assert {"term": "numbers", "fields": ["description", "parameters"]} in matches[0]["terms"]
    (isolated_home / "kairox.toml").write_text(
        '[policy.rules]\ndeny = ["mcp__everything__get-sum"]\n\n' + EVERYTHING_SERVER, encoding="utf-8"
    )
    denied = kairox("tools", "search", "sum of two numbers", "--json", "--limit", "50", cwd=tmp_path)
    assert "mcp__everything__get-sum" not in [m["name"] for m in denied.json()["matches"]]
    human = kairox("tools", "search", "echo back", cwd=tmp_path)
    assert human.stdout.startswith("1. mcp__everything__echo  (")


async def test_a_slow_embeddings_endpoint_does_not_stop_the_session_loop(tmp_path: Path, isolated_home: Path) -> None:
    from dataclasses import replace

    import anyio
    from tests.servers.embeddings_server import EmbeddingsServer

    from kairox.agent import model_settings
    from kairox.agent._embeddings import semantic_ranker
    from kairox.config import resolve_config

    workspace = make_workspace(tmp_path / "repo")
    delay = 3.0
    script = [
        calls(("s1", "tool_search", {"query": "echo a message back to me"})),
        {"reply": "text", "text": "done", "expect": {"tool_results": {"s1": "mcp__everything__echo"}}},
    ]
    extra = "[tools]\nsearch_threshold = 50\nsemantic = true\n\n" + EVERYTHING_SERVER
    ticks: list[float] = []

    async def heartbeat() -> None:
        while True:
            ticks.append(anyio.current_time())
            await anyio.sleep(0.05)

    with ScriptedModelServer("openai", script) as server, EmbeddingsServer() as embeddings:
        user_config(isolated_home, server, wire="openai", extra=extra)
        embeddings.delay_sec = delay
        async with open_session(workspace) as session:
            # the provider's embeddings endpoint is the scripted one (the chat endpoint stays the model server)
            resolved = resolve_config(workspace)
            session.tool_search.semantic = semantic_ranker(
                resolved,
                replace(model_settings(resolved), base_url=embeddings.base_url),
                cache_path=tmp_path / "vectors.sqlite",
            )
            async with anyio.create_task_group() as group:
                group.start_soon(heartbeat)
                started = anyio.current_time()
                result = await session.run_turn("Echo hi.")
                took = anyio.current_time() - started
                group.cancel_scope.cancel()
    assert result.reason is TurnEndReason.COMPLETED and result.text == "done"
    assert embeddings.inputs, "the search asked the embeddings endpoint"
    assert took >= delay  # the search waited for the slow endpoint...
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(gaps) > 10 and max(gaps) < delay / 3, gaps  # ...while the loop kept serving the heartbeat
