"""The registry as one MCP server: every visible tool through the gate, skills as prompts, upstream resources.

One ``Gateway`` serves any number of client sessions (one over stdio, many over HTTP). Each session has its own
grants and its own approver (``ToolRegistry.session_approvals``), so what one client approved for its session
never answers another client's question. Tools, prompts and resources are worked out on every list request from
the live registry, so a restarted or changed upstream shows up at once; changes are also announced to the
connected clients (``notifications/*/list_changed``).
"""

import dataclasses
import itertools
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

import kairox
from kairox._util._names import mcp_tool_name
from kairox.agent import SubagentEvent
from kairox.errors import Diagnostic
from kairox.events import Event
from kairox.gateway._approver import ElicitingApprover, current_request
from kairox.gateway._audit import AuditLog, AuditRecord
from kairox.gateway._relay import Relay
from kairox.gateway._rounds import Pending, RoundTripApprover, answer_of, given_answer, input_required
from kairox.gateway._search import (
    ADD_TOOL,
    MAX_RESULTS,
    META_TOOLS,
    SEARCH_TOOL,
    ServedIndex,
    error_result,
    meta_tools,
    names_argument,
    text_result,
    unknown_names,
)
from kairox.gateway._skills import (
    SKILL_SCHEME,
    SKILLS_EXTENSION,
    directory_children,
    file_contents,
    locate,
    served_frontmatter,
    skill_entry,
    skill_manifest,
)
from kairox.gateway._team import CALL_ID_KEY, Team, user_of
from kairox.gateway._untrusted import held_back
from kairox.gateway._wire import (
    HOST_NAME_LIMIT,
    host_names,
    host_prefix,
    prompt_argument_values,
    prompt_arguments,
    prompt_to_mcp,
    resource_contents,
    resource_uri,
    result_to_mcp,
    selected,
    split_resource_uri,
    tool_to_mcp,
)
from kairox.mcp._connection import CALLER_LOGIN
from kairox.policy import PolicyEngine, Verdict
from kairox.registry import (
    SessionApprovals,
    ToolCallDecided,
    ToolCallFinished,
    ToolCallRequested,
    ToolsChanged,
    event_arguments,
    renamed_diagnostic,
    wire_name,
)
from kairox.runtime import ExtensionContext
from kairox.sandbox import EgressRefused
from kairox.skills import SKILL_FILE, SKILL_TOOL, SkillDef, bundled_files
from kairox.tools import ToolCall, ToolResult, ToolSpec

MAX_TRACKED_SESSIONS = 1024
"""Client sessions whose grants and notification channel are kept; the least recently used go first."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GatewayOptions:
    expose: tuple[str, ...] = ()
    """Globs over tool names (registry or wire name): only matching tools are served (all when empty)."""
    hide: tuple[str, ...] = ()
    """Globs over tool names: matching tools are not served."""
    audit_path: Path | None = None
    """``$KAIROX_HOME/logs/gateway.jsonl`` by default."""
    name: str = "kairox"
    search: bool = False
    """List ``kairox_search_tools`` and the add/remove pair (and the tools a session added) instead of every
    served tool (``kairox serve --search``)."""
    store: str | None = None
    """The store's URL (``postgresql://...``, ``sqlite:///PATH``); SQLite under ``$KAIROX_HOME`` by default."""
    replica: str | None = None
    """This process's name in audit rows and the store; the host name and a random suffix by default."""


@dataclass(slots=True)
class _Client:
    name: str
    approver: ElicitingApprover
    rounds: RoundTripApprover
    approvals: SessionApprovals
    session: ServerSession | None = None
    """The latest request's session: its standalone channel carries list_changed to this client."""
    added: set[str] = field(default_factory=set)
    """With ``--search``: the wire names this session added with ``kairox_add_tools``, listed beside the three."""


