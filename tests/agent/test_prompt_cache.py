"""Prompt caching (A6): breakpoints on the Anthropic wire where a cache pays (tools, system, the conversation's
last block), a prefix that stays byte-stable from one request to the next on every wire, and the cache reads the
provider reports in the usage events, the context meter and the transcript."""

import json
from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import EVERYTHING, NODE, transcript_records, user_config
from tests.servers.model_server import ScriptedModelServer

from kairox.agent import ContextMeasured, TurnEndReason, UsageReported, open_session
from kairox.events import RecordingSink

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.usefixtures("api_key")]

WIRES = ["openai", "responses", "anthropic"]


def _marked(body: dict[str, Any]) -> list[str]:
    """Where the request carries ``cache_control``: ``tool:NAME``, ``system``, ``message:INDEX:TYPE``."""
    found = [f"tool:{t['name']}" for t in body.get("tools") or [] if "cache_control" in t]
    found += ["system" for block in body.get("system") or [] if "cache_control" in block]
    for index, message in enumerate(body["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        found += [f"message:{index}:{b['type']}" for b in content if "cache_control" in b]
    return found


def _tools(body: dict[str, Any]) -> str:
    return json.dumps([{k: v for k, v in t.items() if k != "cache_control"} for t in body.get("tools") or []])


@pytest.mark.parametrize("wire", WIRES)
async def test_a_session_keeps_its_tool_list_byte_identical_and_reads_the_cache_from_the_second_request(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    script = [
        {"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}]},
        {"reply": "text", "text": "It says first note."},
        {"reply": "text", "text": "Nothing else."},
    ]
    # project memory long enough that the prefix passes the providers' smallest cacheable prompt (1,024 tokens)
    (workspace / "AGENTS.md").write_text("Keep answers short and name the files you read.\n" * 100)
    sink = RecordingSink()
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire)
        async with open_session(workspace, events=[sink]) as session:
            assert (await session.run_turn("What does notes.txt say?")).reason is TurnEndReason.COMPLETED
            assert (await session.run_turn("Anything else?")).reason is TurnEndReason.COMPLETED
            transcript = session.transcript.path
        bodies, usages = server.requests, server.usages
    assert len({_tools(body) for body in bodies}) == 1, "the tool list is the same bytes in every request"
    assert (
        len({json.dumps(body.get("system") or body.get("instructions") or body["messages"][0]) for body in bodies}) == 1
    )
    if wire == "anthropic":
        last_tool = bodies[0]["tools"][-1]["name"]
        assert [_marked(b) for b in bodies] == [
            [f"tool:{last_tool}", "system", "message:0:text"],
            [f"tool:{last_tool}", "system", "message:2:tool_result"],
            [f"tool:{last_tool}", "system", "message:4:text"],
        ]
        reads = [u["anthropic_cache"]["cache_read_input_tokens"] for u in usages]
        writes = [u["anthropic_cache"]["cache_creation_input_tokens"] for u in usages]
        assert reads[0] == 0 and writes[0] > 0, "the first request writes the prefix"
        assert reads[1] >= writes[0] and reads[2] > reads[1], "each request reads the one before it from the cache"
    else:
        reads = [u["cached_tokens"] for u in usages]
        assert reads[0] == 0 and 0 < reads[1] <= reads[2]
        assert all("prompt_cache_key" not in b for b in bodies), "a local endpoint is not sent a field it may refuse"
    reported = [(e.cache_read_tokens, e.session_cache_read_tokens) for e in sink.of_type(UsageReported)]
    assert reported == [(reads[0], reads[0]), (reads[1], reads[0] + reads[1]), (reads[2], sum(reads))]
    meter = [e for e in sink.of_type(ContextMeasured) if e.cached_tokens][-1]
    assert meter.cached_tokens == reads[2] and "cached)" in meter.meter()
    logged = [r for r in transcript_records(transcript) if r.get("event") == "UsageReported"]
    assert [r["cache_read_tokens"] for r in logged] == reads


@pytest.mark.parametrize("wire", ["openai", "responses"])
async def test_the_openai_wires_send_one_prompt_cache_key_per_workspace_when_the_provider_takes_it(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    script = [{"reply": "text", "text": "one"}, {"reply": "text", "text": "two"}]
    with ScriptedModelServer(wire, script) as server:
        config = user_config(isolated_home, server, wire=wire)
        config.write_text(config.read_text().replace("max_retries = 2", "max_retries = 2\nprompt_cache_key = true"))
        async with open_session(workspace) as session:
            await session.run_turn("one")
        async with open_session(workspace) as session:
            await session.run_turn("two")
    keys = [body.get("prompt_cache_key") for body in server.requests]
    assert keys[0] is not None and keys[0].startswith("kairox-") and keys == [keys[0]] * 2


@pytest.mark.parametrize("wire", WIRES)
async def test_a_tool_found_by_tool_search_is_appended_after_the_tools_already_sent(
    wire: str, workspace: Path, isolated_home: Path
) -> None:
    script = [
        {"reply": "tool_calls", "calls": [{"id": "s1", "name": "tool_search", "arguments": {"query": "echo back"}}]},
        {
            "reply": "tool_calls",
            "calls": [{"id": "e1", "name": "mcp__everything__echo", "arguments": {"message": "x"}}],
        },
        {"reply": "text", "text": "done"},
    ]
    extra = (
        '[tools]\nsearch_threshold = 50\n\n[policy.rules]\nallow = ["mcp__everything__echo"]\n\n'
        f'[mcp_servers.everything]\ncommand = "{NODE}"\nargs = ["{EVERYTHING}", "stdio"]\n'
    )
    with ScriptedModelServer(wire, script) as server:
        user_config(isolated_home, server, wire=wire, extra=extra)
        async with open_session(workspace) as session:
            assert (await session.run_turn("Echo x.")).reason is TurnEndReason.COMPLETED
    first, later = (json.loads(_tools(b)) for b in (server.requests[0], server.requests[2]))
    assert later[: len(first)] == first, "what was sent before keeps its place"
    names = [t.get("name") or t["function"]["name"] for t in later[len(first) :]]
    assert names == ["mcp__everything__echo"]
