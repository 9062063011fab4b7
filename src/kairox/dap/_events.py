"""Events of debug sessions: one per status change of the adapter behind a session (``ServerStatus``), and
one each time the program stops."""

from dataclasses import dataclass

from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerStarting(Event):
    server: str
    session: str


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerRunning(Event):
    server: str
    session: str
    pid: int | None
    """The adapter's process id; ``None`` when attached over TCP."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerFailed(Event):
    server: str
    session: str
    reason: str
    stderr_tail: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class DapServerStopped(Event):
    server: str
    session: str


@dataclass(frozen=True, kw_only=True, slots=True)
class DapProgramStopped(Event):
    session: str
    reason: str
    path: str | None
    line: int | None
