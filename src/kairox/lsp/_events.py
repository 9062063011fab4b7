"""Events of language servers: one per status change (``ServerStatus``)."""

from dataclasses import dataclass
from typing import ClassVar

from kairox._rpc._status import ServerStatus
from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerStarting(Event):
    kind: ClassVar[str] = "lsp.server.starting"
    status: ClassVar[ServerStatus] = ServerStatus.STARTING
    server: str
    restart: bool = False
    """True when the server ran or failed before (a restart after a crash or a stop)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerRunning(Event):
    kind: ClassVar[str] = "lsp.server.running"
    status: ClassVar[ServerStatus] = ServerStatus.READY
    server: str
    pid: int
    position_encoding: str


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerFailed(Event):
    kind: ClassVar[str] = "lsp.server.failed"
    status: ClassVar[ServerStatus] = ServerStatus.FAILED
    server: str
    reason: str
    stderr_tail: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerStopped(Event):
    kind: ClassVar[str] = "lsp.server.stopped"
    status: ClassVar[ServerStatus] = ServerStatus.STOPPED
    server: str
