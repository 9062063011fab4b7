"""``kairox proxy``: one upstream MCP server behind the gate, served under its own names and shapes.

The upstream starts as a configured server would (confined under its profile, or its URL with its OAuth tokens);
every request of the host is forwarded to it as it came, and every answer comes back as the upstream gave it, sieved
to the era the host speaks. What differs is the gate: a ``tools/call`` runs through the registry (hooks, policy,
approval) as ``mcp__NAME__tool``, an ask becomes a question to the host (elicitation, or an ``input_required``
result in the 2026 era), and every call is a line in the audit log.

Between eras: a 2026 upstream's ``input_required`` rounds are answered over a handshake host's back-channel; a
handshake upstream's questions (sampling, elicitation, roots) go to the host request in flight; list changes and
resource updates reach handshake hosts as notifications and 2026 hosts on their ``subscriptions/listen`` streams.
"""

import contextlib
import contextvars
import dataclasses
import itertools
import json
import math
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.server.caching import CACHEABLE_METHODS, CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.subscriptions import ServerEvent, event_from_wire, event_to_notification
from mcp_types.methods import is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

import kairox
from kairox._util._json import JsonObject
from kairox._util._names import mcp_tool_name
from kairox.config import McpServerConfig, ResolvedConfig
from kairox.errors import McpStartupError
from kairox.events import EventSink
from kairox.gateway._approver import ONCE
from kairox.gateway._rounds import ANSWER_KEY, call_digest, given_answer, input_required
from kairox.gateway._serve import GatewayConfigError, HttpOptions, _report, open_gateway, run_http, run_stdio
from kairox.gateway._server import Gateway, GatewayOptions, _session_key
from kairox.mcp import ConfiguredServer, configured_servers, open_server_transport, permission_for
from kairox.mcp._content import annotations_from_wire
from kairox.mcp._session import INPUT_ROUNDS, every_page
from kairox.runtime import RuntimeOptions
from kairox.sandbox import resolved_profile
from kairox.tools import CallContext, ToolProvider, ToolResult, ToolSource, ToolSpec

WHO = "kairox proxy"
RESERVED = "io.modelcontextprotocol/"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
ROUND_METHODS = ("tools/call", "prompts/get", "resources/read")
EXTENSION_METHODS = {
    "io.modelcontextprotocol/skills": ("skills/list", "skills/get", "resources/directory/read"),
    "io.modelcontextprotocol/tasks": ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"),
}
Forward = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
_forward: contextvars.ContextVar[Forward | None] = contextvars.ContextVar("kairox_proxy_forward", default=None)
"""The upstream call of the tools/call the gate is passing, run by the provider once the gate lets it through."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ProxyTarget:
    """What to proxy: a command (stdio), a URL, or neither (the configured ``[mcp_servers.NAME]`` as it is)."""

    name: str
    command: Sequence[str] = ()
    url: str | None = None


def proxied_server(resolved: ResolvedConfig, target: ProxyTarget) -> ConfiguredServer:
    """The upstream as a configured server of the user's own: the entry ``[mcp_servers.NAME]`` of the configuration
    with the command line's command or URL in place of its own (its env, timeouts and sandbox keys kept)."""
    known, _ = configured_servers(resolved)
    entry = known.get(target.name)
    if not target.command and target.url is None:
        if entry is None:
            raise McpStartupError(target.name, "there is no [mcp_servers] entry of that name and no command to run")
        if entry.pending_trust:
            raise McpStartupError(target.name, f"{entry.where} is not trusted yet; run `kairox trust` to start it")
        return entry
    update: dict[str, Any] = (
        {"url": target.url} if target.url is not None else {"command": target.command[0], "args": target.command[1:]}
    )
    base = entry.config.model_dump(exclude_unset=True) if entry is not None and not entry.pending_trust else {}
    base = {k: v for k, v in base.items() if k not in ("command", "args", "url", "type")}
    config = McpServerConfig.model_validate({**base, **update})
    where = "kairox proxy"
    profile = resolved_profile(
        resolved, "mcp_servers", target.name, config, layer="cli", where=where, base_dir=resolved.workspace
    )
    return ConfiguredServer(
        name=target.name,
        config=config,
        layer="cli",
        where=where,
        pending_trust=False,
        base_dir=resolved.workspace,
        profile=profile if config.transport == "stdio" else None,
    )