_EGRESS_AUDIT: dict[str, Any] = {"client": "sandbox", "tool": "network", "decision": "deny", "outcome": "refused"}
_EGRESS_RULE = "sandbox.allowed_domains"
_SKILL_READ: dict[str, Any] = {"tool": SKILL_TOOL, "decision": "allow", "rule": None, "duration_ms": 0, "outcome": "ok"}


class GatewayEvents:
    """The event sink a gateway's context is built with: tool decisions for the audit, changes to announce."""

    def __init__(self) -> None:
        self.decisions: dict[str, ToolCallDecided] = {}
        self.finished: dict[str, ToolCallFinished] = {}
        """Each gateway call's end as the registry timed it: its run and, apart, the wait for an approval."""
        self.changed = anyio.Event()
        self.relay = Relay()
        self.subagent_calls: Callable[[SubagentEvent], None] = lambda event: None
        self.audit: AuditLog | None = None
        """Where a sandbox's refused connection is written (the gateway's audit, once it has one)."""

    def emit(self, event: Event) -> None:
        self.relay.feed(event)
        if isinstance(event, SubagentEvent):
            self.subagent_calls(event)
        elif isinstance(event, EgressRefused) and self.audit is not None:  # a sandbox's connection, refused
            refused = {"host": event.host, "port": event.port, "reason": event.reason}
            self.audit.write(AuditRecord(**_EGRESS_AUDIT, arguments=refused, rule=_EGRESS_RULE, duration_ms=0))
        elif isinstance(event, ToolCallDecided) and event.call_id.startswith("gw-"):
            self.decisions[event.call_id] = event  # the last one wins: an answered ask follows the ask
        elif isinstance(event, ToolCallFinished) and event.call_id.startswith("gw-"):
            self.finished[event.call_id] = event
        elif isinstance(event, ToolsChanged):  # emitted in the event loop's thread, where anyio.Event may be set
            self.changed.set()


class _GatewayServer(Server[Any]):
    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # the streamable HTTP manager asks without options: the gateway always announces list changes
        changes = notification_options or NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        return super().create_initialization_options(changes, experimental_capabilities, extensions)


