"""What the gate works out once per tool (its plan: timeout, read filter, the decision no argument can change, the
hook points that listen) is made again whenever what it was made from changes: the settings, a tool's definition
(its server's trust), the tools themselves, the hooks. And the one deadline timer keeps ``asyncio.timeout``'s
outcomes: each call ends at its own deadline, a cancellation from outside stays a cancellation."""

import asyncio
import dataclasses
from pathlib import Path

import pytest
from tests.registry._support import DemoProvider, settings, spec

from kairox._util._json import JsonObject
from kairox.config import ApprovalPolicy
from kairox.hooks import HookEvent, HookRegistry
from kairox.hooks._model import HookSpec
from kairox.policy import NonInteractiveApprover, Rule, Verdict
from kairox.registry import ToolRegistry
from kairox.sandbox import SandboxSettings
from kairox.tools import CallContext, ToolAnnotations, ToolCall, ToolResult, ToolSource, ToolSpec

pytestmark = pytest.mark.anyio


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for name in ("ws", "home", "tmp"):
        (tmp_path / name).mkdir()
    return tmp_path / "ws"


def _mcp(read_only: bool, trusted: bool) -> ToolSpec:
    return dataclasses.replace(
        spec("mcp__s__echo", source=ToolSource.MCP, origin="s"),
        annotations=ToolAnnotations(read_only_hint=read_only, open_world_hint=False),
        annotations_trusted=trusted,
    )


async def _echo(registry: ToolRegistry, name: str = "echo", **arguments: object) -> ToolResult:
    return await registry.call(ToolCall(name=name, arguments={"message": "hi", **arguments}))


async def test_new_settings_replace_the_kept_decisions_and_timeouts(ws: Path) -> None:
    registry = ToolRegistry(settings(ws, timeout=5.0), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(specs=[spec("echo"), spec("slow")]))
    assert await _echo(registry) == ToolResult.text("echo: hi")  # its decision is now kept

    registry.settings = settings(ws, Rule(action="deny", pattern="echo"), timeout=0.1)

    denied = await _echo(registry)
    assert (
        denied.is_error
        and denied.text_content() == "echo was not run: echo is not available: denied by deny rule 'echo'"
    )
    assert registry.check("echo", {"message": "hi"}).verdict is Verdict.DENY
    assert [s.name for s in registry.visible_tools()] == ["slow"]
    assert await _echo(registry, "slow") == ToolResult.error("slow timed out after 0.1s and was cancelled")


async def test_trusting_a_servers_annotations_changes_the_kept_decision(ws: Path) -> None:
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    provider = DemoProvider(origin="s", specs=[_mcp(read_only=True, trusted=False)])
    await registry.add_provider(provider)
    assert registry.check("mcp__s__echo", {"message": "hi"}).verdict is Verdict.ASK
    assert (await _echo(registry, "mcp__s__echo")).is_error  # asked, and nobody is there to answer

    await provider.change([_mcp(read_only=True, trusted=True)])  # the user now trusts the server's annotations

    assert registry.check("mcp__s__echo", {"message": "hi"}).verdict is Verdict.ALLOW
    assert await _echo(registry, "mcp__s__echo") == ToolResult.text("mcp__s__echo: hi")

    await provider.change([_mcp(read_only=True, trusted=False)])  # and no longer does

    assert (await _echo(registry, "mcp__s__echo")).is_error
    assert provider.calls == [("mcp__s__echo", {"message": "hi"})]


async def test_removed_and_re_added_tools_get_new_plans(ws: Path) -> None:
    registry = ToolRegistry(settings(ws, timeout=0.1), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(specs=[spec("slow", timeout=5.0)]))
    assert registry.check("slow", {"message": "hi"}).verdict is Verdict.ALLOW

    registry.replace_origin("demo", ())  # its server lists no tools any more
    gone = await _echo(registry, "slow")
    assert gone.is_error and gone.text_content().startswith("slow was not run: no tool named 'slow'")

    again = DemoProvider(specs=[spec("slow")])  # same name, now on the registry's default timeout
    await registry.add_provider(again)
    assert await _echo(registry, "slow") == ToolResult.error("slow timed out after 0.1s and was cancelled")
    assert again.calls == [("slow", {"message": "hi"})]