class UpstreamTools(ToolProvider):
    """The upstream's tools in the registry as ``mcp__NAME__tool``; a call runs the forward of the request the gate
    is passing and keeps the upstream's whole answer for the proxy to return as it came."""

    def __init__(self, server: ConfiguredServer) -> None:
        super().__init__()
        self.origin = server.name
        self.config = server.config
        self.upstream_names: dict[str, str] = {}
        """Registry name -> the upstream's own name."""
        self.registry_names: dict[str, str] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.errors: dict[str, MCPError] = {}
        self._specs: list[ToolSpec] = []

    async def list_tools(self) -> Sequence[ToolSpec]:
        return self._specs

    async def replace(self, tools: Sequence[Mapping[str, Any]]) -> None:
        trusted = self.config.trust_annotations
        specs: list[ToolSpec] = []
        for tool in tools:
            annotations = annotations_from_wire(tool.get("annotations") or {})
            name = mcp_tool_name(self.origin, str(tool["name"]))
            specs.append(
                ToolSpec(
                    name=name,
                    description=str(tool.get("description") or ""),
                    input_schema=dict(tool.get("inputSchema") or {"type": "object"}),
                    source=ToolSource.MCP,
                    permission=permission_for(annotations, trusted=trusted),
                    origin=self.origin,
                    output_schema=tool.get("outputSchema"),
                    annotations=annotations,
                    annotations_trusted=trusted,
                    timeout_sec=self.config.tool_timeout_sec,
                    meta={"mcp_server": self.origin, "mcp_tool": tool["name"]},
                )
            )
        self._specs = specs
        self.upstream_names = {spec.name: str(spec.meta["mcp_tool"]) for spec in specs}
        self.registry_names = {upstream: name for name, upstream in self.upstream_names.items()}
        await self._tools_changed(specs)

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        forward = _forward.get()
        if forward is None:  # called from elsewhere than the proxy's own request (nothing to forward)
            return ToolResult.error(f"{name} is served by kairox proxy only to its host")
        try:
            raw = await forward(dict(arguments))
        except MCPError as exc:  # the upstream's protocol error goes back to the host as it came
            self.errors[context.call_id] = exc
            return ToolResult.error(f"{name}: {exc.error.message}")
        self.results[context.call_id] = raw
        text = "\n".join(str(b.get("text", "")) for b in raw.get("content") or () if isinstance(b, dict))
        return ToolResult(
            content=ToolResult.text(text).content,
            structured=raw.get("structuredContent"),
            is_error=bool(raw.get("isError")),
        )


class _ProxyServer(Server[Any]):
    """An SDK server whose capabilities and identity are the upstream's."""

    upstream: types.ServerCapabilities = types.ServerCapabilities()

    def get_capabilities(self, *args: Any, **kwargs: Any) -> types.ServerCapabilities:
        return self.upstream

    def create_initialization_options(self, *args: Any, **kwargs: Any) -> InitializationOptions:
        return InitializationOptions(
            server_name=self.name,
            server_version=self.version,
            title=self.title,
            description=self.description,
            capabilities=self.upstream,
            instructions=self.instructions,
            website_url=self.website_url,
            icons=self.icons,
        )


