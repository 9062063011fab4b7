"""The hook registry: every configured and plugin hook, run around turns and tool calls (H1-H3).

It implements the ToolRegistry's ``ToolHooks`` interface, so a ``pre_tool_use`` deny really blocks a call
and an ``ask`` turns an allowed call into an approval. Matching hooks of one event run concurrently; deny
beats ask beats allow. A hook of a plugin that is not ``local`` runs only after the user approved it.
"""

import asyncio
import copy
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import anyio

from kairox._util._json import JsonObject
from kairox.config import HooksConfig
from kairox.errors import Diagnostic, Severity
from kairox.events import EventSink, NullSink
from kairox.hooks._approval import HookApprovalStore, hook_hash
from kairox.hooks._events import HookFinished
from kairox.hooks._model import TOOL_EVENTS, HookEvent, HookOutcome, HookResult, HookSpec, PluginHookLike, matches
from kairox.hooks._runner import run_hook
from kairox.policy import ApprovalRequest, ApprovalScope, Approver
from kairox.sandbox import SandboxSettings
from kairox.tools import HookDecision, PostToolUseOutcome, PreToolUseOutcome, ToolCall, ToolResult, ToolSpec

_RANK = {HookDecision.ALLOW: 0, HookDecision.ASK: 1, HookDecision.DENY: 2}


def hooks_from_config(config: HooksConfig) -> list[HookSpec]:
    """``[[hooks.<event>]]`` tables as hook specs, named ``config:<event>.<n>``."""
    specs = []
    for event in HookEvent:
        for index, entry in enumerate(getattr(config, str(event)), start=1):
            specs.append(
                HookSpec(
                    event=event,
                    command=entry.command,
                    matcher=entry.matcher,
                    timeout_sec=entry.timeout_sec,
                    fail_open=entry.fail_open,
                    name=f"config:{event}.{index}",
                )
            )
    return specs


def hooks_from_plugins(entries: Iterable[PluginHookLike]) -> tuple[list[HookSpec], list[Diagnostic]]:
    """Plugin hook entries (``PluginRouting.hooks``) as hook specs, named ``<plugin>:<name>``."""
    specs: list[HookSpec] = []
    problems: list[Diagnostic] = []
    for entry in entries:
        event = HookEvent.parse(entry.event)
        if event is None:
            problems.append(
                Diagnostic(
                    kind="hook",
                    name=f"{entry.plugin}:{entry.name}",
                    reason=f"unknown event {entry.event!r}; the hook is skipped",
                    source=entry.source,
                )
            )
            continue
        specs.append(
            HookSpec(
                event=event,
                command=entry.command,
                matcher=entry.matcher,
                timeout_sec=entry.timeout_sec,
                name=f"{entry.plugin}:{entry.name}",
                plugin=entry.plugin,
                trust=entry.trust,
                plugin_root=entry.plugin_root,
                source=entry.source,
                scripts=tuple(entry.scripts),
            )
        )
    return specs, problems


def _tool_response(result: ToolResult) -> JsonObject:
    return {"content": result.text_content(), "is_error": result.is_error, "structured": result.structured}


