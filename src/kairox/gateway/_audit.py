"""The gateway's audit log: one JSON line per tool call, size-capped and rotated."""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_BACKUPS = 3


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditRecord:
    client: str
    """The client's name from its ``initialize`` (or ``unknown``), with its session id when it has one."""
    tool: str
    """The registry name of the tool."""
    arguments: dict[str, Any]
    """Redacted and cut as events record them (``event_arguments``)."""
    decision: str
    """``allow``, ``deny``, or ``ask`` answered: ``approved`` / ``declined``."""
    rule: str | None
    duration_ms: float
    """The call's own time, without the wait for an approval (``approval_wait_ms``)."""
    outcome: str
    """``ok``, ``error`` (the tool ran and failed) or ``refused`` (it did not run)."""
    session: str | None = None
    approval_wait_ms: float = 0.0
    """How long the call waited for its client's user to answer an approval question."""
    ts: float = 0.0
    user: str | None = None
    """The person the call was made for: the token's user, or the local account over stdio or one shared token."""
    replica: str | None = None
    """The ``kairox serve`` process that ran it (``--replica-id``)."""
    agent: str | None = None
    """The subagent of a served ``task`` whose call this was."""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ts": self.ts or round(time.time(), 3)}


class AuditLog:
    """Appends records to ``path``; past ``max_bytes`` the file becomes ``path.1`` (``.1`` -> ``.2`` ...), and the
    oldest beyond ``backups`` is removed. Writing never raises: an audit that cannot be written is reported once
    on ``problems`` and the call goes on. ``scrub`` replaces the configuration's known secrets in each record
    (``SecretScrubber.scrub``): a call's arguments may quote one."""

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        backups: int = DEFAULT_BACKUPS,
        scrub: Callable[[Any], Any] | None = None,
    ) -> None:
        self.path = path
        self.scrub = scrub
        self.max_bytes = max_bytes
        self.backups = backups
        self.problems: list[str] = []
        self._lock = threading.Lock()

    def write(self, record: AuditRecord) -> None:
        data = record.to_json()
        line = json.dumps(self.scrub(data) if self.scrub is not None else data, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                size = self.path.stat().st_size if self.path.exists() else 0
                if size and size + len(line.encode()) > self.max_bytes:
                    self._rotate()
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError as exc:
                if not self.problems:
                    self.problems.append(f"cannot write the audit log {self.path}: {exc.strerror or exc}")

    def _rotate(self) -> None:
        oldest = self.path.with_name(f"{self.path.name}.{self.backups}")
        oldest.unlink(missing_ok=True)
        for index in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{index}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{index + 1}"))
        if self.backups > 0:
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink(missing_ok=True)
