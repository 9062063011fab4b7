"""Attacks on what the gate keeps between calls (per-tool plans worked out when tools change, hook matches,
timeouts): a first harmless call warms everything, then the attack comes through the same tool. Each attack
must end as it would on a cold gate: asked (refused, with nobody to ask) or denied, and the tool, which writes a
marker file when it really runs, leaves none."""

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.registry._support import settings
from tests.security._support import mcp_tool, workspace
from tests.security.test_mcp_authority import DENIED_READS, WRITES_TO_PROTECTED

from kairox._util._json import JsonObject
from kairox.hooks import HookEvent, HookRegistry
from kairox.hooks._model import HookSpec
from kairox.policy import NonInteractiveApprover, Rule
from kairox.registry import ToolRegistry
from kairox.tools import CallContext, ToolAnnotations, ToolCall, ToolProvider, ToolResult, ToolSpec

pytestmark = pytest.mark.anyio

HARMLESS: JsonObject = {"message": "hello"}
"""Names no path and no command: its decision is one the gate keeps for the tool."""


class MarkingProvider(ToolProvider):
    """MCP-shaped tools that, when they really run, write a marker file named after the call (and wait first
    when asked to, so a deadline can end them)."""

    def __init__(self, specs: Sequence[ToolSpec], markers: Path) -> None:
        super().__init__()
        self.origin = "fs"
        self.specs = list(specs)
        self.markers = markers
        self.runs = 0

    async def list_tools(self) -> Sequence[ToolSpec]:
        return self.specs

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        self.runs += 1
        wait = arguments.get("wait")
        if isinstance(wait, (int, float)):
            await asyncio.sleep(wait)
        (self.markers / f"{name}-{self.runs}").write_text("ran")
        return ToolResult.text("done")


def _markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


async def _call(registry: ToolRegistry, name: str, arguments: JsonObject) -> ToolResult:
    return await registry.call(ToolCall(name=name, arguments=arguments))


def _in(ws: Path, arguments: JsonObject) -> JsonObject:
    return {k: (v.replace("/WS/", f"{ws}/") if isinstance(v, str) else v) for k, v in arguments.items()}


@pytest.mark.parametrize(
    ("tool", "arguments"), WRITES_TO_PROTECTED, ids=[f"{t}-{i}" for i, (t, _) in enumerate(WRITES_TO_PROTECTED)]
)
async def test_a_warm_allow_for_a_tool_does_not_carry_its_write_to_a_protected_path(
    tmp_path: Path, tool: str, arguments: JsonObject
) -> None:
    ws, markers = workspace(tmp_path), _markers(tmp_path)
    provider = MarkingProvider([mcp_tool("fs", tool)], markers)
    registry = ToolRegistry(settings(ws, Rule(action="allow", pattern="mcp__fs__*")), approver=NonInteractiveApprover())
    await registry.add_provider(provider)
    name = f"mcp__fs__{tool}"
    for _ in range(3):  # warm: the harmless call runs, and runs again from whatever the gate kept
        assert (await _call(registry, name, HARMLESS)).is_error is False

    attack = await _call(registry, name, _in(ws, arguments))

    assert attack.is_error and "was not run" in attack.text_content()
    assert sorted(p.name for p in markers.iterdir()) == [f"{name}-{i}" for i in (1, 2, 3)]


@pytest.mark.parametrize(("tool", "arguments"), DENIED_READS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(DENIED_READS)])
async def test_a_warm_allow_for_a_read_tool_does_not_carry_a_denied_read(
    tmp_path: Path, tool: str, arguments: JsonObject
) -> None:
    ws, markers = workspace(tmp_path), _markers(tmp_path)
    (ws / "secrets" / "token.txt").write_text("t0k3n")
    spec = mcp_tool("fs", tool, ToolAnnotations(read_only_hint=True, open_world_hint=False))
    rules = (
        Rule(action="allow", pattern="mcp__fs__*"),
        Rule(action="deny", pattern="fs.read(secrets/**)"),
        Rule(action="deny", pattern="fs.read(.env)"),
    )
    registry = ToolRegistry(settings(ws, *rules), approver=NonInteractiveApprover())
    await registry.add_provider(MarkingProvider([spec], markers))
    name = f"mcp__fs__{tool}"
    for _ in range(3):
        assert (await _call(registry, name, HARMLESS)).is_error is False

    attack = await _call(registry, name, _in(ws, arguments))

    assert attack.is_error and "denied" in attack.text_content()
    assert len(list(markers.iterdir())) == 3


async def test_a_deny_rule_set_after_warm_calls_stops_the_next_one(tmp_path: Path) -> None:
    ws, markers = workspace(tmp_path), _markers(tmp_path)
    registry = ToolRegistry(settings(ws, Rule(action="allow", pattern="mcp__fs__*")), approver=NonInteractiveApprover())
    await registry.add_provider(MarkingProvider([mcp_tool("fs", "write_file")], markers))
    for _ in range(3):
        assert (await _call(registry, "mcp__fs__write_file", HARMLESS)).is_error is False

    registry.settings = settings(
        ws, Rule(action="allow", pattern="mcp__fs__*"), Rule(action="deny", pattern="mcp__fs__write_file")
    )

    assert (await _call(registry, "mcp__fs__write_file", HARMLESS)).is_error
    assert len(list(markers.iterdir())) == 3


async def test_a_blocking_hook_set_after_warm_calls_stops_the_next_one(tmp_path: Path) -> None:
    ws, markers = workspace(tmp_path), _markers(tmp_path)
    hooks = HookRegistry([], workspace=ws, sandbox=settings(ws).sandbox)
    registry = ToolRegistry(
        settings(ws, Rule(action="allow", pattern="mcp__fs__*")), approver=NonInteractiveApprover(), hooks=hooks
    )
    await registry.add_provider(MarkingProvider([mcp_tool("fs", "write_file")], markers))
    for _ in range(3):
        assert (await _call(registry, "mcp__fs__write_file", HARMLESS)).is_error is False

    hooks.hooks = (
        HookSpec(
            event=HookEvent.PRE_TOOL_USE,
            command="echo 'frozen' >&2; exit 2",
            matcher="mcp__fs__*",
            name="config:pre_tool_use.1",
        ),
    )

    blocked = await _call(registry, "mcp__fs__write_file", HARMLESS)
    assert blocked.is_error and "frozen" in blocked.text_content()
    assert len(list(markers.iterdir())) == 3


async def test_a_call_past_its_deadline_never_gets_to_act_even_among_others(tmp_path: Path) -> None:
    # the calls share one deadline timer: the slow one is cut at its own deadline while quick ones come and go
    ws, markers = workspace(tmp_path), _markers(tmp_path)
    registry = ToolRegistry(
        settings(ws, Rule(action="allow", pattern="mcp__fs__*"), timeout=0.3), approver=NonInteractiveApprover()
    )
    await registry.add_provider(MarkingProvider([mcp_tool("fs", "write_file")], markers))

    slow = asyncio.ensure_future(_call(registry, "mcp__fs__write_file", {**HARMLESS, "wait": 1.0}))
    quick = [await _call(registry, "mcp__fs__write_file", HARMLESS) for _ in range(5)]
    cut = await slow
    await asyncio.sleep(1.0)  # past the moment the slow call would have written its marker

    assert [r.is_error for r in quick] == [False] * 5
    assert cut.is_error and "timed out after 0.3s" in cut.text_content()
    assert len(list(markers.iterdir())) == 5
