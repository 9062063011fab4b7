"""The ``task`` tool (A3). A call runs a subagent: a child :class:`AgentSession` with the agent's prompt, a fresh
conversation holding only the call's ``prompt``, and tools no wider than its parent's (the parent's visible tools
the agent's ``tools`` name, less its ``disallowedTools``) plus the tools of its own MCP servers, which only it sees
and which stop when it answers. Its calls pass the same gate (rules, sandbox, hooks naming the agent) and its asks
reach the same person, the agent named; nothing the child's model says answers one."""

import contextlib
import dataclasses
import secrets
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from kairox._util._json import JsonObject
from kairox.agent._client import ModelClient
from kairox.agent._events import SubagentEvent, SubagentStarted, SubagentStopped, TurnEndReason
from kairox.agent._messages import Usage
from kairox.agent._session import AgentSession, SessionApprover, client_for
from kairox.agent._transcript import Transcript
from kairox.config import AgentConfig, SecretScrubber
from kairox.errors import KairoxError
from kairox.events import Event, EventSink, FanoutSink, event_to_json
from kairox.hooks import HookEvent
from kairox.policy import ApprovalAnswer, ApprovalRequest, Approver
from kairox.registry import CALL_APPROVALS, SessionApprovals
from kairox.tools import Access, CallContext, PermissionProfile, ToolProvider, ToolResult, ToolSource, ToolSpec
from kairox.tools import object_schema as _schema

if TYPE_CHECKING:
    from kairox.runtime import AgentDef, ExtensionContext

TASK_TOOL = "task"
_ARGUMENTS = {
    "subagent_type": "The agent's name, from the list.",
    "description": "What it does, in 3-5 words (shown to the user).",
    "prompt": "The task, with all the context the agent needs.",
}
_LISTING_CHARS = 4000
"""How much of the ``task`` description the agents' list may take; past it, names only."""


@dataclass(kw_only=True)
class TaskHost:
    """What a ``task`` call needs of whoever runs it: an agent session, a subagent, or ``kairox serve``."""

    context: "ExtensionContext"
    events: EventSink
    limits: AgentConfig
    model: Callable[[], tuple[ModelClient, str]]
    """The model the host talks to now, and its provider: what a subagent without a model of its own uses."""
    transcript: Transcript | None = None
    depth: int = 0
    on_usage: Callable[[Usage], None] = lambda usage: None
    """The subagent's token use, added to the host's."""


class _Wrapped:
    """A subagent's events into its host's stream, each wrapped in a :class:`SubagentEvent`."""

    def __init__(self, host: EventSink, ids: dict[str, str]) -> None:
        self.host, self.ids = host, ids

    def emit(self, event: Event) -> None:
        self.host.emit(SubagentEvent(inner=event, **self.ids))


class _AgentApprover:
    """Puts a subagent's asks to its host's approver, saying which agent asks."""

    def __init__(self, approver: Approver, agent: str) -> None:
        self.approver, self.agent = approver, agent

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        if request.agent is None:  # a nested subagent's ask already names the one that asks
            reason = f"{self.agent} wants to run {request.tool}: {request.reason}"
            request = dataclasses.replace(request, agent=self.agent, reason=reason)
        return await self.approver.request_approval(request)


def _model_for(agent: "AgentDef", context: "ExtensionContext", current: str) -> Any:
    """The settings of the configured model the agent names (``sonnet`` finds ``anthropic/claude-sonnet-4-5``);
    None to go on with the host's (none named, ``inherit``, the same one, or no configured model fits)."""
    from kairox.agent._provider import choose_model, model_choices

    wanted = (agent.model or "").lower()
    found = next((c for c, _ in model_choices(context.resolved) if wanted and wanted in c.lower()), None)
    return None if found is None or found.endswith(f"/{current}") else choose_model(context.resolved, found)


