"""Small real implementations of the interfaces the registry talks to: a tool provider, hooks, an approver."""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kairox._util._json import JsonObject
from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.policy import ApprovalAnswer, ApprovalRequest, PolicySettings
from kairox.policy._rules import RuleLike
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import (
    Access,
    CallContext,
    PermissionProfile,
    PostToolUseOutcome,
    PreToolUseOutcome,
    ToolCall,
    ToolProvider,
    ToolResult,
    ToolSource,
    ToolSpec,
)
from kairox.tools._model import READ_ONLY

MESSAGE_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}


def spec(
    name: str,
    *,
    source: ToolSource = ToolSource.PLUGIN,
    origin: str = "demo",
    schema: JsonObject | None = None,
    access: Access = Access.READ,
    timeout: float | None = None,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=f"{name} tool",
        input_schema=schema if schema is not None else MESSAGE_SCHEMA,
        source=source,
        origin=origin,
        permission=READ_ONLY if access is Access.READ else PermissionProfile(access=access),
        timeout_sec=timeout,
    )


class DemoProvider(ToolProvider):
    """Tools whose behaviour is in their name: echo, slow (sleeps), boom (raises), big (long output)."""

    def __init__(
        self, origin: str = "demo", specs: Sequence[ToolSpec] | None = None, *, fail_listing: bool = False
    ) -> None:
        super().__init__()
        self.origin = origin
        self.specs = list(specs if specs is not None else [spec("echo", origin=origin)])
        self.fail_listing = fail_listing
        self.calls: list[tuple[str, JsonObject]] = []

    async def list_tools(self) -> Sequence[ToolSpec]:
        if self.fail_listing:
            raise ConnectionError("server went away")
        return self.specs

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        self.calls.append((name, arguments))
        if name.endswith("slow"):
            await asyncio.sleep(30)
        if name.endswith("boom"):
            raise RuntimeError("kaput")
        if name.endswith("big"):
            return ToolResult.text("x" * int(arguments.get("message", "0") or 0))
        return ToolResult.text(f"{name}: {arguments.get('message')}")

    async def change(self, specs: Sequence[ToolSpec]) -> None:
        self.specs = list(specs)
        await self._tools_changed(self.specs)


@dataclass
class Hooks:
    """A ToolHooks that answers with fixed outcomes and remembers what it saw."""

    pre: PreToolUseOutcome = field(default_factory=PreToolUseOutcome)
    post: PostToolUseOutcome = field(default_factory=PostToolUseOutcome)
    crash: bool = False
    seen: list[str] = field(default_factory=list)

    def listens_pre_tool_use(self, tool: str) -> bool:
        return True

    def listens_post_tool_use(self, tool: str) -> bool:
        return True

    async def pre_tool_use(self, call: ToolCall, spec: ToolSpec) -> PreToolUseOutcome:
        self.seen.append(f"pre {call.name}")
        if self.crash:
            raise RuntimeError("hook runner crashed")
        return self.pre

    async def post_tool_use(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> PostToolUseOutcome:
        self.seen.append(f"post {call.name} {result.text_content()}")
        return self.post


@dataclass
class ScriptedApprover:
    """Answers approval requests from a script, the way a person at a prompt would."""

    answers: list[ApprovalAnswer] = field(default_factory=list)
    requests: list[ApprovalRequest] = field(default_factory=list)

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else ApprovalAnswer.deny("no more answers")


def settings(
    ws: Path,
    *rules: RuleLike,
    approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST,
    sandbox: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE,
    disabled: tuple[str, ...] = (),
    limit: int = 30_000,
    timeout: float = 120.0,
) -> RegistrySettings:
    config = PolicyConfig(approval_policy=approval, sandbox_policy=sandbox)
    policy = PolicySettings.from_config(
        config, workspace=ws, rules=rules, home=ws.parent / "home", temp_dir=ws.parent / "tmp"
    )
    return RegistrySettings(
        policy=policy,
        sandbox=SandboxSettings(
            mode=policy.sandbox, writable_roots=policy.writable_roots, network_access=policy.network_access
        ),
        disabled=disabled,
        default_timeout_sec=timeout,
        output_limit_chars=limit,
        spill_dir=ws.parent / "spill",
    )
