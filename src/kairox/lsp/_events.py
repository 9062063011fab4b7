"""Events of language servers: one per status change (``ServerStatus``)."""

from dataclasses import dataclass

from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerStarting(Event):
    server: str
    restart: bool = False
    """True when the server ran or failed before (a restart after a crash or a stop)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerRunning(Event):
    server: str
    pid: int
    position_encoding: str


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerFailed(Event):
    server: str
    reason: str
    stderr_tail: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class LspServerStopped(Event):
    server: str
