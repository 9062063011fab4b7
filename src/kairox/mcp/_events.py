"""Events of MCP servers: lifecycle transitions, tool list changes, progress and server log messages."""

from dataclasses import dataclass
from typing import ClassVar

from kairox._rpc._status import ServerStatus
from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerStarting(Event):
    kind: ClassVar[str] = "mcp.server.starting"
    status: ClassVar[ServerStatus] = ServerStatus.STARTING
    server: str
    transport: str
    attempt: int = 0
    """0 for the first start, then 1, 2 ... for restarts after a crash."""


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerReady(Event):
    kind: ClassVar[str] = "mcp.server.ready"
    status: ClassVar[ServerStatus] = ServerStatus.READY
    server: str
    tools: int
    """How many of its tools the model can see (after ``enabled_tools`` / ``disabled_tools``; task-only tools
    are left out)."""
    protocol_version: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerStopped(Event):
    kind: ClassVar[str] = "mcp.server.stopped"
    status: ClassVar[ServerStatus] = ServerStatus.STOPPED
    server: str


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerFailed(Event):
    kind: ClassVar[str] = "mcp.server.failed"
    status: ClassVar[ServerStatus] = ServerStatus.FAILED
    server: str
    reason: str
    stderr_tail: str = ""
    will_restart: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerRestarting(Event):
    kind: ClassVar[str] = "mcp.server.restarting"
    server: str
    attempt: int
    delay_sec: float


@dataclass(frozen=True, kw_only=True, slots=True)
class McpStartupSummary(Event):
    """Emitted once when every enabled server has reached Ready or Failed."""

    ready: tuple[str, ...]
    failed: tuple[str, ...]
    disabled: tuple[str, ...] = ()
    pending_trust: tuple[str, ...] = ()
    duration_sec: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class McpToolsChanged(Event):
    """A server's tool list was re-listed after ``notifications/tools/list_changed``."""

    kind: ClassVar[str] = "mcp.tools.changed"
    server: str
    tools: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class McpToolProgress(Event):
    server: str
    tool: str
    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerLog(Event):
    """A ``notifications/message`` log record from a server."""

    server: str
    level: str
    data: object
    logger: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class McpProtocolViolation(Event):
    """A server wrote something that is not a JSON-RPC message (e.g. a print on stdout). It is skipped."""

    server: str
    detail: str
