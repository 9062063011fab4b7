"""``ServerLifecycle``: Starting -> Ready -> Stopped / Failed, every transition an event (M3)."""

import enum
from collections.abc import Callable

import anyio

from kairox.events import EventSink, NullSink
from kairox.mcp._events import McpServerFailed, McpServerReady, McpServerStarting, McpServerStopped


class ServerStatus(enum.StrEnum):
    PENDING_TRUST = "pending_trust"
    """Declared by an untrusted project layer: not started until the workspace is trusted."""
    DISABLED = "disabled"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"


class FailureCause(enum.StrEnum):
    """Why a server did not start, as a fact a front end can choose its advice by (never by the message's words)."""

    UNSET_VARIABLE = "unset_variable"
    """A ``${VAR}`` of its entry is not set (:attr:`ServerLifecycle.cause_variable` names it)."""
    STARTUP_TIMEOUT = "startup_timeout"
    """It did not finish the handshake within ``startup_timeout_sec``."""
    OTHER = "other"


class ServerLifecycle:
    """The status of one server, who may wait for a status, and the events each change emits."""

    def __init__(self, server: str, transport: str, events: EventSink | None = None) -> None:
        self.server = server
        self.transport = transport
        self.events: EventSink = events or NullSink()
        self.status = ServerStatus.STOPPED
        self.reason: str | None = None
        self.cause: FailureCause | None = None
        """Why the last start failed (None while it has not)."""
        self.cause_variable: str | None = None
        self.stderr_tail = ""
        self.protocol_version: str | None = None
        self.tools = 0
        self.attempt = 0
        self.restarting = False
        """True between a crash and the restart that follows it."""
        self.ready_count = 0
        """How many times the server reached Ready (restarts included)."""
        self.settled = anyio.Event()
        """Set once the first start has ended in Ready or Failed (or the server was never started)."""
        self._changed = anyio.Event()

    def _transition(self, status: ServerStatus) -> None:
        self.status = status
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, predicate: Callable[[ServerStatus], bool]) -> ServerStatus:
        while not predicate(self.status):
            await self._changed.wait()
        return self.status

    def starting(self, attempt: int) -> None:
        self.attempt = attempt
        self.reason = None
        self.cause = self.cause_variable = None
        self._transition(ServerStatus.STARTING)
        self.events.emit(McpServerStarting(server=self.server, transport=self.transport, attempt=attempt))

    def ready(self, tools: int, protocol_version: str | None) -> None:
        self.tools, self.protocol_version = tools, protocol_version
        self.ready_count += 1
        self._transition(ServerStatus.READY)
        self.events.emit(McpServerReady(server=self.server, tools=tools, protocol_version=protocol_version))
        self.settled.set()

    def failed(self, reason: str, stderr_tail: str = "", *, will_restart: bool = False) -> None:
        self.reason, self.stderr_tail = reason, stderr_tail
        self.restarting = will_restart
        self._transition(ServerStatus.FAILED)
        self.events.emit(
            McpServerFailed(server=self.server, reason=reason, stderr_tail=stderr_tail, will_restart=will_restart)
        )
        if not will_restart:
            self.settled.set()

    def stopped(self) -> None:
        was_running = self.status in (ServerStatus.READY, ServerStatus.STARTING)
        self._transition(ServerStatus.STOPPED)
        if was_running:
            self.events.emit(McpServerStopped(server=self.server))
        self.settled.set()

    def skipped(self, status: ServerStatus, reason: str) -> None:
        """A server that is not started at all (disabled, pending trust)."""
        self.reason = reason
        self._transition(status)
        self.settled.set()
