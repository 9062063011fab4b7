"""``McpToolAdapter``: one server's tools as registry tools named ``mcp__<server>__<tool>`` (M5)."""

import functools
from collections.abc import Sequence
from typing import Any

from kairox._rpc._status import ServerStatus
from kairox._util._json import JsonObject
from kairox._util._names import mcp_tool_name
from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity
from kairox.mcp._client import McpClient
from kairox.mcp._connection import CALLER_LOGIN, expand, run_as
from kairox.mcp._content import McpTool, is_offered
from kairox.tools import (
    Access,
    CallContext,
    PermissionProfile,
    ToolAnnotations,
    ToolProvider,
    ToolResult,
    ToolSource,
    ToolSpec,
)

HARD_TIMEOUT_FACTOR = 10
"""A call that keeps reporting progress may run this many idle timeouts before the registry stops it."""
LIST_RESOURCES = "list_resources"
READ_RESOURCE = "read_resource"


def permission_for(annotations: ToolAnnotations, *, trusted: bool = False) -> PermissionProfile:
    """External; destructive and open-world unless the server says otherwise and the user trusts what it says
    (``trust_annotations``)."""
    read_only = trusted and annotations.read_only_hint is True
    return _external(read_only, not read_only or annotations.open_world_hint is not False)


@functools.cache
def _external(read_only: bool, open_world: bool) -> PermissionProfile:
    """One profile for each of the three outcomes, shared by every tool that has it (not one per tool)."""
    return PermissionProfile(access=Access.EXTERNAL, destructive=not read_only, open_world=open_world)


