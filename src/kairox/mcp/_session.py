"""What an MCP client session offers :class:`~kairox.mcp.McpClient`, whichever implementation runs it.

Two implement it, one per kind of transport: Kairox's own JSON-RPC session (``_native``) for stdio servers and the
SDK's ``Client`` (``_sdk``) for remote ones; both speak the handshake era (``initialize``, protocol 2024-11-05 to
2025-11-25) and the 2026 era (``server/discover``). Their errors and results meet here in Kairox's terms: a
:class:`SessionError` with a JSON-RPC code, a :class:`~kairox.tools.ToolResult`.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.abc

from kairox._rpc._replies import MethodError, RequestHandler
from kairox.mcp._content import InvalidResult as InvalidResult  # one of the errors a session raises
from kairox.mcp._content import (
    McpResource,
    McpTool,
    prompts_page,
    resource_contents_from_wire,
    resources_page,
    result_from_wire,
    tools_page,
)
from kairox.tools import ToolResult

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from kairox.mcp._callbacks import ClientCallbacks

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Protocol revisions negotiated with ``initialize``, oldest to newest (the SDK's list; a test keeps them equal)."""
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
MODERN_VERSIONS = ("2026-07-28",)
"""Protocol revisions negotiated with ``server/discover``."""
LATEST_MODERN_VERSION = MODERN_VERSIONS[-1]

CONNECTION_CLOSED = -32000
UNSUPPORTED_PROTOCOL_VERSION = -32022

ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None]]

INPUT_ROUNDS = 10
"""How often a 2026-era server may answer one request by asking for input before the call fails (the SDK's cap)."""
PAGE_CAP = 1_000
"""Pages followed per listing, so a server whose cursors never end cannot hold us."""

T = TypeVar("T")
PageFetch = Callable[[str | None], Awaitable[tuple[list[T], str | None]]]
"""Reads the page at a cursor: its items and the next cursor."""


async def every_page(fetch: PageFetch[T]) -> list[T]:
    """What every page of a listing holds, from the first (cursor None) on: ``fetch`` reads one page and its next
    cursor. At most :data:`PAGE_CAP` pages, and a cursor seen before ends the listing (it would loop)."""
    found: list[T] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(PAGE_CAP):
        items, cursor = await fetch(cursor)
        found.extend(items)
        if cursor is None or cursor in seen:
            break
        seen.add(cursor)
    return found


class SessionError(MethodError):
    """A JSON-RPC error: the server's answer or the connection's (``CONNECTION_CLOSED``)."""


@dataclass(frozen=True, slots=True)
class ServerOffers:
    """The server's capabilities, as far as Kairox uses them."""

    tools: bool = False
    tools_list_changed: bool = False
    resources: bool = False
    prompts: bool = False
    skills: bool = False

    @classmethod
    def from_wire(cls, capabilities: Any) -> "ServerOffers":
        caps = capabilities if isinstance(capabilities, dict) else {}
        tools = caps.get("tools")
        return cls(
            tools=isinstance(tools, dict),
            tools_list_changed=isinstance(tools, dict) and tools.get("listChanged") is True,
            resources=isinstance(caps.get("resources"), dict),
            prompts=isinstance(caps.get("prompts"), dict),
            skills="io.modelcontextprotocol/skills" in (caps.get("extensions") or {}),
        )