async def test_hooks_set_after_calls_ran_without_them_are_heard(ws: Path) -> None:
    sandbox = SandboxSettings(writable_roots=(ws,))
    unrelated = HookSpec(event=HookEvent.POST_TOOL_USE, command="true", matcher="fs.*", name="config:post_tool_use.1")
    hooks = HookRegistry([unrelated], workspace=ws, sandbox=sandbox)  # heard for fs.*, not for echo
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover(), hooks=hooks)
    provider = DemoProvider()
    await registry.add_provider(provider)
    assert await _echo(registry) == ToolResult.text("echo: hi")

    hooks.hooks = (
        unrelated,
        HookSpec(
            event=HookEvent.PRE_TOOL_USE,
            command="echo 'no echo today' >&2; exit 2",
            matcher="echo",
            name="config:pre_tool_use.1",
        ),
    )
    blocked = await _echo(registry)
    assert blocked.is_error and blocked.text_content() == "echo was not run: no echo today"

    hooks.hooks = ()
    assert await _echo(registry) == ToolResult.text("echo: hi")
    assert len(provider.calls) == 2


async def test_a_kept_decision_under_approval_never_is_a_denial(ws: Path) -> None:
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(origin="s", specs=[_mcp(read_only=False, trusted=False)]))
    asked = registry.check("mcp__s__echo", {"message": "hi"})
    never = [registry.check("mcp__s__echo", {"message": "hi"}, approval=ApprovalPolicy.NEVER) for _ in range(2)]
    assert asked.verdict is Verdict.ASK
    assert [d.verdict for d in never] == [Verdict.DENY, Verdict.DENY]
    assert never[0].reason == f"{asked.reason}; the approval policy is never, so what would be asked is denied"
    assert registry.check("mcp__s__echo", {"message": "hi"}) == asked


# --- deadlines ---------------------------------------------------------------------------------------------------


async def test_concurrent_calls_each_end_at_their_own_deadline(ws: Path) -> None:
    registry = ToolRegistry(settings(ws, timeout=0.4), approver=NonInteractiveApprover())
    await registry.add_provider(DemoProvider(specs=[spec("echo"), spec("slow"), spec("own_slow", timeout=0.1)]))
    results = await asyncio.gather(
        _echo(registry, "slow"), _echo(registry, "own_slow"), _echo(registry), _echo(registry, "own_slow")
    )
    assert results == [
        ToolResult.error("slow timed out after 0.4s and was cancelled"),
        ToolResult.error("own_slow timed out after 0.1s and was cancelled"),
        ToolResult.text("echo: hi"),
        ToolResult.error("own_slow timed out after 0.1s and was cancelled"),
    ]
    assert await _echo(registry) == ToolResult.text("echo: hi")


async def test_a_call_cancelled_from_outside_stays_cancelled(ws: Path) -> None:
    registry = ToolRegistry(settings(ws, timeout=30.0), approver=NonInteractiveApprover())
    provider = DemoProvider(specs=[spec("echo"), spec("slow")])
    await registry.add_provider(provider)
    task = asyncio.create_task(_echo(registry, "slow"))
    while not provider.calls:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert await _echo(registry) == ToolResult.text("echo: hi")


class Nested(DemoProvider):
    """``outer`` calls ``inner`` (which sleeps) through the same registry, in the same task."""

    registry: ToolRegistry

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        if name == "outer":
            inner = await self.registry.call(ToolCall(name="inner", arguments={"message": "x"}))
            return ToolResult.text(f"outer got: {inner.text_content()}")
        await asyncio.sleep(30)
        return ToolResult.text("inner woke")


@pytest.mark.parametrize(
    ("outer", "inner", "expected"),
    [
        (5.0, 0.1, ToolResult.text("outer got: inner timed out after 0.1s and was cancelled")),
        (0.1, 5.0, ToolResult.error("outer timed out after 0.1s and was cancelled")),
    ],
)
async def test_a_call_inside_a_call_keeps_its_own_deadline(
    ws: Path, outer: float, inner: float, expected: ToolResult
) -> None:
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    provider = Nested(specs=[spec("outer", timeout=outer), spec("inner", timeout=inner)])
    provider.registry = registry
    await registry.add_provider(provider)
    assert await _echo(registry, "outer") == expected
    await asyncio.sleep(0)  # the task carries no cancellation left over from the deadline
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


class Swallowing(DemoProvider):
    """A tool that catches the cancellation its deadline sends and returns all the same."""

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        try:
            await asyncio.sleep(5)
            return ToolResult.text("slept")
        except asyncio.CancelledError:
            return ToolResult.text("swallowed")


async def test_a_tool_that_swallows_its_cancellation_returns_and_leaves_no_cancellation_behind(ws: Path) -> None:
    registry = ToolRegistry(settings(ws), approver=NonInteractiveApprover())
    await registry.add_provider(Swallowing(specs=[spec("stubborn", timeout=0.05)]))
    assert await _echo(registry, "stubborn") == ToolResult.text("swallowed")
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
    await asyncio.sleep(0.01)  # not cancelled again
