"""Events of debug sessions: one per status change of the adapter behind a session (``ServerStatus``), and
one each time the program stops."""

from dataclasses import dataclass
from typing import ClassVar

from kairox._rpc._status import ServerStatus
from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerStarting(Event):
    kind: ClassVar[str] = "dap.server.starting"
    status: ClassVar[ServerStatus] = ServerStatus.STARTING
    server: str
    session: str


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerRunning(Event):
    kind: ClassVar[str] = "dap.server.running"
    status: ClassVar[ServerStatus] = ServerStatus.READY
    server: str
    session: str
    pid: int | None
    """The adapter's process id; ``None`` when attached over TCP."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerFailed(Event):
    kind: ClassVar[str] = "dap.server.failed"
    status: ClassVar[ServerStatus] = ServerStatus.FAILED
    server: str
    session: str
    reason: str
    stderr_tail: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerStopped(Event):
    kind: ClassVar[str] = "dap.server.stopped"
    status: ClassVar[ServerStatus] = ServerStatus.STOPPED
    server: str
    session: str


@dataclass(frozen=True, kw_only=True, slots=True)
class DapProgramStopped(Event):
    session: str
    reason: str
    path: str | None
    line: int | None
