"""The framework adapters against the real libraries, with a scripted OpenAI-wire model on loopback: the model asks
for Kairox tools, each call passes the gate (a deny rule refuses one, an allowed read returns the file, an asked
write goes to the approver), and the calls are Kairox gate events with their decisions."""

import sys
from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import make_workspace
from tests.servers.model_server import ScriptedModelServer

from kairox.events import RecordingSink
from kairox.policy import ApprovalAnswer, ApprovalRequest
from kairox.registry import ToolCallDecided, ToolCallFinished
from kairox.runtime import build_extension_context

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SCRIPT = [
    {
        "reply": "tool_calls",
        "calls": [
            {"id": "c1", "name": "fs_read", "arguments": {"path": "notes.txt"}},
            {"id": "c2", "name": "fs_read", "arguments": {"path": "secrets/key.txt"}},
            {"id": "c3", "name": "fs_write", "arguments": {"path": "summary.txt", "content": "one note\n"}},
        ],
        "expect": {"tools_include": ["fs_read", "fs_write", "shell_exec"], "last_user_contains": "Summarise"},
    },
    {
        "reply": "text",
        "text": "The notes hold one line; the key stays hidden.",
        "expect": {"tool_results": {"c1": "first note", "c2": "fs.read was not run", "c3": "summary.txt"}},
    },
]


class Approves:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return ApprovalAnswer.allow_once()


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    root = make_workspace(tmp_path / "repo")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("sk-do-not-show\n", encoding="utf-8")
    (isolated_home / "kairox.toml").write_text(
        '[policy.rules]\ndeny = ["fs.read(secrets/**)"]\nask = ["fs.write(summary.txt)"]\n', encoding="utf-8"
    )
    return root


def assert_gated(sink: RecordingSink, approver: Approves, workspace: Path, server: ScriptedModelServer) -> None:
    decided: dict[str, list[tuple[str, str | None]]] = {}
    for event in sink.of_type(ToolCallDecided):
        decided.setdefault(event.call_id, []).append((event.decision, event.rule))
    assert decided == {
        "c1": [("allow", None)],
        "c2": [("deny", "fs.read(secrets/**)")],
        "c3": [("ask", "fs.write(summary.txt)"), ("allow", "fs.write(summary.txt)")],
    }
    assert {e.call_id: (e.tool, e.is_error) for e in sink.of_type(ToolCallFinished)} == {
        "c1": ("fs.read", False),
        "c2": ("fs.read", True),
        "c3": ("fs.write", False),
    }
    assert [(r.tool, r.arguments["path"]) for r in approver.asked] == [("fs.write", "summary.txt")]
    assert (workspace / "summary.txt").read_text(encoding="utf-8") == "one note\n"
    assert "sk-do-not-show" not in str(server.requests)
    # the prompt context went along as the agent's instructions
    system = [m["content"] for m in server.requests[0]["messages"] if m["role"] in ("system", "developer")]
    assert any("Workspace: repo" in str(text) for text in system), system


async def test_openai_agents_sdk_calls_kairox_tools_through_the_gate(workspace: Path) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
    from openai import AsyncOpenAI

    from kairox.integrations import agents_tools

    sink, approver = RecordingSink(), Approves()
    with ScriptedModelServer("openai", SCRIPT) as server:
        async with build_extension_context(workspace, events=sink) as context:
            client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
            tools = agents_tools(context.registry, approver=approver)
            assert {"fs_read", "fs_write"} <= {t.name for t in tools}
            agent = Agent(
                name="coder",
                instructions=context.prompt_context,
                tools=list[Any](tools),
                model=OpenAIChatCompletionsModel(model="scripted-model", openai_client=client),
            )
            result = await Runner.run(agent, "Summarise the notes.", run_config=RunConfig(tracing_disabled=True))
            await client.close()
    assert result.final_output == "The notes hold one line; the key stays hidden."
    assert_gated(sink, approver, workspace, server)


async def test_pydantic_ai_agent_calls_kairox_tools_through_the_gate(workspace: Path) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from kairox.integrations import KairoxToolset

    sink, approver = RecordingSink(), Approves()
    with ScriptedModelServer("openai", SCRIPT) as server:
        async with build_extension_context(workspace, events=sink) as context:
            toolset = KairoxToolset(context.registry, instructions=context.prompt_context, approver=approver)
            model = OpenAIChatModel(
                "scripted-model", provider=OpenAIProvider(base_url=server.base_url, api_key="sk-test")
            )
            agent = Agent(model, toolsets=[toolset])
            result = await agent.run("Summarise the notes.")
    assert result.output == "The notes hold one line; the key stays hidden."
    assert_gated(sink, approver, workspace, server)


def test_the_adapters_load_their_library_only_when_used() -> None:
    import subprocess

    code = (
        "import sys, kairox.integrations, kairox.runtime, kairox.agent; "
        "print(sorted(m for m in ('agents', 'pydantic_ai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == "[]"


async def test_images_of_a_tool_result_reach_both_frameworks_as_images(workspace: Path, isolated_home: Path) -> None:
    from agents import ToolOutputImage, ToolOutputText
    from agents.tool_context import ToolContext
    from pydantic_ai import BinaryContent, RunContext
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import RunUsage
    from tests.agent._support import EVERYTHING, NODE

    from kairox.integrations import KairoxToolset, agents_tools

    tool = "mcp__everything__get-tiny-image"
    with (isolated_home / "kairox.toml").open("a", encoding="utf-8") as config:
        config.write(
            f'allow = ["{tool}"]\n\n[mcp_servers.everything]\ncommand = "{NODE}"\nargs = ["{EVERYTHING}", "stdio"]\n'
        )
    async with build_extension_context(workspace) as context:
        [function] = [t for t in agents_tools(context.registry) if t.name == tool]
        out = await function.on_invoke_tool(
            ToolContext(context=None, tool_name=tool, tool_call_id="i1", tool_arguments="{}"), "{}"
        )
        assert isinstance(out, list) and isinstance(out[0], ToolOutputText)
        [image] = [part for part in out if isinstance(part, ToolOutputImage)]
        assert image.image_url is not None and image.image_url.startswith("data:image/png;base64,iVBORw0KGgo")

        model = OpenAIChatModel("unused", provider=OpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="unused"))
        toolset = KairoxToolset(context.registry)
        ctx = RunContext(deps=None, model=model, usage=RunUsage(), tool_call_id="i2", tool_name=tool)
        listed = await toolset.get_tools(ctx)
        returned = await toolset.call_tool(tool, {}, ctx, listed[tool])
        assert isinstance(returned, list) and isinstance(returned[0], str)
        [binary] = [part for part in returned if isinstance(part, BinaryContent)]
        assert binary.media_type == "image/png" and binary.data.startswith(b"\x89PNG\r\n\x1a\n")