class TaskTool(ToolProvider):
    """Provides ``task`` over the agents of a context; ``max_concurrent_tasks`` of its calls run at once."""

    origin = "agents"

    def __init__(self, host: TaskHost) -> None:
        super().__init__()
        self.host = host
        self._places = anyio.Semaphore(host.limits.max_concurrent_tasks)

    def spec(self) -> ToolSpec:
        agents = self.host.context.agents.offered()
        lines = [f"- {a.name}: {a.description[:200]}" for a in agents]
        if sum(map(len, lines)) > _LISTING_CHARS:
            lines = [", ".join(a.name for a in agents)]
        return ToolSpec(
            name=TASK_TOOL,
            description=(
                "Start a subagent: a fresh session that does one task with its own tools and answers once; only its "
                "final answer comes back. Put everything it needs in `prompt`. Several task calls in one answer "
                "run at the same time. Agents (subagent_type: what it is for):\n" + "\n".join(lines)
            ),
            input_schema=_schema(
                {k: {"type": "string", "description": v} for k, v in _ARGUMENTS.items()}, list(_ARGUMENTS)
            ),
            source=ToolSource.BUILTIN,
            permission=PermissionProfile(access=Access.READ),  # what a subagent does is gated call by call
            origin=self.origin,
            timeout_sec=24 * 3600.0,  # a subagent is bounded by its turns, not by the tools' default timeout
            meta={"rule_argument": "subagent_type"},
        )

    async def list_tools(self) -> Sequence[ToolSpec]:
        return [self.spec()]

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        wanted, prompt = arguments.get("subagent_type"), arguments.get("prompt")
        agent = self.host.context.agents.get(str(wanted))
        if agent is None or not agent.enabled:
            names = ", ".join(a.name for a in self.host.context.agents.offered())
            why = "is turned off" if agent is not None else "does not exist"
            return ToolResult.error(f"agent {wanted!r} {why}; the agents are: {names}")
        async with self._places:
            return await self._run(agent, str(prompt), str(arguments.get("description") or ""), context.call_id)

    async def _run(self, agent: "AgentDef", prompt: str, description: str, call_id: str) -> ToolResult:
        host, started = self.host, time.perf_counter()
        agent_id = f"{agent.name.replace(':', '-')}-{secrets.token_hex(3)}"
        ids = {"agent": agent.name, "agent_id": agent_id, "parent_call_id": call_id}
        notes: list[str] = []
        async with contextlib.AsyncExitStack() as stack:
            session = await self._child(agent, ids, stack, notes)
            path, tools = str(session.transcript.path), len(session.context.registry.visible_tools())
            model, depth = session.client.model, host.depth + 1
            host.events.emit(
                SubagentStarted(**ids, description=description, model=model, tools=tools, transcript=path, depth=depth)
            )
            outcome = await host.context.hooks.subagent(HookEvent.SUBAGENT_START, agent_id, agent.name)
            session.preamble = "\n\n".join(filter(None, [session.preamble, outcome.additional_context]))
            result = None
            try:
                result = await session.run_turn(prompt)
            finally:
                with anyio.CancelScope(shield=True):  # a cancelled task still says so, and its servers stop below
                    host.on_usage(session.usage)
                    stopped = SubagentStopped(
                        **ids,
                        reason=result.reason if result else TurnEndReason.CANCELLED,
                        tool_calls=result.tool_calls if result else 0,
                        input_tokens=session.usage.input_tokens,
                        output_tokens=session.usage.output_tokens,
                        duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    )
                    host.events.emit(stopped)
                    answer = result.text if result else ""
                    await host.context.hooks.subagent(
                        HookEvent.SUBAGENT_STOP,
                        agent_id,
                        agent.name,
                        agent_transcript_path=path,
                        last_assistant_message=answer,
                        stop_hook_active=False,
                    )
        assert result is not None  # a cancel propagated above
        if result.reason is not TurnEndReason.COMPLETED:
            notes.append(f"it stopped before it finished ({result.reason}): {result.message}")
        text = (result.text or "(no answer)") + "".join(f"\n\n[{agent.name}: {note}]" for note in notes)
        return ToolResult.text(text, structured={**event_to_json(stopped), "transcript": path})

    async def _child(
        self, agent: "AgentDef", ids: dict[str, str], stack: contextlib.AsyncExitStack, notes: list[str]
    ) -> AgentSession:
        """The subagent's session, its servers started and its transcript open (both closed by ``stack``)."""
        host, context = self.host, self.host.context
        resolved, depth, agent_id = context.resolved, self.host.depth + 1, ids["agent_id"]
        parent = CALL_APPROVALS.get(context.registry.approvals)
        wrapped = _Wrapped(host.events, ids)
        client, provider = host.model()
        try:
            settings = _model_for(agent, context, client.model)
            if settings is not None:
                client = await stack.enter_async_context(
                    contextlib.aclosing(client_for(settings, events=wrapped, api_key=settings.api_key()))
                )
                provider = settings.provider
        except KairoxError as exc:
            notes.append(f"its model {agent.model!r} is not usable here ({exc}); it ran on {client.model}")
        folder = host.transcript.path.with_suffix("") if host.transcript else resolved.home / "sessions" / "agents"
        transcript = Transcript.create(
            resolved.home,
            workspace=resolved.workspace,
            model=client.model,
            provider=provider,
            hidden=host.transcript.hidden if host.transcript else (),
            scrubber=SecretScrubber.for_config(resolved),
            folder=folder,
            session_id=agent_id,
            agent=agent.name,
            parent_call_id=ids["parent_call_id"],
        )
        stack.callback(transcript.close)
        events = FanoutSink([transcript, wrapped])
        asker = _AgentApprover(parent.approver, agent.name)
        approvals = SessionApprovals(asker, persist_rule=parent.persist_rule, emit=events.emit, parent=parent)
        hooks = context.hooks.for_agent(agent_id, agent.name)

        def keep(spec: ToolSpec) -> bool:
            if spec.name == TASK_TOOL:
                return False  # its own ``task``, when it may nest, is added below
            named = spec.source is ToolSource.MCP and spec.origin in agent.server_names
            return agent.allows(spec.name, named=named)

        registry = context.registry.narrowed(keep, approvals=approvals, hooks=hooks, events=events)
        if agent.mcp_servers and agent.held:
            notes.append(f"its own MCP servers were not started: {agent.held}")
        elif agent.mcp_servers:
            from kairox.mcp import ClientFeatures, McpServerManager, server_confiner

            manager = McpServerManager(
                agent.mcp_servers,
                workspace=resolved.workspace,
                home=resolved.home,
                events=events,
                features=ClientFeatures(roots=(resolved.workspace,)),
                raise_on_required=False,
                # confined as a server the configuration does not know: the sandbox of the session's commands
                confine=server_confiner(
                    {}, sandbox=registry.settings.sandbox, workspace=resolved.workspace, home=resolved.home
                ),
            )
            await stack.enter_async_context(manager)
            await registry.add_providers(list(manager.adapters.values()))
        child_context = dataclasses.replace(context, registry=registry, hooks=hooks, mcp=None)
        session = AgentSession(
            child_context,
            client,
            approver=SessionApprover(events.emit),
            events=events,
            transcript=transcript,
            limits=host.limits.model_copy(update={"max_turns": agent.max_turns or host.limits.max_turns}),
            provider=provider,
        )
        skills = [_skill_text(e) for e in map(context.skills.get, agent.skills) if e is not None and e.offered]
        opening = f"You are the subagent {agent.name!r}, working in {resolved.workspace}. Do the task you are given, "
        session.preamble = "\n\n".join(
            [opening + "then answer: your final answer is all the caller sees.", agent.prompt, *skills]
        )
        if depth < host.limits.max_task_depth and agent.allows(TASK_TOOL):
            child = dataclasses.replace(host, context=child_context, events=events, transcript=transcript, depth=depth)
            child.model = lambda: (session.client, session.provider)
            await registry.add_provider(TaskTool(child))
        return session


def _skill_text(entry: Any) -> str:
    from kairox.skills import SkillError, load_skill

    try:
        return str(load_skill(entry.skill).text())
    except SkillError as exc:
        return f"(skill {entry.skill.qualified_name} could not be loaded: {exc})"


@contextlib.asynccontextmanager
async def serve_tasks(context: "ExtensionContext", events: EventSink) -> AsyncIterator[None]:
    """``kairox serve``: the workspace's agents as one ``task`` tool, run on the configured model (none when no
    model is configured or its key is unset)."""
    from kairox.agent._provider import ModelSetupError, model_settings

    limits = context.resolved.config.agent
    try:
        settings = model_settings(context.resolved)
        client = client_for(settings, events=events, api_key=settings.api_key())
    except ModelSetupError:
        client = None
    if client is None or limits.max_task_depth == 0:
        yield
        return
    async with contextlib.aclosing(client):
        host = TaskHost(context=context, events=events, limits=limits, model=lambda: (client, settings.provider))
        await context.registry.add_provider(TaskTool(host))
        yield
