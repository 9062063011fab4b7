"""``kairox serve`` with a model configured: the workspace's agents are one `task` tool, run on that model, and
each call of the subagent is in the audit log with the agent named."""

import json
import sys
from pathlib import Path

import anyio
import pytest
from tests.agent._support import make_workspace, user_config
from tests.gateway.conftest import kairox_env
from tests.servers.model_server import ScriptedModelServer

from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.timeout(180)


def test_serve_offers_task_and_audits_the_subagents_calls_with_the_agent_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    workspace = make_workspace(tmp_path / "repo")
    agent = workspace / ".claude" / "agents" / "reader.md"
    agent.parent.mkdir(parents=True)
    agent.write_text("---\nname: reader\ndescription: Reads files.\ntools: Read\n---\nREADER-AGENT\n", encoding="utf-8")
    child = [
        {"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}]},
        {"reply": "text", "text": "The note says: first note.", "expect": {"tool_results": {"r1": "first note"}}},
    ]
    env = {**kairox_env(home), "KAIROX_TEST_MODEL_KEY": "sk-test-0123456789abcdef"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "kairox", "serve"], env=env, cwd=str(workspace))

    async def main() -> tuple[dict[str, str], str]:
        async with Client(params, mode="legacy") as client:
            tools = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
            result = await client.call_tool(
                "task", {"subagent_type": "reader", "description": "read", "prompt": "Read notes.txt"}
            )
            return tools, "\n".join(getattr(block, "text", "") for block in result.content)

    with ScriptedModelServer("openai", [], routes={"READER-AGENT": child}) as server:
        user_config(home, server, wire="openai")
        tools, answer = anyio.run(main)
    assert "- reader: Reads files." in tools["task"] and "- general-purpose:" in tools["task"]
    assert answer == "The note says: first note."
    audit = [json.loads(line) for line in (home / "logs" / "gateway.jsonl").read_text().splitlines()]
    assert [(r["tool"], r["agent"], r["decision"], r["outcome"]) for r in audit] == [
        ("fs.read", "reader", "allow", "ok"),
        ("task", None, "allow", "ok"),
    ]


def test_serve_without_a_model_offers_no_task(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    workspace = make_workspace(tmp_path / "repo")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kairox", "serve"], env=kairox_env(home), cwd=str(workspace)
    )

    async def main() -> list[str]:
        async with Client(params, mode="legacy") as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert "fs_read" in (tools := anyio.run(main)) and "task" not in tools