class Gateway:
    def __init__(
        self,
        context: ExtensionContext,
        events: GatewayEvents,
        options: GatewayOptions | None = None,
        *,
        team: Team | None = None,
    ) -> None:
        self.context = context
        self.team = team
        """The store, replica id and telemetry this gateway shares with its replicas."""
        self.events = events
        self.options = options or GatewayOptions()
        from kairox.config import SecretScrubber

        self.audit = AuditLog(
            self.options.audit_path or context.resolved.home / "logs" / "gateway.jsonl",
            scrub=SecretScrubber.for_config(context.resolved).scrub,
        )
        events.audit = self.audit
        self.diagnostics: list[Diagnostic] = []
        self._clients: OrderedDict[str, _Client] = OrderedDict()
        self._call_ids = itertools.count(1)
        self._in_flight = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._reported: set[tuple[str, str]] = set()
        self.closing = False
        """Set on SIGTERM: calls in flight finish, new ones are refused."""
        self._child_calls: dict[tuple[str, str], Any] = {}
        events.subagent_calls = self._audit_subagent
        self.held = held_back(context)
        """What an untrusted workspace keeps from being served: said at start, in the instructions, on a call."""
        instructions = "\n\n".join(
            part for part in (context.prompt_context, "" if self.held.empty else self.held.notice()) if part
        )
        self._search_index = ServedIndex()
        self._pending: dict[str, Pending] = {}
        """Questions asked during a 2026 round, by call id, until the round ends in input_required."""
        self.changes = InMemorySubscriptionBus()
        """List changes for the subscriptions/listen streams of 2026-revision clients."""
        with warnings.catch_warnings():  # logging is deprecated in the 2026 revision, still served to 2025 clients
            warnings.simplefilter("ignore")
            self.server = _GatewayServer(
                self.options.name,
                version=kairox.__version__,
                instructions=instructions or None,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_list_prompts=self._list_prompts,
                on_get_prompt=self._get_prompt,
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_resource_templates,
                on_read_resource=self._read_resource,
                on_subscribe_resource=self._subscription,
                on_unsubscribe_resource=self._subscription,
                on_completion=self._complete,
                on_set_logging_level=self._set_logging_level,
                on_subscriptions_listen=ListenHandler(self.changes),
            )
        self.server.extensions[SKILLS_EXTENSION] = {"directoryRead": True}
        add, by_uri = self.server.add_request_handler, types.ReadResourceRequestParams
        add("skills/list", types.PaginatedRequestParams, self._list_skills)
        add("skills/get", by_uri, self._get_skill)
        add("resources/directory/read", by_uri, self._read_directory)
        # a 2026 client echoes requestState back: sealed here, verified on the way in (bound to the request)
        self.server.middleware.append(
            RequestStateBoundary(
                RequestStateSecurity(keys=[team.request_state_key]) if team else RequestStateSecurity.ephemeral(),
                default_audience=self.options.name,
            )
        )

    # --- what is served ----------------------------------------------------------------------------------

    def served(self) -> dict[str, ToolSpec]:
        """Wire name -> tool, for every visible tool that passes ``--expose`` / ``--hide``, each name short
        enough that the host's own name for it (``mcp__kairox__<name>``) fits the hosts' 64 characters."""
        registry = self.context.registry
        names = host_names(registry.wire_names(), budget=HOST_NAME_LIMIT - len(host_prefix(self.options.name)))
        out: dict[str, ToolSpec] = {}
        for spec in registry.visible_tools():
            wire = names[spec.name]
            if not selected((spec.name, wire), self.options.expose, self.options.hide):
                continue
            if wire != wire_name(spec.name) and (spec.name, wire) not in self._reported:
                self._reported.add((spec.name, wire))
                self.diagnostics.append(renamed_diagnostic(spec.name, wire, "kairox serve"))
            out[wire] = spec
        return out

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        _, client = self._client(ctx)
        served = self.served()
        if self.options.search:
            added = [tool_to_mcp(served[wire], wire) for wire in sorted(client.added) if wire in served]
            return types.ListToolsResult(tools=[*meta_tools(), *added])
        return types.ListToolsResult(tools=[tool_to_mcp(spec, wire) for wire, spec in served.items()])

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self._client(ctx)
        if SKILL_TOOL not in {s.name for s in self.served().values()}:
            return types.ListPromptsResult(prompts=[])
        return types.ListPromptsResult(prompts=[prompt_to_mcp(skill) for skill in self.context.skills.offered()])

    def _policy(self, ctx: ServerRequestContext[Any, Any]) -> PolicyEngine | None:
        """The gate of this request's user: the policy and their ``[gateway.rules]``; None when they have none."""
        registry, rules = self.context.registry, self.context.resolved.config.gateway.rules
        return self.team.policy(ctx, registry.policy.settings, rules) if self.team and rules else None

    def _served_skills(self, ctx: ServerRequestContext[Any, Any]) -> dict[str, tuple[SkillDef, dict[str, Any]]]:
        """Name -> (skill, frontmatter) of the skills served as prompts that the gate lets load without asking."""
        if SKILL_TOOL not in {s.name for s in self.served().values()}:
            return {}
        out, policy = {}, self._policy(ctx)
        for skill in self.context.skills.offered():
            decision = self.context.registry.check(SKILL_TOOL, {"name": skill.qualified_name}, policy=policy)
            if decision.verdict is Verdict.ALLOW and (frontmatter := served_frontmatter(skill)) is not None:
                out[skill.qualified_name] = (skill, frontmatter)
        return out

    def _skill_at(self, ctx: ServerRequestContext[Any, Any], uri: str) -> tuple[SkillDef, str, dict[str, Any]]:
        skills = self._served_skills(ctx)
        found = locate([skill for skill, _ in skills.values()], uri)
        if found is None:
            raise MCPError(INVALID_PARAMS, f"no skill is served at {uri!r}; skills/list shows the skills", {"uri": uri})
        return found[0], found[1], skills[found[0].qualified_name][1]

    async def _list_skills(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        self._client(ctx)
        skills = [skill_entry(skill, frontmatter) for skill, frontmatter in self._served_skills(ctx).values()]
        return {"skills": skills, "ttlMs": 0, "cacheScope": "private"}

    async def _get_skill(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> dict[str, Any]:
        skill, path, frontmatter = self._skill_at(ctx, str(params.uri))
        if path != SKILL_FILE:
            raise MCPError(INVALID_PARAMS, f"{params.uri} is not a skill's SKILL.md", {"uri": str(params.uri)})
        return {"skill": skill_entry(skill, frontmatter), "ttlMs": 0, "cacheScope": "private"}

    async def _read_directory(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> dict[str, Any]:
        skill, path, _ = self._skill_at(ctx, str(params.uri).rstrip("/"))
        children = directory_children(skill, path)
        if children is None:
            raise MCPError(INVALID_PARAMS, f"{params.uri} is not a folder of a skill", {"uri": str(params.uri)})
        return {"resources": children}

    def _upstream_resources(self, *, templates: bool) -> list[dict[str, Any]]:
        """The fields of the served upstream resources (or resource templates), under namespaced URIs."""
        served = {spec.name for spec in self.served().values()}
        return [
            {
                "uri_template" if templates else "uri": resource_uri(server, r.uri),
                "name": f"{server}/{r.name}",
                "description": r.description,
                "mime_type": r.mime_type,
            }
            for server, r in self.context.mcp_resources()
            if r.template == templates and mcp_tool_name(server, "read_resource") in served
        ]

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._client(ctx)
        return types.ListResourcesResult(
            resources=[types.Resource(**fields) for fields in self._upstream_resources(templates=False)]
            + [skill_manifest(skill, frontmatter) for skill, frontmatter in self._served_skills(ctx).values()]
        )

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self._client(ctx)
        return types.ListResourceTemplatesResult(
            resource_templates=[types.ResourceTemplate(**fields) for fields in self._upstream_resources(templates=True)]
        )

    async def _subscription(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams | types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        # accepted, and nothing kept: an upstream's resources/updated is not relayed yet
        self._client(ctx)
        return types.EmptyResult()

    async def _complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Values for a skill prompt's argument (its default; true/false for a boolean) that start with what was
        typed; nothing for other prompts and for resource templates."""
        self._client(ctx)
        values: list[str] = []
        ref = params.ref
        entry = self.context.skills.get(ref.name) if isinstance(ref, types.PromptReference) else None
        if entry is not None and entry.offered:
            for argument in entry.skill.arguments:
                if argument.name == params.argument.name:
                    values = prompt_argument_values(argument, params.argument.value)
        return types.CompleteResult(
            completion=types.Completion(values=values[:100], total=len(values), has_more=len(values) > 100)
        )

    async def _set_logging_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self._client(ctx)
        self.events.relay.set_level(ctx.session, str(params.level))
        return types.EmptyResult()

    # --- calls -------------------------------------------------------------------------------------------

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        key = (ctx.meta or {}).get(CALL_ID_KEY)
        if self.team is not None and isinstance(key, str) and key:
            return await self.team.once(user_of(ctx), key, lambda: self._call_tool_once(ctx, params))
        return await self._call_tool_once(ctx, params)

    async def _call_tool_once(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if self.options.search and params.name in META_TOOLS:
            return await self._search_call(ctx, params.name, dict(params.arguments or {}))
        spec = self.served().get(params.name)
        if spec is None:
            held = self.held.tool_message(params.name)
            if held is not None:  # a tool of a server the workspace's trust holds back: say why and what to run
                return types.CallToolResult(content=[types.TextContent(text=held)], is_error=True)
            finder = f"{SEARCH_TOOL} finds the served tools" if self.options.search else "tools/list shows the tools"
            raise MCPError(INVALID_PARAMS, f"no tool named {params.name!r} is served here; {finder}")
        arguments = dict(params.arguments or {})
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        answer = given_answer.set(answer_of(ctx, params) if modern else None)
        call_id = f"gw-{next(self._call_ids)}"
        try:
            result = await self._gated(ctx, spec.name, arguments, call_id=call_id)
        finally:
            given_answer.reset(answer)
        pending = self._pending.pop(call_id, None)
        if pending is not None and result.is_error and "decision" in result.meta:
            return input_required(pending, params.name, arguments)  # nothing ran: the retry brings the answer
        return result_to_mcp(result, spec)

    async def _search_call(
        self, ctx: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        """``kairox_search_tools`` and the add/remove pair: Kairox's own, not the registry's; audited as such."""
        client_key, client = self._client(ctx)
        started = time.perf_counter()
        served = self.served()
        result: types.CallToolResult
        changed = False
        if name == SEARCH_TOOL:
            query = arguments.get("query")
            limit = arguments.get("limit", 5)
            limit = max(1, min(MAX_RESULTS, limit if isinstance(limit, int) and not isinstance(limit, bool) else 5))
            if not isinstance(query, str) or not query.strip():
                result = error_result(f"{SEARCH_TOOL} needs a `query`: a few words saying what the tool should do")
            else:
                found = [
                    {
                        "name": wire,
                        "description": match.spec.description,
                        "matched": match.why(),
                        "score": round(match.score, 4),
                        "input_schema": tool_to_mcp(match.spec, wire).input_schema,
                        "added": wire in client.added,
                    }
                    for wire, match in self._search_index.search(served, query, limit)
                ]
                result = text_result({"query": query, "tools": found})
        else:
            names = names_argument(arguments, name)
            missing = unknown_names(names, served) if isinstance(names, list) else []
            if isinstance(names, str):
                result = error_result(names)
            elif missing:
                result = error_result(
                    f"no tool named {', '.join(map(repr, missing))} is "
                    f"served here; {SEARCH_TOOL} finds the served tools"
                )
            else:
                before = set(client.added)
                if name == ADD_TOOL:
                    client.added.update(names)
                else:
                    client.added.difference_update(names)
                changed = client.added != before
                result = text_result({"listed": sorted(client.added), "changed": changed})
        await self._audit(
            ctx,
            AuditRecord(
                client=client.name,
                session=client_key,
                tool=name,
                arguments=event_arguments(arguments),
                decision="allow",
                rule=None,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                outcome="error" if result.is_error else "ok",
            ),
        )
        if changed:
            await self._tell_list_changed(ctx, client)
        return result

    async def _tell_list_changed(self, ctx: ServerRequestContext[Any, Any], client: _Client) -> None:
        """This session's tool list changed (an add or remove): tell it, as an upstream change is told."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self.changes.publish(ToolsListChanged())
            return
        try:
            with anyio.fail_after(5):
                await ctx.session.send_tool_list_changed()
        except Exception:  # the client's standalone channel is gone; its next tools/list still shows the change
            client.session = None

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        entry = self.context.skills.get(params.name)
        if entry is None or not entry.offered or SKILL_TOOL not in {s.name for s in self.served().values()}:
            held = (
                f" {self.held.notice()}" if entry is not None and entry.skill.qualified_name in self.held.skills else ""
            )
            raise MCPError(
                INVALID_PARAMS,
                f"no prompt named {params.name!r}; prompts/list shows the skills served as prompts.{held}",
            )
        arguments = {"name": entry.skill.qualified_name, "arguments": prompt_arguments(entry.skill, params.arguments)}
        result = await self._gated(ctx, SKILL_TOOL, arguments)
        if result.is_error:
            raise MCPError(INVALID_PARAMS, result.text_content())
        return types.GetPromptResult(
            description=entry.skill.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=result.text_content()))],
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri.startswith(SKILL_SCHEME):
            skill, path, _ = self._skill_at(ctx, uri)
            if path not in [SKILL_FILE, *bundled_files(skill)]:
                raise MCPError(INVALID_PARAMS, f"{uri} is not a file of skill {skill.qualified_name!r}", {"uri": uri})
            client_key, client = self._client(ctx)
            read = {"name": skill.qualified_name, "uri": uri}
            await self._audit(ctx, AuditRecord(**_SKILL_READ, client=client.name, session=client_key, arguments=read))
            return types.ReadResourceResult(contents=[file_contents(skill, path, uri)])
        parts = split_resource_uri(uri)
        tool = mcp_tool_name(parts[0], "read_resource") if parts else None
        if parts is None or tool is None or tool not in {s.name for s in self.served().values()}:
            raise MCPError(
                INVALID_PARAMS, f"no resource {uri!r} is served here; resources/list shows the resources", {"uri": uri}
            )
        result = await self._gated(ctx, tool, {"uri": parts[1]})
        if result.is_error:
            raise MCPError(INVALID_PARAMS, result.text_content())
        return types.ReadResourceResult(contents=resource_contents(result, uri))

    async def _gated(
        self, ctx: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any], *, call_id: str | None = None
    ) -> ToolResult:
        """One call through the registry exactly as an agent's call, with this client's grants; audited."""
        client_key, client = self._client(ctx)
        if self.closing:
            return ToolResult.error(
                f"{name} was not run: kairox serve is stopping; call it again once the server is back"
            )
        call_id = call_id or f"gw-{next(self._call_ids)}"
        self._in_flight += 1
        if self._in_flight == 1:
            self._idle = anyio.Event()
        token = current_request.set(ctx)
        login = CALLER_LOGIN.set(self.team.login_of(ctx) if self.team else None)  # a person's own upstream logins
        self.events.relay.follow(call_id, ctx.session, ctx.meta, ctx.request_id)
        started = time.perf_counter()
        try:
            result = await self.context.registry.call(
                ToolCall(name=name, arguments=arguments, call_id=call_id),
                approvals=client.approvals,
                policy=self._policy(ctx),
            )
        finally:
            self.events.relay.forget(call_id)
            current_request.reset(token)
            CALLER_LOGIN.reset(login)
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()
        finished = self.events.finished.pop(call_id, None)
        # the registry's figures keep a person's time to answer apart from the call's own
        duration = finished.duration_ms if finished is not None else round((time.perf_counter() - started) * 1000, 3)
        decided = self.events.decisions.pop(call_id, None)
        asked = client.approver.outcomes.pop(call_id, None)
        decision = (
            decided.decision
            if decided is not None
            else ("deny" if result.is_error and "decision" in result.meta else "allow")
        )
        if asked is not None:
            decision = "approved" if asked.approved else asked.how
        if call_id in self._pending:
            decision = "input_required"  # asked of a 2026 client in the result; its retry is audited on its own
        refused = "decision" in result.meta
        await self._audit(
            ctx,
            AuditRecord(
                client=client.name,
                session=client_key,
                tool=name,
                arguments=event_arguments(arguments),
                decision=decision,
                rule=_rule_named(decided),
                duration_ms=duration,
                approval_wait_ms=finished.approval_wait_ms if finished is not None else 0.0,
                outcome="refused" if refused else ("error" if result.is_error else "ok"),
            ),
        )
        return result

    async def _audit(self, ctx: ServerRequestContext[Any, Any], record: AuditRecord) -> None:
        """The call's line in the JSON-lines log, and its row in the store (with the user and the replica)."""
        record = dataclasses.replace(record, user=user_of(ctx), replica=self.team.replica if self.team else None)
        self.audit.write(record)
        if self.team is not None:  # the store keeps what the log keeps: the configuration's secrets replaced
            spec = self.context.registry.get(record.tool)
            scrub = self.audit.scrub
            kept = record if scrub is None else dataclasses.replace(record, arguments=scrub(record.arguments))
            await self.team.audit(kept, server=spec.origin if spec is not None else None)

    def _audit_subagent(self, event: SubagentEvent) -> None:
        """A call of a served ``task``'s subagent, audited with the agent named and the decision it got."""
        inner, ctx = event.inner, current_request.get(None)
        key = (event.agent_id, str(getattr(inner, "call_id", "")))
        if isinstance(inner, ToolCallRequested | ToolCallDecided):
            self._child_calls.setdefault(key, {}).update({type(inner).__name__: inner})
        elif isinstance(inner, ToolCallFinished):
            seen = self._child_calls.pop(key, {})
            asked, decided = seen.get("ToolCallRequested"), seen.get("ToolCallDecided")
            self.audit.write(  # the JSON-lines log; the team store's audit is written by the calls' own awaits
                AuditRecord(
                    client=self._client(ctx)[1].name if ctx is not None else "unknown",
                    user=user_of(ctx) if ctx is not None else None,
                    replica=self.team.replica if self.team else None,
                    tool=inner.tool,
                    arguments=asked.arguments if asked else {},
                    decision=decided.decision if decided else "allow",
                    rule=decided.rule if decided else None,
                    duration_ms=inner.duration_ms,
                    approval_wait_ms=inner.approval_wait_ms,
                    outcome="error" if inner.is_error else "ok",
                    agent=event.agent,
                )
            )

    # --- client sessions ---------------------------------------------------------------------------------

    def _client(self, ctx: ServerRequestContext[Any, Any]) -> tuple[str | None, _Client]:
        """This request's client session: its grants and approver, kept per session id (stdio has one)."""
        key = _session_key(ctx)
        params = ctx.session.client_params
        name = params.client_info.name if params is not None and params.client_info is not None else "unknown"
        client = self._clients.get(key) if key is not None else None
        if client is None:
            approver = ElicitingApprover(name, ask=self.team.elicit if self.team else None)
            rounds = RoundTripApprover(approver, self._pending)
            client = _Client(
                name=name, approver=approver, rounds=rounds, approvals=self.context.registry.session_approvals(rounds)
            )
            if key is not None:  # a stateless request has no session: its grants end with it
                self._clients[key] = client
                while len(self._clients) > MAX_TRACKED_SESSIONS:
                    self._clients.popitem(last=False)
        elif key is not None:
            self._clients.move_to_end(key)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            client.session = ctx.session
        return key, client

    async def announce_changes(self) -> None:
        """Forward list changes (an upstream's list_changed, a restart, skills rescanned) to every client; runs
        until cancelled. A burst of changes becomes one notification per kind."""
        while True:
            await self.events.changed.wait()
            self.events.changed = anyio.Event()
            await anyio.sleep(0.05)
            # 2026-revision clients hear of changes on their subscriptions/listen streams
            for change in (ToolsListChanged(), PromptsListChanged(), ResourcesListChanged()):
                await self.changes.publish(change)
            for key, client in list(self._clients.items()):
                if client.session is None:
                    continue
                try:
                    with anyio.fail_after(5):
                        await client.session.send_tool_list_changed()
                        await client.session.send_prompt_list_changed()
                        await client.session.send_resource_list_changed()
                except Exception:  # the client is gone: forget it (stdio's one client keeps its grants)
                    client.session = None
                    if key != "stdio":
                        self._clients.pop(key, None)

    async def drain(self, timeout_sec: float) -> bool:
        """Wait for the calls in flight to finish; False when some were still running after ``timeout_sec``."""
        with anyio.move_on_after(timeout_sec):
            await self._idle.wait()
            return True
        return False

    @property
    def in_flight(self) -> int:
        return self._in_flight


def _session_key(ctx: ServerRequestContext[Any, Any]) -> str | None:
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return "stdio"
    session_id = headers.get("mcp-session-id")
    return str(session_id) if session_id else None


def _rule_named(decided: ToolCallDecided | None) -> str | None:
    """The rule of a call's audit row; a user's or group's (``[gateway.rules]``) names whose it is."""
    if decided is None or decided.rule is None:
        return None
    layer = decided.layer or ""
    return f"{decided.rule} ({layer})" if layer.startswith("gateway.rules.") else decided.rule
