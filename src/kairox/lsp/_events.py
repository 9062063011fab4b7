"""Events of language servers: one per status change (``ServerStatus``)."""

from dataclasses import dataclass
from typing import ClassVar

from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerStarting(Event):
    kind: ClassVar[str] = "lsp.server.starting"
    server: str
    restart: bool = False
    """True when the server ran or failed before (a restart after a crash or a stop)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerRunning(Event):
    kind: ClassVar[str] = "lsp.server.running"
    server: str
    pid: int
    position_encoding: str


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerFailed(Event):
    kind: ClassVar[str] = "lsp.server.failed"
    server: str
    reason: str
    stderr_tail: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerStopped(Event):
    kind: ClassVar[str] = "lsp.server.stopped"
    server: str