class Proxy:
    """The host-facing server over one connected upstream ``Client``."""

    def __init__(self, gateway: Gateway, server: ConfiguredServer) -> None:
        self.gateway = gateway
        self.name = server.name
        self.tools = UpstreamTools(server)
        self.client: Client | None = None
        self.changes = InMemorySubscriptionBus()
        self.hosts: dict[str, ServerSession] = {}
        """Handshake-era host sessions by session key: list changes and stray logs go to their standalone stream."""
        self.levels: dict[str, str] = {}
        self.watched: set[str] = set()
        """Resource URIs hosts subscribed to (a 2026 upstream is listened to for them)."""
        self.relisten = anyio.Event()
        self.in_flight: list[ServerRequestContext[Any, Any]] = []
        self._ids = itertools.count(1)
        self.server = _ProxyServer(self.name)

    # --- start -----------------------------------------------------------------------------------------------

    async def start(self, client: Client) -> None:
        self.client = client
        caps = client.server_capabilities
        info = client.server_info
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = _ProxyServer(
                info.name if info is not None else self.name,
                version=info.version if info is not None else "",
                title=info.title if info is not None else None,
                instructions=client.instructions,
                icons=info.icons if info is not None else None,
                # a 2026 host needs freshness hints on lists a handshake upstream gives none: stale at once
                cache_hints=dict.fromkeys(cast(Any, CACHEABLE_METHODS), CacheHint()),
            )
        server.upstream = caps
        methods: list[str] = []
        if caps.tools is not None:
            methods.append("tools/list")
            server.add_request_handler("tools/call", types.RequestParams, self._call_tool)
        if caps.resources is not None:
            methods += ["resources/list", "resources/templates/list", "resources/read"]
            if caps.resources.subscribe:
                server.add_request_handler("resources/subscribe", types.RequestParams, self._subscribe)
                server.add_request_handler("resources/unsubscribe", types.RequestParams, self._subscribe)
        if caps.prompts is not None:
            methods += ["prompts/list", "prompts/get"]
        if caps.completions is not None:
            methods.append("completion/complete")
        if caps.logging is not None:
            server.add_request_handler("logging/setLevel", types.RequestParams, self._set_level)
        for extension, extra in EXTENSION_METHODS.items():
            if extension in (caps.extensions or {}):
                methods += extra
        for method in methods:
            server.add_request_handler(method, types.RequestParams, self._forward_request)
        server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, self._listen)
        server.add_notification_handler("notifications/roots/list_changed", types.NotificationParams, self._roots)
        # outermost: a host's requestState is verified and opened before anything reads it, sealed on the way out
        server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=self.name))
        self.server = server
        if caps.tools is not None:
            await self.gateway.context.registry.add_provider(self.tools)
            await self.refresh_tools()

    async def refresh_tools(self) -> None:
        async def page(cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
            raw = await self.send("tools/list", {"cursor": cursor} if cursor else {})
            return raw.get("tools") or [], raw.get("nextCursor") or None

        tools = await every_page(page)
        await self.tools.replace(tools)

    # --- to the upstream -------------------------------------------------------------------------------------

    @property
    def modern_upstream(self) -> bool:
        assert self.client is not None
        return self.client.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        ctx: ServerRequestContext[Any, Any] | None = None,
        *,
        on_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """One request to the upstream, the host's own params as they came (its era's reserved ``_meta`` replaced
        by the upstream connection's, with the host's capabilities and client info in a 2026 one)."""
        assert self.client is not None
        session = self.client.session
        data: dict[str, Any] = {"method": method, "params": _strip(params, keep_level=self.modern_upstream)}
        if ctx is not None and self.modern_upstream:
            meta = data["params"].setdefault("_meta", {})
            key = _session_key(ctx)
            if key is not None and key in self.levels:
                meta.setdefault(LOG_LEVEL, self.levels[key])
            elif ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                meta.setdefault(LOG_LEVEL, "debug")  # handshake hosts hear every log, as they would directly
        opts: Any = {}
        # the same stamp and dispatcher the SDK's typed requests use, without the round trip through its models
        session._stamp(data, opts)
        if ctx is not None and self.modern_upstream:
            meta = data["params"]["_meta"]
            caps = ctx.session.client_capabilities
            meta[CAPABILITIES] = caps.model_dump(by_alias=True, mode="json", exclude_none=True) if caps else {}
            params_of = ctx.session.client_params
            if params_of is not None and params_of.client_info is not None:
                meta[CLIENT_INFO] = params_of.client_info.model_dump(by_alias=True, mode="json", exclude_none=True)
        if on_progress is not None:
            opts["on_progress"] = on_progress
        raw: dict[str, Any] = await session._dispatcher.send_raw_request(method, data.get("params"), opts)
        return raw

    async def ask_upstream(
        self, ctx: ServerRequestContext[Any, Any], method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """A request of the host forwarded, with its progress relayed; a 2026 upstream's ``input_required``
        rounds answered over a handshake host's back-channel, passed on to a 2026 host as they are."""
        token = ctx.meta.get("progress_token") if ctx.meta else None

        async def progress(value: float, total: float | None, message: str | None) -> None:
            assert token is not None
            with contextlib.suppress(Exception):
                await ctx.session.send_progress_notification(
                    token, value, total, message, related_request_id=str(ctx.request_id)
                )

        relay = progress if token is not None else None
        self.in_flight.append(ctx)
        try:
            raw = await self.send(method, params, ctx, on_progress=relay)
            if not is_input_required(raw) or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                return raw

            # a 2026 upstream's rounds for a handshake host: each question asked over its back-channel, one after the
            # other, and the request sent again with the answers and the upstream's state
            pause = 0.05
            for _ in range(INPUT_ROUNDS):
                if not is_input_required(raw):
                    return raw
                asked = types.InputRequiredResult.model_validate(raw)
                answered = {**params, "requestState": asked.request_state}
                if asked.input_requests:
                    answers = {key: await self.to_host(item, ctx) for key, item in asked.input_requests.items()}
                    answered["inputResponses"] = {
                        key: answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                        for key, answer in answers.items()
                    }
                else:  # only state: the upstream is still working on it
                    await anyio.sleep(pause)
                    pause = min(pause * 2, 0.25)
                raw = await self.send(method, answered, ctx, on_progress=relay)
            raise MCPError(types.INTERNAL_ERROR, f"the upstream asked for input more than {INPUT_ROUNDS} times")
        finally:
            self.in_flight.remove(ctx)

    # --- from the upstream to the host -----------------------------------------------------------------------

    def _asking_host(self) -> ServerRequestContext[Any, Any] | None:
        """The host request a question of the upstream belongs to: the latest in flight that can carry one."""
        carrying = [ctx for ctx in self.in_flight if ctx.session.can_send_request]
        return carrying[-1] if carrying else None

    async def to_host(self, request: types.InputRequest, ctx: ServerRequestContext[Any, Any] | None = None) -> Any:
        ctx = ctx or self._asking_host()
        result_type: Any = {
            "sampling/createMessage": types.CreateMessageResult,
            "elicitation/create": types.ElicitResult,
            "roots/list": types.ListRootsResult,
        }[request.method]
        if ctx is None or not ctx.session.can_send_request:
            if request.method == "roots/list":
                session = next(reversed(self.hosts.values()), None)
                if session is not None:
                    with contextlib.suppress(Exception):
                        return await session.send_request(request, result_type)  # type: ignore[arg-type]
                return types.ListRootsResult(roots=[])
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"kairox proxy: no request of the host can carry {request.method} to it now",
            )
        try:
            return await ctx.session.send_request(
                request,  # type: ignore[arg-type]
                result_type,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
        except MCPError as exc:
            return exc.error

    async def on_sampling(self, context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
        return await self.to_host(types.CreateMessageRequest(params=params))

    async def on_elicitation(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> Any:
        return await self.to_host(types.ElicitRequest(params=params))

    async def on_roots(self, context: ClientRequestContext) -> Any:
        return await self.to_host(types.ListRootsRequest(params=None))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        ctx = self.in_flight[-1] if self.in_flight else None
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")
            if ctx is not None:
                await ctx.session.send_log_message(
                    params.level, params.data, params.logger, related_request_id=ctx.request_id
                )
                return
            for session in list(self.hosts.values()):
                await session.send_log_message(params.level, params.data, params.logger)

    async def on_message(self, message: Any) -> None:
        """A handshake upstream's list changes and resource updates."""
        if isinstance(message, types.ServerNotification) or hasattr(message, "method"):
            data = message.model_dump(by_alias=True, mode="json", exclude_none=True)
            event = event_from_wire(data.get("method", ""), data.get("params"))
            if event is not None:
                await self.announce(event)

    async def announce(self, event: ServerEvent) -> None:
        if type(event).__name__ == "ToolsListChanged":
            with contextlib.suppress(Exception):
                await self.refresh_tools()
        await self.changes.publish(event)
        notification = event_to_notification(event, {})
        for key, session in list(self.hosts.items()):
            try:
                with anyio.fail_after(5):
                    await session.send_notification(notification)
            except Exception:  # the host is gone
                self.hosts.pop(key, None)

    async def listen_upstream(self) -> None:
        """A 2026 upstream's changes, on a ``subscriptions/listen`` stream opened again when hosts subscribe."""
        assert self.client is not None
        caps = self.client.server_capabilities
        flags = {
            "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
            "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
            "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
        }
        if not self.modern_upstream or not (any(flags.values()) or (caps.resources and caps.resources.subscribe)):
            return
        while True:
            self.relisten = anyio.Event()
            with contextlib.suppress(Exception):
                async with anyio.create_task_group() as tasks:

                    async def follow() -> None:
                        assert self.client is not None
                        async with self.client.listen(**flags, resource_subscriptions=sorted(self.watched)) as sub:
                            async for event in sub:
                                await self.announce(event)

                    tasks.start_soon(follow)
                    await self.relisten.wait()
                    tasks.cancel_scope.cancel()
            await anyio.sleep(1)  # a stream the upstream ended (or refused) is opened again, not at once

    # --- host requests ---------------------------------------------------------------------------------------

    def _host(self, ctx: ServerRequestContext[Any, Any]) -> None:
        key = _session_key(ctx)
        if key is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.hosts[key] = ctx.session

    async def _forward_request(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        self._host(ctx)
        given, state = _opened(ctx)
        raw = await self.ask_upstream(ctx, ctx.method, {**given, **_upstream_state(state)})
        return _sealed_round(ctx, raw, None)

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        self._host(ctx)
        given, state = _opened(ctx)
        name = str(given.get("name"))
        arguments = dict(given.get("arguments") or {})
        if name not in self.tools.registry_names:
            await self.refresh_tools()
        registry_name = self.tools.registry_names.get(name)
        if registry_name is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")
        digest = call_digest(name, arguments)
        responses = dict(given.get("inputResponses") or {})
        answer = responses.pop(ANSWER_KEY, None)
        if state.get("approved") == digest:  # this very call was let through in an earlier round
            answer = {"action": "accept", "content": {"decision": ONCE}}
        elif state.get("call") != digest:
            answer = None
        call_id = f"gw-{next(self._ids)}"

        async def forward(final_arguments: dict[str, Any]) -> dict[str, Any]:
            upstream = {k: v for k, v in given.items() if k not in ("inputResponses", "requestState")}
            upstream["arguments"] = final_arguments
            if responses:
                upstream["inputResponses"] = responses
            return await self.ask_upstream(ctx, "tools/call", {**upstream, **_upstream_state(state)})

        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        answered = given_answer.set(types.ElicitResult.model_validate(answer) if answer and modern else None)
        token = _forward.set(forward)
        try:
            result = await self.gateway._gated(ctx, registry_name, arguments, call_id=call_id)
        finally:
            _forward.reset(token)
            given_answer.reset(answered)
        raw = self.tools.results.pop(call_id, None)
        pending = self.gateway._pending.pop(call_id, None)
        failed = self.tools.errors.pop(call_id, None)
        if failed is not None:
            raise failed
        if raw is None:
            if pending is not None and modern and "decision" in result.meta:
                question = input_required(pending, name, arguments).model_dump(
                    by_alias=True, mode="json", exclude_none=True
                )
                return {**question, "requestState": json.dumps({"call": digest})}
            return _refused(result)
        if result.is_error and not raw.get("isError"):  # a post_tool_use hook blocked what came back
            return _refused(result)
        return _sealed_round(ctx, raw, digest)

    async def _subscribe(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        self._host(ctx)
        uri = str((ctx.params or {}).get("uri"))
        if ctx.method == "resources/subscribe":
            self.watched.add(uri)
        else:
            self.watched.discard(uri)
        self.relisten.set()
        if self.modern_upstream:
            return {}
        return await self.ask_upstream(ctx, ctx.method, dict(ctx.params or {}))

    async def _set_level(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        self._host(ctx)
        key = _session_key(ctx)
        if key is not None:
            self.levels[key] = str((ctx.params or {}).get("level"))
        if self.modern_upstream:
            return {}
        return await self.ask_upstream(ctx, ctx.method, dict(ctx.params or {}))

    async def _listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        wanted = set(params.notifications.resource_subscriptions or ()) if params.notifications else set()
        if not wanted <= self.watched:
            self.watched |= wanted
            self.relisten.set()
        return await ListenHandler(self.changes)(ctx, params)

    async def _roots(self, ctx: ServerRequestContext[Any, Any], params: Any) -> None:
        assert self.client is not None
        if not self.modern_upstream:
            with contextlib.suppress(Exception):
                await self.client.session.send_roots_list_changed()


def _refused(result: ToolResult) -> dict[str, Any]:
    refusal = types.CallToolResult(content=[types.TextContent(text=result.text_content())], is_error=True)
    return refusal.model_dump(by_alias=True, mode="json", exclude_none=True)


def _strip(params: Mapping[str, Any] | None, *, keep_level: bool) -> dict[str, Any]:
    """The host's params without its era's reserved ``_meta`` (the upstream connection stamps its own)."""
    out = dict(params or {})
    meta = out.pop("_meta", None)
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if not k.startswith(RESERVED) or (keep_level and k == LOG_LEVEL)}
        kept.pop("progressToken", None)  # progress is relayed under the host's token by the proxy itself
        if kept:
            out["_meta"] = kept
    return out


def _opened(ctx: ServerRequestContext[Any, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request's params, and the proxy's own state of an earlier round (verified and opened by the
    boundary: only what the proxy sealed gets this far)."""
    given = dict(ctx.params or {})
    text = given.pop("requestState", None)
    state: dict[str, Any] = {}
    if isinstance(text, str):
        with contextlib.suppress(ValueError):
            loaded = json.loads(text)
            state = loaded if isinstance(loaded, dict) else {}
    return given, state


def _upstream_state(state: Mapping[str, Any]) -> dict[str, Any]:
    upstream = state.get("upstream")
    return {"requestState": upstream} if isinstance(upstream, str) else {}


def _sealed_round(ctx: ServerRequestContext[Any, Any], raw: dict[str, Any], approved: str | None) -> dict[str, Any]:
    """An upstream's ``input_required`` for a 2026 host, its state wrapped in the proxy's (which the boundary
    seals): the upstream's own to forward on the retry, and that the gate already let this call through."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and "resultType" not in raw:
        raw = {**raw, "resultType": "complete"}  # a handshake upstream's answer, in the 2026 host's shape
    if not is_input_required(raw) or ctx.method not in ROUND_METHODS:
        return raw
    state: dict[str, Any] = {"upstream": raw.get("requestState")}
    if approved is not None:
        state["approved"] = approved
    return {**raw, "requestState": json.dumps(state)}


@contextlib.asynccontextmanager
async def open_proxy(
    runtime: RuntimeOptions, target: ProxyTarget, options: GatewayOptions, *, events: EventSink | None = None
) -> AsyncIterator[Proxy]:
    """The workspace's gate (no MCP server of its own started), the upstream started and connected, and the proxy
    over both; leaving stops the upstream."""
    async with open_gateway(
        dataclasses.replace(runtime, start_mcp=False), options, events=events, team=False
    ) as gateway:
        context = gateway.context
        server = proxied_server(context.resolved, target)
        proxy = Proxy(gateway, server)
        timeout = server.config.startup_timeout_sec
        # the start has a deadline; once the upstream is connected it is lifted (the scope spans the whole
        # lifetime: the client's task group is entered inside it and must be left inside it)
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as starting:
            async with AsyncExitStack() as stack:
                try:
                    transport = await open_server_transport(
                        stack,
                        server,
                        workspace=context.resolved.workspace,
                        home=context.resolved.home,
                        sandbox=context.registry.settings.sandbox,
                    )
                    client = Client(
                        transport,
                        mode="legacy" if server.config.protocol_mode == "legacy" else "auto",
                        sampling_callback=proxy.on_sampling,
                        elicitation_callback=proxy.on_elicitation,
                        list_roots_callback=proxy.on_roots,
                        logging_callback=proxy.on_log,
                        message_handler=proxy.on_message,
                        client_info=types.Implementation(name="kairox-proxy", version=kairox.__version__),
                        cache=None,
                    )
                    await stack.enter_async_context(client)
                    await proxy.start(client)
                except MCPError as exc:
                    raise McpStartupError(server.name, f"it answered with an error: {exc.error.message}") from exc
                except OSError as exc:
                    raise McpStartupError(server.name, f"{type(exc).__name__}: {exc}") from exc
                starting.deadline = math.inf
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(proxy.listen_upstream)
                    yield proxy
                    tasks.cancel_scope.cancel()
        if starting.cancelled_caught:
            raise McpStartupError(server.name, f"it did not answer within {timeout:g}s")


async def serve_proxy(
    runtime: RuntimeOptions,
    target: ProxyTarget,
    options: GatewayOptions,
    http: HttpOptions | None = None,
    *,
    events: EventSink | None = None,
    drain_sec: float = 10.0,
) -> None:
    """``kairox proxy``: over stdio (the host that started it), or Streamable HTTP with ``http``."""
    if http is not None and not http.loopback and not http.token:
        raise GatewayConfigError(
            f"serving on {http.host} (not loopback) needs a token",
            hint="pass --token-file PATH (or --token), or bind 127.0.0.1",
        )
    async with open_proxy(runtime, target, options, events=events) as proxy:
        if http is None:
            _report(proxy.gateway, f"serving {target.name} over stdio", who=WHO)
            await run_stdio(proxy.gateway, proxy.server, drain_sec)
        else:
            await run_http(proxy.gateway, proxy.server, http, drain_sec, who=WHO)
