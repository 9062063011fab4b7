"""What an MCP client session offers :class:`~kairox.mcp.McpClient`, whichever implementation runs it.

Two implement it, one per kind of transport: Kairox's own JSON-RPC session (``_native``) for stdio servers and the
SDK's ``Client`` (``_sdk``) for remote ones; both speak the handshake era (``initialize``, protocol 2024-11-05 to
2025-11-25) and the 2026 era (``server/discover``). Their errors and results meet here in Kairox's terms: a
:class:`SessionError` with a JSON-RPC code, a :class:`~kairox.tools.ToolResult`.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio.abc

from kairox._rpc._replies import MethodError
from kairox.mcp._content import InvalidResult as InvalidResult  # one of the errors a session raises
from kairox.mcp._content import McpResource, McpTool
from kairox.tools import ToolResult

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Protocol revisions negotiated with ``initialize``, oldest to newest (the SDK's list; a test keeps them equal)."""
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
MODERN_VERSIONS = ("2026-07-28",)
"""Protocol revisions negotiated with ``server/discover``."""
LATEST_MODERN_VERSION = MODERN_VERSIONS[-1]

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
UNSUPPORTED_PROTOCOL_VERSION = -32022
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None]]

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
    """A JSON-RPC error: the server's answer, the connection's (``CONNECTION_CLOSED``), or ours to a request of
    the server's (raised by a callback)."""


@dataclass(frozen=True, slots=True)
class ServerOffers:
    """The server's capabilities, as far as Kairox uses them."""

    tools: bool = False
    tools_list_changed: bool = False
    resources: bool = False
    prompts: bool = False

    @classmethod
    def from_wire(cls, capabilities: Any) -> "ServerOffers":
        caps = capabilities if isinstance(capabilities, dict) else {}
        tools = caps.get("tools")
        return cls(
            tools=isinstance(tools, dict),
            tools_list_changed=isinstance(tools, dict) and tools.get("listChanged") is True,
            resources=isinstance(caps.get("resources"), dict),
            prompts=isinstance(caps.get("prompts"), dict),
        )


class McpSession(Protocol):
    """One live connection to one server, after its handshake."""

    protocol_version: str
    instructions: str | None
    offers: ServerOffers

    @property
    def needs_listen(self) -> bool:
        """A 2026-era server that announces tool changes only on a ``subscriptions/listen`` stream."""

    async def listen(self, *, task_status: anyio.abc.TaskStatus[None] = ...) -> None: ...
    async def list_tools(self) -> tuple[McpTool, ...]: ...
    async def list_resources(self) -> list[McpResource]: ...
    async def list_prompts(self) -> tuple[str, ...]: ...
    async def call_tool(self, name: str, arguments: dict[str, Any], on_progress: ProgressHandler) -> ToolResult: ...
    async def read_resource(self, uri: str) -> ToolResult: ...