class McpToolAdapter(ToolProvider):
    """The tools of one :class:`McpClient`, filtered by ``enabled_tools`` then ``disabled_tools``.

    When the server's list changes the adapter rebuilds its specs and calls ``_tools_changed`` once, so the
    registry swaps the whole set at a time and never dispatches to a stale list.
    """

    def __init__(self, client: McpClient, *, resource_tools: bool = True) -> None:
        super().__init__()
        self.client = client
        self.origin = client.name
        self.resource_tools = resource_tools
        self._specs: tuple[ToolSpec, ...] = ()
        self._targets: dict[str, McpTool | str] = {}
        self._rebuild(client.tools)
        client.on_tools_changed(self._client_tools_changed)

    async def list_tools(self) -> Sequence[ToolSpec]:
        client = self.client
        # listed from the cache while its start is scheduled (or, lazy, waits for the first call)
        if client.status not in (ServerStatus.READY, ServerStatus.STARTING) and not (
            client.restarting or client.start_pending
        ):
            return ()
        return self._specs

    async def _client_tools_changed(self, tools: tuple[McpTool, ...]) -> None:
        self._rebuild(tools)
        await self._tools_changed(self._specs)

    def _rebuild(self, tools: Sequence[McpTool]) -> None:
        config = self.client.config
        server = self.client.name
        diagnostics: list[Diagnostic] = []
        specs: list[ToolSpec] = []
        targets: dict[str, McpTool | str] = {}
        # what is the same for every tool of the server, looked up once (fifty servers list thousands of tools)
        enabled, disabled, max_tools = config.enabled_tools, config.disabled_tools, config.max_tools
        max_description, trusted = config.max_description_chars, config.trust_annotations
        timeout = config.tool_timeout_sec * HARD_TIMEOUT_FACTOR
        for tool in tools:
            if tool.task_support == "required":
                reason = "left out: the server runs it only as a task, which Kairox does not drive"
                self._note(diagnostics, tool.name, reason, severity=Severity.INFO)
                continue
            if not is_offered(tool, enabled, disabled):
                continue
            if tool.problem is not None:
                hint = "the server's other tools are offered; report the schema to the server's authors"
                self._note(diagnostics, tool.name, f"left out: {tool.problem}", made=ExtensionLoadFailure, hint=hint)
                continue
            if len(specs) >= max_tools:
                left = sum(1 for t in tools if t.problem is None and is_offered(t, enabled, disabled)) - len(specs)
                self._note(
                    diagnostics,
                    server,
                    f"lists more than {config.max_tools} tools; {left} were left out",
                    kind="mcp_server",
                    hint=f"pick the ones you need with mcp_servers.{server}.enabled_tools, or raise "
                    f"mcp_servers.{server}.max_tools",
                )
                break
            description = tool.description or tool.title or tool.name
            if len(description) > max_description:
                reason = (
                    f"its description has {len(description)} characters; the model sees the first {max_description}"
                )
                hint = f"raise mcp_servers.{server}.max_description_chars to show more"
                self._note(diagnostics, tool.name, reason, hint=hint)
                description = description[:max_description]
            name = mcp_tool_name(server, tool.name)
            if name in targets:
                reason = f"left out: its registry name {name!r} is already taken by another tool of this server"
                hint = f"add {tool.name!r} to mcp_servers.{server}.disabled_tools to silence this"
                self._note(diagnostics, tool.name, reason, hint=hint)
                continue
            targets[name] = tool
            specs.append(
                ToolSpec(
                    name=name,
                    description=description,
                    input_schema=tool.input_schema,
                    source=ToolSource.MCP,
                    permission=permission_for(tool.annotations, trusted=trusted),
                    origin=server,
                    output_schema=tool.output_schema,
                    annotations=tool.annotations,
                    annotations_trusted=trusted,
                    # a hard ceiling for the registry: the client's own idle timeout (tool_timeout_sec, extended by
                    # progress notifications) is what normally ends a call
                    timeout_sec=timeout,
                    meta={"mcp_server": server, "mcp_tool": tool.name},
                )
            )
        if self.resource_tools and self.client.resources:
            specs.extend(self._resource_specs(targets, diagnostics))
        self._specs = tuple(specs)
        self._targets = targets
        self.diagnostics = diagnostics

    def _note(
        self,
        diagnostics: list[Diagnostic],
        name: str,
        reason: str,
        *,
        kind: str = "tool",
        made: type[Diagnostic] = Diagnostic,
        **more: Any,
    ) -> None:
        """A diagnostic about one of the server's tools (or, ``kind="mcp_server"``, the server) for ``diagnostics``."""
        diagnostics.append(made(kind=kind, name=name, source=f"server:{self.client.name}", reason=reason, **more))

    def _resource_specs(self, targets: dict[str, McpTool | str], diagnostics: list[Diagnostic]) -> list[ToolSpec]:
        server = self.client.name
        reading = PermissionProfile(access=Access.EXTERNAL, destructive=False, open_world=False)
        helpers: list[tuple[str, str, JsonObject]] = [
            (
                LIST_RESOURCES,
                f"List the resources (and resource templates) that MCP server {server!r} offers.",
                {"type": "object", "properties": {}, "additionalProperties": False},
            ),
            (
                READ_RESOURCE,
                f"Read one resource of MCP server {server!r} by its URI.",
                {
                    "type": "object",
                    "properties": {"uri": {"type": "string", "description": "The resource URI"}},
                    "required": ["uri"],
                    "additionalProperties": False,
                },
            ),
        ]
        specs = []
        for helper, description, schema in helpers:
            name = mcp_tool_name(server, helper)
            if name in targets:
                reason = f"the resource helper {name!r} is not added: the server has a tool of that name"
                self._note(diagnostics, helper, reason, severity=Severity.INFO)
                continue
            targets[name] = helper
            specs.append(
                ToolSpec(
                    name=name,
                    description=description,
                    input_schema=schema,
                    source=ToolSource.MCP,
                    permission=reading,
                    origin=server,
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
                    # Kairox's own helpers around resources/list and resources/read: reads by the protocol
                    annotations_trusted=True,
                    meta={"mcp_server": server, "resource_helper": helper},
                )
            )
        return specs

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        target = self._targets.get(name)
        if target is None:
            return ToolResult.error(
                f"{name} is not (or no longer) a tool of MCP server {self.client.name!r}; list the tools again"
            )
        login = CALLER_LOGIN.get()
        if login is not None and self.client.signs_in and target != LIST_RESOURCES:
            # one person's call through a gateway: their own login, never the server's shared connection
            auth = await login(self.client.name, expand(self.client.config.url or "", "url", self.client.environ))
            if isinstance(auth, str):
                return ToolResult.error(auth)
            wanted, tool = str(arguments.get("uri", "")), getattr(target, "name", name)
            try:
                return await run_as(  # type: ignore[no-any-return]
                    self.client,
                    auth,
                    lambda s: (
                        s.read_resource(wanted)
                        if target == READ_RESOURCE
                        else s.call_tool(tool, dict(arguments), _no_progress)
                    ),
                )
            except Exception as exc:  # no answer on this person's login: say so, never fall back to another's
                return ToolResult.error(
                    f"MCP server {self.client.name!r} could not be reached with your own login ({exc!r}); "
                    f"log in again: `kairox mcp login {self.client.name} --gateway URL`"
                )
        if isinstance(target, McpTool):  # the usual call first: no comparison of a tool record with a string
            if self.client.from_cache:
                gone = await self._gone_since_cached(name, target)
                if gone is not None:
                    return gone
            return await self.client.call_tool(
                target.name, arguments, call_id=context.call_id, progress=context.progress
            )
        if target == LIST_RESOURCES:
            lines = [
                f"{'template ' if r.template else ''}{r.uri}  {r.name}"
                + (f" — {r.description}" if r.description else "")
                for r in self.client.resources
            ]
            return ToolResult.text("\n".join(lines) or "(no resources)")
        if target == READ_RESOURCE:
            uri = arguments.get("uri")
            if not isinstance(uri, str) or not uri:
                return ToolResult.error("read_resource needs a `uri` string")
            return await self.client.read_resource(uri)
        return ToolResult.error(f"{name} is not a tool of MCP server {self.client.name!r}")

    async def _gone_since_cached(self, name: str, target: McpTool) -> ToolResult | None:
        """A tool known from the cache only: wait for the server (it may start now) and check that it still has
        the tool; its fresh list has replaced the cached one by then, in the registry and in the cache."""
        if await self.client.ready_session() is None:
            return None  # the call reports the server's state and stderr
        if any(tool.name == target.name for tool in self.client.tools):
            return None
        return ToolResult.error(
            f"{name} is no longer a tool of MCP server {self.client.name!r}"
            ": the server changed since its tool list was "
            "cached, and its tools were listed again; pick one of the tools it lists now"
        )


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None
