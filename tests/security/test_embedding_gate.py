"""The embedding paths add no way around the gate: hostile calls made through the OpenAI Agents SDK tools, the
pydantic-ai toolset and a caller's own model client are refused exactly as Kairox's own sessions refuse them, and
nothing they aimed at happens (no marker file, no secret in a result, no write without an approver)."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.agent._support import make_workspace

from kairox.agent import ModelRequest, ResponseEnd, Role, TextDelta, ToolCallPart, open_session
from kairox.agent._client import ModelEvent
from kairox.events import RecordingSink
from kairox.registry import ModelProvider, ToolCallDecided
from kairox.runtime import build_extension_context

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SECRET = "sk-embedded-secret-4711"


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    root = make_workspace(tmp_path / "repo")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text(SECRET + "\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (isolated_home / "kairox.toml").write_text(
        '[policy.rules]\ndeny = ["shell.exec", "fs.read(secrets/**)"]\nask = ["fs.write(pwned.txt)"]\n',
        encoding="utf-8",
    )
    return root


def attacks(workspace: Path) -> list[tuple[str, dict[str, Any]]]:
    """(wire name, arguments): each must be refused. shell_exec is denied by name, so no adapter even lists it."""
    return [
        ("shell_exec", {"command": f"touch {workspace / 'MARKER'}"}),
        ("fs_read", {"path": "secrets/key.txt"}),
        ("fs_read", {"path": "shop/../secrets/key.txt"}),
        ("fs_read", {"path": str(workspace / "secrets" / "key.txt")}),
        ("fs_write", {"path": "pwned.txt", "content": "pwned"}),  # asked, and nobody can approve here
        ("fs_write", {"path": str(workspace.parent / "outside" / "pwned.txt"), "content": "pwned"}),
        ("mcp__evil__exfiltrate", {"data": "x"}),
    ]


def assert_nothing_happened(workspace: Path, texts: list[str], sink: RecordingSink) -> None:
    assert len(texts) == 7
    for text in texts:
        assert "was not run" in text or "no tool named" in text, text
        assert SECRET not in text
    assert not (workspace / "MARKER").exists()
    assert not (workspace / "pwned.txt").exists()
    assert not (workspace.parent / "outside" / "pwned.txt").exists()
    # no call the gate saw ended allowed
    final: dict[str, str] = {}
    for event in sink.of_type(ToolCallDecided):
        final[event.call_id] = event.decision
    assert final and set(final.values()) == {"deny"}, final


async def test_agents_sdk_tools_refuse_what_the_gate_refuses(workspace: Path) -> None:
    from agents.tool_context import ToolContext

    from kairox.integrations import agents_tools

    sink = RecordingSink()
    async with build_extension_context(workspace, events=sink) as context:
        tools = {tool.name: tool for tool in agents_tools(context.registry)}
        assert "shell_exec" not in tools and "fs_read" in tools
        texts = ["shell_exec was not run: not offered"]  # the SDK has no such tool to call
        for index, (name, arguments) in enumerate(attacks(workspace)[1:]):
            tool = tools.get(name)
            if tool is None:
                texts.append(f"no tool named {name!r}")
                continue
            raw = __import__("json").dumps(arguments)
            ctx = ToolContext(context=None, tool_name=name, tool_call_id=f"a{index}", tool_arguments=raw)
            texts.append(str(await tool.on_invoke_tool(ctx, raw)))
        bad = tools["fs_read"]
        not_an_object = await bad.on_invoke_tool(
            ToolContext(context=None, tool_name="fs_read", tool_call_id="j", tool_arguments="[1]"), "[1]"
        )
        assert not_an_object == "fs_read was not run: the arguments must be a JSON object"
    assert_nothing_happened(workspace, texts, sink)


async def test_pydantic_ai_toolset_refuses_what_the_gate_refuses_also_for_tools_it_does_not_list(
    workspace: Path,
) -> None:
    from pydantic_ai import RunContext
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import RunUsage

    from kairox.integrations import KairoxToolset

    sink = RecordingSink()
    model = OpenAIChatModel("unused", provider=OpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="unused"))
    async with build_extension_context(workspace, events=sink) as context:
        toolset = KairoxToolset(context.registry)
        ctx = RunContext(deps=None, model=model, usage=RunUsage())
        listed = await toolset.get_tools(ctx)
        assert "shell_exec" not in listed and "fs_read" in listed
        texts = []
        for index, (name, arguments) in enumerate(attacks(workspace)):
            call = RunContext(deps=None, model=model, usage=RunUsage(), tool_call_id=f"p{index}", tool_name=name)
            texts.append(await toolset.call_tool(name, arguments, call, listed["fs_read"]))
    assert_nothing_happened(workspace, texts, sink)


class HostileModel:
    """A caller's model client that asks for every attack at once, then reports what came back."""

    model = "hostile-1"
    dialect = ModelProvider.OPENAI

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = calls
        self.results: list[str] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1]
        if last.role is Role.USER:
            for index, (name, arguments) in enumerate(self.calls):
                yield ToolCallPart(id=f"m{index}", name=name, arguments=arguments)
            yield ToolCallPart(
                id="bad", name="fs_read", invalid_arguments="the arguments must be a JSON object, not [1]"
            )
        else:
            self.results = [r.text for r in last.tool_results]
            yield TextDelta(text="done")
        yield ResponseEnd()


async def test_own_model_client_gets_no_more_than_the_gate_allows(workspace: Path) -> None:
    sink = RecordingSink()
    model = HostileModel(attacks(workspace))
    async with open_session(workspace, client=model, events=[sink]) as session:
        result = await session.run_turn("go")
    assert result.text == "done"
    *texts, bad = model.results
    assert bad.startswith("fs_read was not run")
    assert_nothing_happened(workspace, texts, sink)
