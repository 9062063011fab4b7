"""Notifications ``kairox serve`` passes on to its clients: an upstream's progress on a call (to the client whose
call it is, under that client's progress token), upstream log records and what Kairox's own long-running tools
do (language servers starting, debug sessions stopping) as log messages, to clients that asked for that level."""

import contextlib
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.session import ServerSession

from kairox.dap import DapProgramStopped, DapServerFailed, DapServerRunning
from kairox.events import Event
from kairox.lsp import LspServerFailed, LspServerRunning, LspServerStarting
from kairox.mcp import McpServerLog, McpToolProgress

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
BUFFER = 256
"""Notifications waiting to be sent; more are dropped (a burst of logs must never slow a call down)."""


@dataclass(frozen=True, slots=True)
class _Progress:
    call_id: str
    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True, slots=True)
class _Log:
    level: str
    logger: str
    data: object


@dataclass(slots=True)
class _Caller:
    session: ServerSession
    token: str | int
    request_id: Any


@dataclass(slots=True)
class Relay:
    """Fed from the event sink (any thread of the event loop, synchronously); ``run`` sends what was fed."""

    callers: dict[str, _Caller] = field(default_factory=dict)
    """Call id -> where its progress goes, for calls whose client sent a progress token."""
    listeners: dict[int, tuple[ServerSession, str]] = field(default_factory=dict)
    """Client sessions that set a log level (``logging/setLevel``) -> that level."""
    _send: MemoryObjectSendStream[_Progress | _Log] = field(init=False)
    _receive: MemoryObjectReceiveStream[_Progress | _Log] = field(init=False)

    def __post_init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[_Progress | _Log](BUFFER)

    def feed(self, event: Event) -> None:
        item = _notice(event)
        if item is None or (isinstance(item, _Progress) and item.call_id not in self.callers):
            return
        if isinstance(item, _Log) and not self.listeners:
            return
        with contextlib.suppress(anyio.WouldBlock):
            self._send.send_nowait(item)

    def follow(self, call_id: str, session: ServerSession, meta: Any, request_id: Any) -> None:
        token = _progress_token(meta)
        if token is not None:
            self.callers[call_id] = _Caller(session, token, request_id)

    def forget(self, call_id: str) -> None:
        self.callers.pop(call_id, None)

    def set_level(self, session: ServerSession, level: str) -> None:
        self.listeners[id(session)] = (session, level)

    async def run(self) -> None:
        """Send what was fed until cancelled; a client gone away is dropped from the listeners."""
        async for item in self._receive:
            if isinstance(item, _Progress):
                caller = self.callers.get(item.call_id)
                if caller is not None:
                    with contextlib.suppress(Exception):
                        await caller.session.send_progress_notification(
                            caller.token, item.progress, item.total, item.message, related_request_id=caller.request_id
                        )
                continue
            for key, (session, level) in list(self.listeners.items()):
                if LEVELS.index(item.level) < LEVELS.index(level):
                    continue
                try:
                    await session.send_log_message(item.level, item.data, item.logger)  # type: ignore[arg-type]
                except Exception:  # the client left: stop sending it logs
                    self.listeners.pop(key, None)


def _progress_token(meta: Any) -> str | int | None:
    if not isinstance(meta, dict):
        return None
    token = meta.get("progress_token", meta.get("progressToken"))
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def _notice(event: Event) -> _Progress | _Log | None:
    if isinstance(event, McpToolProgress):
        return (
            _Progress(event.call_id, event.progress, event.total, event.message)
            if event.call_id.startswith("gw-")
            else None
        )
    if isinstance(event, McpServerLog):
        level = event.level if event.level in LEVELS else "info"
        return _Log(level, f"mcp/{event.server}" + (f"/{event.logger}" if event.logger else ""), event.data)
    if isinstance(event, LspServerStarting):
        return _Log(
            "info",
            f"lsp/{event.server}",
            f"language server {event.server} starting" + (" again" if event.restart else ""),
        )
    if isinstance(event, LspServerRunning):
        return _Log("info", f"lsp/{event.server}", f"language server {event.server} running (pid {event.pid})")
    if isinstance(event, LspServerFailed):
        return _Log("error", f"lsp/{event.server}", f"language server {event.server} failed: {event.reason}")
    if isinstance(event, DapServerRunning):
        return _Log("info", f"dap/{event.server}", f"debug adapter {event.server} running for session {event.session}")
    if isinstance(event, DapServerFailed):
        return _Log(
            "error",
            f"dap/{event.server}",
            f"debug adapter {event.server} failed in session {event.session}: {event.reason}",
        )
    if isinstance(event, DapProgramStopped):
        where = f" at {event.path}:{event.line}" if event.path else ""
        return _Log("info", f"dap/{event.session}", f"debug session {event.session} stopped ({event.reason}){where}")
    return None
