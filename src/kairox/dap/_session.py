"""A debug session's record, and how frames and paths are shown to the model."""

import contextlib
from dataclasses import dataclass
from pathlib import Path

from kairox._util import JsonObject
from kairox.dap._lifecycle import DapServerLifecycle

DEFAULT_WAIT = 10.0
"""Seconds a tool waits for the program to stop or end when the call does not say."""


@dataclass(kw_only=True)
class DebugSession:
    id: str
    server: str
    target: str
    """What runs: the program path, or host:port for an attach."""
    lifecycle: DapServerLifecycle
    cursor: int = 0
    """Index of the first adapter event not yet reported."""
    state: str = "starting"
    """starting, running, stopped or ended."""
    thread_id: int | None = None
    frame_id: int | None = None
    last_stop: JsonObject | None = None
    exit_code: int | None = None
    output_cursor: int = 0
    """Index of the first adapter event whose program output was not yet returned."""

    def snapshot(self) -> JsonObject:
        return {
            "session": self.id,
            "server": self.server,
            "target": self.target,
            "state": self.state,
            "adapter": self.lifecycle.status.value,
            "pid": self.lifecycle.client.pid if self.lifecycle.client and self.state != "ended" else None,
            "last_stop": self.last_stop,
            "exit_code": self.exit_code,
        }


def display_path(path: Path, workspace: Path) -> str:
    """Workspace-relative when inside the workspace, absolute otherwise."""
    try:
        return path.resolve().relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def frame_record(raw: JsonObject, workspace: Path) -> JsonObject:
    """A DAP ``StackFrame`` as ``{id, name, path, line, column, text}`` with the source line's text."""
    source = raw.get("source") or {}
    path = source.get("path")
    line = int(raw.get("line", 0) or 0)
    text = ""
    if isinstance(path, str) and line > 0:
        with contextlib.suppress(OSError, IndexError):
            text = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()[line - 1].strip()
    return {
        "id": raw.get("id"),
        "name": str(raw.get("name", "")),
        "path": display_path(Path(path), workspace) if isinstance(path, str) else source.get("name"),
        "line": line,
        "column": raw.get("column"),
        "text": text,
    }


def wait_seconds(args: JsonObject) -> float:
    value = args.get("wait_sec")
    return float(value) if isinstance(value, int | float) and value >= 0 else DEFAULT_WAIT