class HookRegistry:
    """Runs hooks. Build one per session with :meth:`from_config`; it is also the registry's ``ToolHooks``."""

    def __init__(
        self,
        hooks: Iterable[HookSpec] = (),
        *,
        workspace: Path,
        sandbox: SandboxSettings | None = None,
        approver: Approver | None = None,
        approvals: HookApprovalStore | None = None,
        events: EventSink | None = None,
    ) -> None:
        self.hooks: tuple[HookSpec, ...] = tuple(hooks)
        self.workspace = workspace
        self.sandbox = sandbox or SandboxSettings(writable_roots=(workspace,))
        self.approver = approver
        self.approvals = approvals
        self.events = events or NullSink()
        self.host_env = dict(os.environ)
        self.session_id = ""
        """The session the hooks' requests name (set when the session's transcript opens)."""
        self.diagnostics: list[Diagnostic] = []
        self.agent: JsonObject = {}
        """``agent_id`` and ``agent_type`` added to every request of a subagent's hooks (:meth:`for_agent`)."""
        self._session_approved: set[tuple[str, str]] = set()
        self._approval_lock = asyncio.Lock()

    @classmethod
    def from_config(
        cls,
        config: HooksConfig,
        plugin_hooks: Iterable[PluginHookLike] = (),
        *,
        workspace: Path,
        sandbox: SandboxSettings | None = None,
        approver: Approver | None = None,
        approvals: HookApprovalStore | None = None,
        events: EventSink | None = None,
    ) -> "HookRegistry":
        """The hooks of ``[hooks]`` then those of the routed plugins (``route_plugins(...).hooks``)."""
        specs = hooks_from_config(config)
        plugin_specs, problems = hooks_from_plugins(plugin_hooks)
        registry = cls(
            [*specs, *plugin_specs],
            workspace=workspace,
            sandbox=sandbox,
            approver=approver,
            approvals=approvals,
            events=events,
        )
        registry.diagnostics += problems
        return registry

    def matching(self, event: HookEvent, subject: str | None = None) -> list[HookSpec]:
        return [h for h in self.hooks if h.event is event and matches(h.matcher, subject)]

    # --- approval of plugin hooks ----------------------------------------------------------------------------

    async def _approved(self, hook: HookSpec) -> HookResult | None:
        """None when ``hook`` may run; else the skipped result saying why."""
        if not hook.needs_approval:
            return None
        fingerprint = (hook.name, hook_hash(hook))
        async with self._approval_lock:
            if fingerprint in self._session_approved or (
                self.approvals is not None and self.approvals.is_approved(hook)
            ):
                return None
            if self.approver is None:
                reason = (
                    f"hook of {hook.trust or 'unknown'} plugin {hook.plugin} is not approved yet (or changed since)"
                )
                return self._skipped(hook, reason, hint=f"approve it with `kairox hooks approve {hook.name}`")
            request = ApprovalRequest(
                tool=f"hook:{hook.name}",
                arguments={
                    "event": str(hook.event),
                    "command": hook.command,
                    "scripts": [str(s) for s in hook.scripts],
                },
                reason=f"plugin {hook.plugin} ({hook.trust}) wants to run a {hook.event} hook: {hook.command}",
            )
            try:
                answer = await self.approver.request_approval(request)
            except Exception as exc:  # an approver that fails approves nothing
                return self._skipped(hook, f"not approved: the approver failed: {exc}")
            if not answer.approved:
                return self._skipped(hook, f"not approved: {answer.reason or 'the user declined'}")
            self._session_approved.add(fingerprint)
            if answer.scope is ApprovalScope.ALWAYS and self.approvals is not None:
                self.approvals.approve(hook)
        return None

    def _skipped(self, hook: HookSpec, reason: str, *, hint: str | None = None) -> HookResult:
        problem = Diagnostic(
            kind="hook", name=hook.name, reason=reason, severity=Severity.WARNING, source=hook.source, hint=hint
        )
        return HookResult(hook=hook, exit_code=None, skipped=True, diagnostic=problem)

    # --- running -----------------------------------------------------------------------------------------

    async def _run_one(self, hook: HookSpec, request: JsonObject) -> HookResult:
        started = time.monotonic()
        result = await self._approved(hook)
        if result is None:
            result = await run_hook(
                hook, request, workspace=self.workspace, sandbox=self.sandbox, host_env=self.host_env
            )
        self.events.emit(
            HookFinished(
                hook=hook.name,
                event=str(hook.event),
                exit_code=result.exit_code,
                decision=str(result.decision) if result.decision else None,
                reason=result.reason,
                duration_ms=round((time.monotonic() - started) * 1000, 3),
                skipped=result.skipped,
                error=result.diagnostic.reason if result.diagnostic else None,
            )
        )
        return result

    async def run(
        self, event: HookEvent, payload: JsonObject | None = None, *, subject: str | None = None
    ) -> HookOutcome:
        """Run every hook of ``event`` that matches ``subject`` (concurrently) and combine their answers."""
        hooks = self.matching(event, subject)
        if not hooks:
            return HookOutcome(event=event)
        request: JsonObject = {
            "session_id": self.session_id,
            "hook_event_name": event.claude_name,
            "kairox_event": str(event),
            "cwd": str(self.workspace),
            **self.agent,
            **(payload or {}),
        }
        results: list[HookResult | None] = [None] * len(hooks)

        async def run_at(index: int, hook: HookSpec) -> None:
            results[index] = await self._run_one(hook, request)

        async with anyio.create_task_group() as group:
            for index, hook in enumerate(hooks):
                group.start_soon(run_at, index, hook)
        outcome = combine(event, [r for r in results if r is not None])
        self.diagnostics += outcome.diagnostics
        return outcome

    # --- ToolHooks -----------------------------------------------------------------------------------------

    def listens_pre_tool_use(self, tool: str) -> bool:
        """Whether a ``pre_tool_use`` hook matches ``tool`` (else the call skips the hook point: nothing would run)."""
        return bool(self.matching(HookEvent.PRE_TOOL_USE, tool))

    def listens_post_tool_use(self, tool: str) -> bool:
        return bool(self.matching(HookEvent.POST_TOOL_USE, tool))

    async def pre_tool_use(self, call: ToolCall, spec: ToolSpec) -> PreToolUseOutcome:
        payload: JsonObject = {
            "tool_name": call.name,
            "tool_input": call.arguments,
            "tool_use_id": call.call_id,
            "tool_source": str(spec.source),
            "tool_origin": spec.origin,
        }
        outcome = await self.run(HookEvent.PRE_TOOL_USE, payload, subject=call.name)
        decision = HookDecision.DENY if outcome.stop else outcome.decision
        return PreToolUseOutcome(
            decision=decision,
            reason=outcome.reason,
            updated_input=outcome.updated_input,
            additional_context=outcome.additional_context,
            diagnostics=outcome.diagnostics,
        )

    async def post_tool_use(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> PostToolUseOutcome:
        payload: JsonObject = {
            "tool_name": call.name,
            "tool_input": call.arguments,
            "tool_use_id": call.call_id,
            "tool_response": _tool_response(result),
        }
        outcome = await self.run(HookEvent.POST_TOOL_USE, payload, subject=call.name)
        block = (outcome.reason or "a post_tool_use hook blocked the result") if outcome.blocked else None
        return PostToolUseOutcome(
            additional_context=outcome.additional_context, block_reason=block, diagnostics=outcome.diagnostics
        )

    # --- turn and session events -------------------------------------------------------------------------

    async def session_start(self, source: str = "startup") -> HookOutcome:
        return await self.run(HookEvent.SESSION_START, {"source": source}, subject=source)

    async def session_end(self, reason: str = "exit") -> HookOutcome:
        return await self.run(HookEvent.SESSION_END, {"reason": reason})

    async def user_prompt_submit(self, prompt: str) -> HookOutcome:
        """``blocked`` means the prompt must not reach the model; ``additional_context`` goes with it."""
        return await self.run(HookEvent.USER_PROMPT_SUBMIT, {"prompt": prompt})

    async def pre_turn(self, prompt: str = "") -> HookOutcome:
        """Its ``additional_context`` is injected into the turn's context."""
        return await self.run(HookEvent.PRE_TURN, {"prompt": prompt})

    async def post_turn(self, response: str = "") -> HookOutcome:
        return await self.run(HookEvent.POST_TURN, {"response": response, "stop_hook_active": False})

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> HookOutcome:
        """Before a compaction (``trigger`` is ``manual`` or ``auto``); its ``additional_context`` joins the summary's
        instructions, and a block keeps the conversation as it is."""
        return await self.run(
            HookEvent.PRE_COMPACT, {"trigger": trigger, "custom_instructions": custom_instructions}, subject=trigger
        )

    def for_agent(self, agent_id: str, agent_type: str) -> "HookRegistry":
        """The hooks of a subagent's calls: the tool and subagent hooks only (its turn is the ``task`` call), each
        request naming the agent; approvals of plugin hooks are shared with the session's."""
        child = copy.copy(self)
        kept = (*TOOL_EVENTS, HookEvent.SUBAGENT_START, HookEvent.SUBAGENT_STOP)
        child.hooks = tuple(h for h in self.hooks if h.event in kept)
        child.agent = {"agent_id": agent_id, "agent_type": agent_type}
        return child

    async def subagent(self, event: HookEvent, agent_id: str, agent_type: str, **more: object) -> HookOutcome:
        """``subagent_start`` (its ``additional_context`` joins the subagent's prompt) or ``subagent_stop``."""
        return await self.run(event, {"agent_id": agent_id, "agent_type": agent_type, **more}, subject=agent_type)


def combine(event: HookEvent, results: Sequence[HookResult]) -> HookOutcome:
    """Deny beats ask beats allow; the reasons of the winning answers are kept, contexts are joined.

    A plugin's hook may deny or ask but never allow: its allow counts as no opinion, because extension
    loading adds capability, never authority (only the user's own ``[hooks]`` can wave a call through).
    """
    decided = [
        r
        for r in results
        if r.decision is not None and not (r.decision is HookDecision.ALLOW and r.hook.plugin is not None)
    ]
    decision = max((r.decision for r in decided if r.decision), key=_RANK.__getitem__, default=None)
    winners = [r for r in decided if r.decision is decision]
    stops = [r for r in results if r.stop]
    reasons = [r.reason for r in (stops or winners) if r.reason]
    contexts = [r.additional_context for r in results if r.additional_context]
    updated = next(
        (r.updated_input for r in results if r.updated_input is not None and r.decision is not HookDecision.DENY), None
    )
    if event in TOOL_EVENTS and stops and decision is not HookDecision.DENY:
        decision = HookDecision.DENY
    return HookOutcome(
        event=event,
        decision=decision,
        reason="; ".join(reasons) or None,
        additional_context="\n\n".join(contexts) or None,
        updated_input=updated if decision is not HookDecision.DENY else None,
        stop=bool(stops),
        results=tuple(results),
        diagnostics=tuple(r.diagnostic for r in results if r.diagnostic is not None),
    )
