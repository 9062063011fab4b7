"""Events of hook runs."""

from dataclasses import dataclass

from kairox.events import Event


@dataclass(frozen=True, kw_only=True, slots=True)
class HookFinished(Event):
    """A hook ran (or was skipped) for an event."""

    hook: str
    event: str
    exit_code: int | None
    decision: str | None = None
    reason: str | None = None
    duration_ms: float = 0.0
    skipped: bool = False
    error: str | None = None
