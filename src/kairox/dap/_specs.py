"""The DAP tools as the model sees them. Debugging runs programs: every tool needs ``Access.EXECUTE``.

``dap.launch`` starts the adapter and its debuggee under the OS sandbox of the call, as ``shell.exec`` runs a
command; the tools on a session work on what it started; ``dap.attach`` reaches a process no Kairox sandbox holds,
so the policy asks for it (and read_only forbids it).
"""

from kairox._util._json import JsonObject
from kairox.tools import (
    Access,
    Confinement,
    PermissionProfile,
    ProgramArgs,
    ToolAnnotations,
    ToolSource,
    ToolSpec,
    object_schema,
)

LAUNCH_PERMISSION = PermissionProfile(
    access=Access.EXECUTE,
    path_args=("program", "cwd"),
    cwd_arg="cwd",
    program=ProgramArgs(program="program", args="args", env="env"),
)
ATTACH_PERMISSION = PermissionProfile(access=Access.EXECUTE, confinement=Confinement.NONE)
SESSION_PERMISSION = PermissionProfile(access=Access.EXECUTE, path_args=("clear",), confinement=Confinement.SESSION)
"""The tools on a running session (breakpoints, stepping, inspection, evaluation, disconnect)."""

_SESSION: JsonObject = {
    "type": "string",
    "description": "Debug session id from dap.launch / dap.attach; default: the latest live session.",
}
_THREAD: JsonObject = {"type": "integer", "description": "Thread id; default: the thread that last stopped."}
_FRAME: JsonObject = {
    "type": "integer",
    "description": "Frame id from dap.stack_trace; default: the top frame.",
}
_WAIT: JsonObject = {
    "type": "number",
    "minimum": 0,
    "description": "Seconds to wait for the program to stop or end (default 10); it keeps running after.",
}
_BREAKPOINT: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Source file, relative to the workspace or absolute."},
        "line": {"type": "integer", "minimum": 1, "description": "1-based line."},
        "condition": {"type": "string", "description": "Stop only when this expression is true, e.g. `i == 3`."},
    },
    "required": ["path", "line"],
    "additionalProperties": False,
}
"""One breakpoint, the same shape in dap.launch, dap.attach and dap.set_breakpoints."""
_BREAKPOINTS: JsonObject = {
    "type": "array",
    "description": "Breakpoints to set before the program runs.",
    "items": _BREAKPOINT,
}
_NEW_SESSION: dict[str, JsonObject] = {
    "session": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]{1,64}$",
        "description": "Id for the new session (letters, digits, - and _); default s1, s2 ...",
    },
    "server": {
        "type": "string",
        "description": "Debug adapter from dap_servers; default: the first matching.",
    },
    "breakpoints": _BREAKPOINTS,
    "stop_on_exceptions": {
        "type": "array",
        "items": {"type": "string"},
        "description": 'Exception breakpoint filters of the adapter, e.g. ["uncaught"] or ["raised"].',
    },
    "wait_sec": _WAIT,
}


def _spec(
    name: str,
    description: str,
    properties: dict[str, JsonObject],
    required: list[str],
    permission: PermissionProfile = SESSION_PERMISSION,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        input_schema=object_schema(properties, required),
        source=ToolSource.DAP,
        permission=permission,
        origin="dap",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
    )


def dap_tool_specs() -> list[ToolSpec]:
    session = {"session": _SESSION}
    step = {"session": _SESSION, "thread_id": _THREAD, "wait_sec": _WAIT}
    return [
        _spec(
            "dap.launch",
            "Run a program under the debugger, in the same sandbox as shell.exec; returns where it first stopped "
            "(a breakpoint) or that it ended.",
            {
                "program": {"type": "string", "description": "Program file inside the workspace (relative to it)."},
                "args": {"type": "array", "items": {"type": "string"}, "description": "Program arguments."},
                "cwd": {"type": "string", "description": "Working directory inside the workspace; default: its root."},
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
                "stop_on_entry": {"type": "boolean", "description": "Stop at the first line."},
                **_NEW_SESSION,
            },
            ["program"],
            LAUNCH_PERMISSION,
        ),
        _spec(
            "dap.attach",
            "Attach to a program waiting for a debugger on host:port (e.g. `python -m debugpy --listen "
            "127.0.0.1:5678 --wait-for-client app.py`). No sandbox holds that program, so the user is asked. "
            "Fails after 1 s when nothing listens there, after 5 s when what listens does not answer as a debugger.",
            {
                "host": {
                    "type": "string",
                    "description": "Default 127.0.0.1; another host needs policy.network_access.",
                },
                "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                **_NEW_SESSION,
            },
            ["port"],
            ATTACH_PERMISSION,
        ),
        _spec(
            "dap.set_breakpoints",
            "Replace the breakpoints of every file named in `breakpoints` (and clear those in `clear`); "
            "says which were verified.",
            {
                **session,
                "breakpoints": {"type": "array", "items": _BREAKPOINT, "description": "The new breakpoints."},
                "clear": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Source files whose breakpoints are all removed.",
                },
            },
            [],
        ),
        _spec("dap.continue", "Resume until the next stop (breakpoint, exception) or the end.", step, []),
        _spec("dap.next", "Step over: run to the next line of the current function.", step, []),
        _spec("dap.step_in", "Step into the call on the current line.", step, []),
        _spec("dap.step_out", "Run until the current function returns.", step, []),
        _spec("dap.pause", "Pause a running program; returns where it stopped.", step, []),
        _spec("dap.threads", "The threads of the program.", session, []),
        _spec(
            "dap.stack_trace",
            "The call stack of a stopped thread, innermost frame first, with frame ids.",
            {**session, "thread_id": _THREAD, "levels": {"type": "integer", "minimum": 1}},
            [],
        ),
        _spec(
            "dap.scopes",
            "The variable scopes (locals, globals) of a frame.",
            {**session, "frame_id": _FRAME},
            [],
        ),
        _spec(
            "dap.variables",
            "Variables with short values: the locals of the top frame by default; give `variables_reference` "
            "(shown as [ref N]) to expand a structured value, or `scope` to list another scope.",
            {
                **session,
                "frame_id": _FRAME,
                "scope": {
                    "type": "string",
                    "description": "Scope name, e.g. Locals or Globals (default Locals).",
                },
                "variables_reference": {"type": "integer", "minimum": 1},
            },
            [],
        ),
        _spec(
            "dap.evaluate",
            "Evaluate an expression in a stopped frame, e.g. `x * 2`.",
            {**session, "expression": {"type": "string"}, "frame_id": _FRAME},
            ["expression"],
        ),
        _spec(
            "dap.disconnect",
            "End a debug session; a launched program is ended too unless terminate is false.",
            {**session, "terminate": {"type": "boolean", "description": "End the program (default true)."}},
            [],
        ),
    ]
