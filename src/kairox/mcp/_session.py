"""What an MCP client session offers :class:`~kairox.mcp.McpClient`, whichever implementation runs it.

Two implement it: Kairox's own JSON-RPC session (``_native``), which speaks the handshake era (``initialize``,
protocol 2024-11-05 to 2025-11-25) over stdio and over the SDK's HTTP transports, and the SDK's ``Client``
(``_sdk``), used for servers that answer the 2026 ``server/discover`` probe. Their errors and results meet here
in Kairox's terms: a :class:`SessionError` with a JSON-RPC code, a :class:`~kairox.tools.ToolResult`.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kairox._rpc._replies import MethodError
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


class SessionError(MethodError):
    """A JSON-RPC error: the server's answer, the connection's (``CONNECTION_CLOSED``), or ours to a request of
    the server's (raised by a callback)."""


class InvalidResult(Exception):
    """The server answered, but not with what the method returns (or broke the tool's output schema)."""


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

    async def list_tools(self) -> tuple[McpTool, ...]: ...
    async def list_resources(self) -> list[McpResource]: ...
    async def list_prompts(self) -> tuple[str, ...]: ...
    async def call_tool(self, name: str, arguments: dict[str, Any], on_progress: ProgressHandler) -> ToolResult: ...
    async def read_resource(self, uri: str) -> ToolResult: ...