class McpSession:
    """One live connection to one server, after its handshake: what both implementations share. A subclass sends
    requests (:meth:`request`) and says how the server announces tool changes in the 2026 era (:meth:`listen`)."""

    protocol_version = ""
    instructions: str | None = None
    offers = ServerOffers()
    server_info: dict[str, Any] | None = None
    """``serverInfo`` of the handshake (name, version): part of what the tool-list cache keeps."""

    def __init__(self, callbacks: "ClientCallbacks") -> None:
        self.callbacks = callbacks
        self._inputs: dict[str, RequestHandler] = {
            "roots/list": self._roots,
            "elicitation/create": callbacks.elicit,
            "sampling/createMessage": callbacks.sample,
        }
        self._output_schemas: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[str, Validator] = {}

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """Send a request and wait for its result; a JSON-RPC error or a closed connection is a SessionError."""
        raise NotImplementedError

    @property
    def needs_listen(self) -> bool:
        """A 2026-era server that announces tool changes only on a ``subscriptions/listen`` stream."""
        return False

    async def listen(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Hold that stream open, as a task that counts as started once the server acknowledged it."""
        raise NotImplementedError

    async def _roots(self, params: Any) -> dict[str, Any]:
        return self.callbacks.list_roots()

    # --- what the server offers ---------------------------------------------------------------------------

    def _pages(self, method: str, read: Callable[[Any], tuple[list[T], str | None]]) -> PageFetch[T]:
        """Reads one page of ``method`` at a cursor, for :func:`every_page`."""

        async def fetch(cursor: str | None) -> tuple[list[T], str | None]:
            return read(await self.request(method, {"cursor": cursor} if cursor is not None else None))

        return fetch

    async def list_tools(self) -> tuple[McpTool, ...]:
        return self._listed(await every_page(self._pages("tools/list", tools_page)))

    def _listed(self, tools: list[McpTool]) -> tuple[McpTool, ...]:
        """The tools of a whole listing; their output schemas are what results are checked against."""
        self._output_schemas = {
            tool.name: tool.output_schema for tool in tools if not (tool.problem or "").startswith("the server listed")
        }
        self._validators.clear()
        return tuple(tools)

    async def list_resources(self) -> list[McpResource]:
        found = await every_page(self._pages("resources/list", lambda raw: resources_page(raw, templates=False)))
        return found + await every_page(
            self._pages("resources/templates/list", lambda raw: resources_page(raw, templates=True))
        )

    async def list_prompts(self) -> tuple[str, ...]:
        return tuple(await every_page(self._pages("prompts/list", prompts_page)))

    async def list_skills(self) -> list[Any]:
        entries = self._pages("skills/list", lambda raw: (list(raw.get("skills") or []), raw.get("nextCursor")))
        return [entry for entry in await every_page(entries) if isinstance(entry, dict)]

    async def call_tool(self, name: str, arguments: dict[str, Any], on_progress: ProgressHandler) -> ToolResult:
        raw = await self._asking("tools/call", {"name": name, "arguments": arguments}, progress=on_progress)
        result = result_from_wire(raw)
        if not result.is_error:
            self._check_output(name, raw)
        return result

    async def read_resource(self, uri: str) -> ToolResult:
        return resource_contents_from_wire(await self._asking("resources/read", {"uri": uri}))

    async def _asking(
        self, method: str, params: dict[str, Any], *, progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """A request a 2026-era server may answer by asking for input (``resultType: input_required``; without a
        ``resultType`` the result is complete): the requests it embeds are answered through the callbacks, one after
        the other (a person may answer them), and the request is sent again with the answers and the server's state,
        up to :data:`INPUT_ROUNDS` times."""
        result = await self.request(method, params, progress=progress)
        pause = 0.05
        for _ in range(INPUT_ROUNDS):
            if result.get("resultType") != "input_required":
                return result
            again = dict(params)
            asked = result.get("inputRequests")
            if isinstance(asked, dict) and asked:
                again["inputResponses"] = {key: await self._input(item) for key, item in asked.items()}
            else:  # only state: the server is still working on it
                await anyio.sleep(pause)
                pause = min(pause * 2, 0.25)
            if "requestState" in result:
                again["requestState"] = result["requestState"]
            result = await self.request(method, again, progress=progress)
        raise InvalidResult(f"the server asked for input more than {INPUT_ROUNDS} times for one {method}")

    async def _input(self, item: Any) -> Any:
        method = item.get("method") if isinstance(item, dict) else None
        handler = self._inputs.get(method) if isinstance(method, str) else None
        if handler is None:
            raise InvalidResult(f"the server asked for input Kairox cannot give: {str(item)[:200]}")
        return await handler(item.get("params"))

    def _check_output(self, name: str, raw: dict[str, Any]) -> None:
        """A tool with an output schema must return structured content that meets it (as the SDK checks)."""
        schema = self._output_schemas.get(name)
        if schema is None:
            return
        if "structuredContent" not in raw:
            raise InvalidResult(f"Tool {name} has an output schema but did not return structured content")
        validator = self._validators.get(name)
        if validator is None:
            from jsonschema import SchemaError
            from jsonschema.validators import validator_for
            from referencing import Registry

            kind = validator_for(schema)
            try:
                kind.check_schema(schema)
            except SchemaError as exc:
                raise InvalidResult(f"Invalid schema for tool {name}: {exc.message}") from exc
            validator = self._validators[name] = kind(schema, registry=Registry())
        from jsonschema.exceptions import best_match
        from referencing.exceptions import Unresolvable

        try:
            error = best_match(validator.iter_errors(raw["structuredContent"]))
        except Unresolvable as exc:
            raise InvalidResult(f"Invalid schema for tool {name}: {exc}") from exc
        if error is not None:
            raise InvalidResult(f"Invalid structured content returned by tool {name}: {error.message}")
