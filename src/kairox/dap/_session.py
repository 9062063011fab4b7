"""A debug session's record, and how frames, paths, variables and values are shown to the model."""

import ipaddress
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kairox._util._json import JsonObject, json_dict, json_int, json_list
from kairox._util._pathglob import is_within
from kairox.config import SandboxPolicy
from kairox.dap._errors import DapSessionError
from kairox.dap._lifecycle import DapServerLifecycle
from kairox.sandbox import SandboxSettings
from kairox.tools import ToolResult

if TYPE_CHECKING:
    from kairox.sandbox import ConfigurationWatch

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
OUTPUT_CHARS = 2000
"""Most of the program's output a tool result shows (the end of it)."""
VALUE_CHARS = 120
"""Longest value shown for a variable; the rest is cut (expand it with its reference)."""
DEFAULT_WAIT = 10.0
"""Seconds a tool waits for the program to stop or end when the call does not say."""
SOURCE_BYTES = 4_000_000
"""Most of a source file read to show a frame's line (a longer one shows no line)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LaunchPlace:
    program: Path
    """The program file, resolved (symlinks followed), inside the workspace."""
    cwd: Path
    """The folder it runs in, resolved, inside the workspace."""


def workspace_path(workspace: Path, value: object, what: str) -> Path:
    """``value`` resolved as the built-in tools resolve paths: ``~`` expanded, relative to the workspace, symlinks
    followed."""
    if not isinstance(value, str) or not value:
        raise DapSessionError(f"`{what}` must be a path")
    path = Path(os.path.expanduser(value))
    return Path(os.path.realpath(path if path.is_absolute() else workspace / path))


def launch_place(args: JsonObject, *, workspace: Path, unreadable: Callable[[Path], str | None] | None) -> LaunchPlace:
    """The program and working folder of a ``dap.launch`` call, held to the rules ``shell.exec``'s folder is held
    to: inside the workspace, and not hidden by the rules on reading (the sandbox would show an empty file there)."""
    program = workspace_path(workspace, args.get("program"), "program")
    cwd = workspace_path(workspace, args["cwd"], "cwd") if args.get("cwd") else workspace
    if not is_within(program, workspace):
        raise DapSessionError(
            f"program {program} is outside the workspace {workspace}",
            hint="debug a program inside the workspace (copy it there, or start Kairox in its folder)",
        )
    if not program.is_file():
        raise DapSessionError(f"no program {args.get('program')!r} in {workspace}", hint="check the path")
    if not is_within(cwd, workspace):
        raise DapSessionError(
            f"working directory {cwd} is outside the workspace {workspace}", hint="give a folder inside the workspace"
        )
    if not cwd.is_dir():
        raise DapSessionError(f"working directory {cwd} does not exist", hint="check the path")
    refused = unreadable(program) if unreadable is not None else None
    if refused is not None:
        raise DapSessionError(
            f"the rules on reading hide {program} ({refused}), so it cannot be debugged",
            hint="debug another program, or narrow the fs.read rule so that it leaves this one out",
        )
    return LaunchPlace(program=program, cwd=cwd)


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
    watch: "ConfigurationWatch | None" = None
    """The project configuration under the writable roots when a launched program started (reported if it adds some)."""

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
            "confinement": self.lifecycle.confinement_state,
        }


def display_path(path: Path, workspace: Path) -> str:
    """Workspace-relative when inside the workspace, absolute otherwise."""
    try:
        return path.resolve().relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def source_line(path: str, line: int, unreadable: Callable[[Path], str | None] | None = None) -> str:
    """Line ``line`` of the source file ``path``, stripped; empty when it cannot or may not be shown.

    The path comes from the debuggee, which runs in the sandbox while this reads outside it: a file the rules on
    reading hide is not read, nor anything but a regular file of at most :data:`SOURCE_BYTES` (a FIFO named as a
    frame's source would block the reader)."""
    try:
        resolved = Path(os.path.realpath(path))
        if unreadable is not None and unreadable(resolved) is not None:
            return ""
        descriptor = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return ""
    try:
        with open(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > SOURCE_BYTES:
                return ""
            data = handle.read(SOURCE_BYTES)
    except OSError:
        return ""
    # lines as Python counts them: not broken at form feeds or \u2028 as str.splitlines would
    lines = _LINE_BREAK.split(data.decode("utf-8", errors="replace"))
    return lines[line - 1].strip() if line <= len(lines) else ""


def frame_record(
    raw: JsonObject, workspace: Path, unreadable: Callable[[Path], str | None] | None = None
) -> JsonObject:
    """A DAP ``StackFrame`` as ``{id, name, path, line, column, text}`` with the source line's text (unless the rules
    on reading hide the file: ``unreadable`` says why a resolved path may not be read, or None)."""
    source = json_dict(raw.get("source"))
    path = source.get("path")
    line = json_int(raw.get("line"))
    text = source_line(path, line, unreadable) if isinstance(path, str) and line > 0 else ""
    return {
        "id": raw.get("id"),
        "name": str(raw.get("name", "")),
        "path": display_path(Path(path), workspace)
        if isinstance(path, str) and "\x00" not in path
        else source.get("name"),
        "line": line,
        "column": raw.get("column"),
        "text": text,
    }


def wait_seconds(args: JsonObject) -> float:
    value = args.get("wait_sec")
    return float(value) if isinstance(value, int | float) and value >= 0 else DEFAULT_WAIT


def stack_text(frames: list[JsonObject]) -> str:
    """One line a frame: ``#0 name at path:line [frame id]: text``."""
    return "\n".join(
        f"#{i} {f['name']} at {f['path']}:{f['line']} [frame {f['id']}]" + (f": {f['text']}" if f["text"] else "")
        for i, f in enumerate(frames)
    )


def variable_records(body: JsonObject) -> list[JsonObject]:
    """The variables of a ``variables`` response as ``{name, value, type, variables_reference}``, values cut to
    :data:`VALUE_CHARS`; groups some adapters add ("special variables") come after the real names."""
    items: list[JsonObject] = []
    for var in json_list(body.get("variables")):
        if not isinstance(var, dict):
            continue
        value = str(var.get("value", ""))
        items.append(
            {
                "name": str(var.get("name", "")),
                "value": value if len(value) <= VALUE_CHARS else value[: VALUE_CHARS - 3] + "...",
                "type": var.get("type"),
                "variables_reference": json_int(var.get("variablesReference")),
            }
        )
    items.sort(key=lambda v: bool(v["variables_reference"] and not v["value"] and not v["type"]))
    return items


def variable_lines(items: list[JsonObject]) -> list[str]:
    """``name = value (type) [ref N]`` a variable."""
    return [
        (f"{v['name']} = {v['value']}" if v["value"] or v["type"] else v["name"])
        + (f" ({v['type']})" if v["type"] else "")
        + (f" [ref {v['variables_reference']}]" if v["variables_reference"] else "")
        for v in items
    ]


def evaluation(body: JsonObject) -> tuple[JsonObject, str]:
    """An ``evaluate`` response as ``{result, type, variables_reference}`` and its one-line text."""
    result: JsonObject = {
        "result": str(body.get("result", "")),
        "type": body.get("type"),
        "variables_reference": json_int(body.get("variablesReference")),
    }
    text = result["result"] + (f" ({result['type']})" if result["type"] else "")
    if result["variables_reference"]:
        text += f" [ref {result['variables_reference']}]"
    return result, text


def breakpoint_lines(path: str, found: list[JsonObject]) -> list[str]:
    """``path:line set``, or ``not verified (why)``, a breakpoint as the adapter placed it."""
    return [
        f"{path}:{bp.get('line')} "
        + ("set" if bp.get("verified") else f"not verified ({bp.get('message') or 'unknown reason'})")
        for bp in found
    ]


def program_reply(session: str, lines: list[str], output: str, structured: JsonObject) -> ToolResult:
    """What a tool that let the program run returns: ``lines``, then the end of the program's output."""
    if output:
        lines = [*lines, "Program output:", output[-OUTPUT_CHARS:].rstrip("\n")]
    return ToolResult.text("\n".join(lines), structured={"session": session, **structured, "output": output})


def scope_records(body: JsonObject) -> list[JsonObject]:
    """The scopes of a ``scopes`` response as ``{name, variables_reference, expensive}``."""
    return [
        {
            "name": s.get("name"),
            "variables_reference": s.get("variablesReference"),
            "expensive": s.get("expensive"),
        }
        for s in json_list(body.get("scopes"))
        if isinstance(s, dict)
    ]


_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def valid_session_id(wanted: str) -> bool:
    """Letters, digits, ``-`` and ``_`` only: the id names the adapter's log file."""
    return _SESSION_ID.fullmatch(wanted) is not None


def attach_allowed(host: str, sandbox: SandboxSettings) -> bool:
    """Loopback always; another host only where the policy lets tools reach the network."""
    if host == "localhost" or sandbox.network_access or sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
