"""The built-in tools (R6) as one ``ToolProvider`` with origin ``builtin``."""

import shutil
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio

from kairox._util._json import JsonObject
from kairox.config import ToolsConfig
from kairox.errors import ToolCallError
from kairox.tools._builtin_fs import edit_file, list_files, read_file, write_file
from kairox.tools._builtin_search import search
from kairox.tools._builtin_shell import RunHosted, run_shell
from kairox.tools._model import (
    Access,
    CallContext,
    PermissionProfile,
    ToolResult,
    ToolSource,
    ToolSpec,
    object_schema,
)
from kairox.tools._provider import ToolProvider
from kairox.tools._web_fetch import WEB_FETCH_SPEC, fetch_page

BUILTIN_ORIGIN = "builtin"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolHost:
    """Work a front end does itself for the built-in tools, after the gate allowed the call (an editor over ACP: reads
    see its unsaved buffers, writes land in them, commands run confined in its terminal); None where it offers none."""

    read_text: Callable[[Path], Awaitable[str]] | None = None
    write_text: Callable[[Path, str], Awaitable[None]] | None = None
    run: RunHosted | None = None


def _blocking(work: Callable[..., Awaitable[Any]] | None) -> Callable[..., Any] | None:
    """``work`` called from a tool's worker thread, in the event loop that started the thread."""
    return None if work is None else lambda *args: anyio.from_thread.run(cast(Any, work), *args)


@dataclass(frozen=True, kw_only=True, slots=True)
class BuiltinSettings:
    read_max_bytes: int = 1_000_000
    list_max_entries: int = 2_000
    search_max_results: int = 200
    shell_timeout_sec: float = 120.0
    shell_output_limit: int = 200_000
    """Bytes of each of stdout and stderr kept in memory; the registry's output cap applies after."""
    shell_env_passthrough: tuple[str, ...] = ()
    ripgrep: str | None = field(default_factory=lambda: shutil.which("rg"))
    """The ``rg`` executable; None uses the Python search."""
    web_hosts: tuple[str, ...] = ()
    """Hosts allow rules name (``web.fetch(domain:HOST)``): they may resolve to private addresses."""
    host: ToolHost = field(default_factory=ToolHost)

    @classmethod
    def from_config(cls, tools: ToolsConfig) -> "BuiltinSettings":
        return cls(
            shell_timeout_sec=tools.default_timeout_sec, shell_env_passthrough=tuple(tools.shell_env_passthrough)
        )


_PATH = {"type": "string", "description": "File path, relative to the workspace root or absolute."}


def _output(properties: JsonObject) -> JsonObject:
    """An output schema: the tool's own fields, the notes the text adds, and what the output cap leaves of them
    (``text``, ``output_truncated``, ``original_chars``, ``spilled_to``). Nothing is required, so a cut result
    still meets it."""
    strings = {"type": "array", "items": {"type": "string"}}
    return {
        "type": "object",
        "properties": {
            **properties,
            "notes": {**strings, "description": "What the text adds: limits reached, files left out."},
            "text": {"type": "string", "description": "The text, cut to the output limit (only when it was cut)."},
            "output_truncated": {"type": "boolean"},
            "original_chars": {"type": "integer"},
            "spilled_to": {"type": "string", "description": "File holding the whole text."},
        },
    }


_STR, _INT, _BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}

BUILTIN_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="fs.read",
        description="Read a text file (optionally a 1-based line range). Binary files are refused.",
        input_schema=object_schema(
            {
                "path": _PATH,
                "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
                "end_line": {"type": "integer", "minimum": 1, "description": "Last line to return (inclusive)."},
            },
            ["path"],
        ),
        source=ToolSource.BUILTIN,
        origin=BUILTIN_ORIGIN,
        output_schema=_output(
            {
                "path": _STR,
                "content": {"type": "string", "description": "The lines read."},
                "start_line": _INT,
                "end_line": _INT,
                "total_lines": _INT,
                "truncated": _BOOL,
                "note": _STR,
            }
        ),
        permission=PermissionProfile(access=Access.READ, path_args=("path",)),
    ),
    ToolSpec(
        name="fs.write",
        description="Create or replace a text file with the given content; parent folders are created.",
        input_schema=object_schema(
            {"path": _PATH, "content": {"type": "string", "description": "The whole new content."}}, ["path", "content"]
        ),
        source=ToolSource.BUILTIN,
        origin=BUILTIN_ORIGIN,
        output_schema=_output({"path": _STR, "bytes": _INT, "created": _BOOL}),
        permission=PermissionProfile(access=Access.WRITE, destructive=True, path_args=("path",)),
    ),
    ToolSpec(
        name="fs.edit",
        description=(
            "Replace an exact piece of text in a file. The text must occur exactly once unless replace_all is true."
        ),
        input_schema=object_schema(
            {
                "path": _PATH,
                "old_string": {"type": "string", "description": "Exact text to replace, including whitespace."},
                "new_string": {"type": "string", "description": "Replacement text."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence.", "default": False},
            },
            ["path", "old_string", "new_string"],
        ),
        source=ToolSource.BUILTIN,
        origin=BUILTIN_ORIGIN,
        output_schema=_output({"path": _STR, "replacements": _INT}),
        permission=PermissionProfile(access=Access.WRITE, destructive=True, path_args=("path",), reads=True),
    ),
    ToolSpec(
        name="fs.list",
        description=(
            "List files under a folder (default: the workspace), matching "
            "a glob such as *.py or src/**/*.ts; .gitignore is respected."
        ),
        input_schema=object_schema(
            {
                "path": {"type": "string", "description": "Folder to list, relative to the workspace root."},
                "pattern": {
                    "type": "string",
                    "description": "Glob: a name pattern (*.py) or a path pattern (src/**/*.py).",
                },
                "respect_gitignore": {"type": "boolean", "default": True, "description": "Leave out ignored files."},
            },
            [],
        ),
        source=ToolSource.BUILTIN,
        origin=BUILTIN_ORIGIN,
        output_schema=_output({"root": _STR, "files": {"type": "array", "items": _STR}, "truncated": _BOOL}),
        permission=PermissionProfile(access=Access.READ, path_args=("path",)),
    ),
    ToolSpec(
        name="shell.exec",
        description=(
            "Run a bash command line in the workspace under the OS sandbox; returns the exit code, stdout and stderr."
        ),
        input_schema=object_schema(
            {
                "command": {"type": "string", "description": "The command line, run with bash -c."},
                "cwd": {"type": "string", "description": "Working directory inside the workspace (default: its root)."},
                "timeout_sec": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Kill the command after this many seconds.",
                },
            },
            ["command"],
        ),
        source=ToolSource.BUILTIN,
        origin=BUILTIN_ORIGIN,
        output_schema=_output(
            {
                "exit_code": _INT,
                "stdout": _STR,
                "stderr": _STR,
                "timed_out": _BOOL,
                "sandbox": _STR,
                "created_configuration": {"type": "array", "items": _STR},
            }
        ),
        permission=PermissionProfile(access=Access.EXECUTE, destructive=True, command_arg="command", cwd_arg="cwd"),
    ),
    ToolSpec(
        name="search.ripgrep",
        description=(
            "Search file contents with a regular expression (ripgrep); "
            ".gitignore is respected. Returns path:line: text."
        ),
        input_schema=object_schema(
            {
                "pattern": {"type": "string", "description": "Regular expression (or plain text with fixed_strings)."},
                "path": {"type": "string", "description": "File or folder to search (default: the workspace)."},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.py."},
                "ignore_case": {"type": "boolean", "default": False},
                "fixed_strings": {"type": "boolean", "default": False, "description": "Treat pattern as plain text."},
                "max_results": {"type": "integer", "minimum": 1, "description": "Stop after this many matching lines."},
            },
            ["pattern"],
        ),
        source=ToolSource.BUILTIN,
        origin=BUILTIN_ORIGIN,
        output_schema=_output(
            {
                "engine": _STR,
                "matches": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"path": _STR, "line": _INT, "text": _STR}},
                },
                "truncated": _BOOL,
            }
        ),
        permission=PermissionProfile(access=Access.READ, path_args=("path",)),
    ),
    WEB_FETCH_SPEC,
)


class BuiltinToolProvider(ToolProvider):
    """``fs.read``, ``fs.write``, ``fs.edit``, ``fs.list``, ``shell.exec``, ``search.ripgrep`` and ``web.fetch``."""

    origin = BUILTIN_ORIGIN

    def __init__(self, settings: BuiltinSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or BuiltinSettings()

    async def list_tools(self) -> Sequence[ToolSpec]:
        return BUILTIN_SPECS

    async def call_tool(self, name: str, arguments: JsonObject, context: CallContext) -> ToolResult:
        settings = self.settings
        workspace = context.workspace
        read, write = _blocking(settings.host.read_text), _blocking(settings.host.write_text)
        # file operations run in a worker thread: a big file or a slow disk does not stall the event loop, and
        # the reads of one model message really run side by side
        match name:
            case "fs.read":
                return await anyio.to_thread.run_sync(
                    lambda: read_file(
                        arguments,
                        workspace,
                        max_bytes=settings.read_max_bytes,
                        unreadable=context.unreadable,
                        read=read,
                    )
                )
            case "fs.write":
                return await anyio.to_thread.run_sync(lambda: write_file(arguments, workspace, write=write))
            case "fs.edit":
                return await anyio.to_thread.run_sync(
                    lambda: edit_file(arguments, workspace, unreadable=context.unreadable, read=read, write=write)
                )
            case "fs.list":
                return await anyio.to_thread.run_sync(
                    lambda: list_files(
                        arguments, workspace, max_entries=settings.list_max_entries, unreadable=context.unreadable
                    )
                )
            case "shell.exec":
                return await run_shell(
                    arguments,
                    context,
                    default_timeout=settings.shell_timeout_sec,
                    output_limit=settings.shell_output_limit,
                    passthrough=settings.shell_env_passthrough,
                    hosted=settings.host.run,
                )
            case "web.fetch":
                sandbox = context.sandbox  # [sandbox] network = "allowlist": its allowed_domains hold for web.fetch too
                allowlist = None if sandbox.network_access else sandbox.allowed_domains
                return await fetch_page(arguments, allowlist=allowlist, named=settings.web_hosts)
            case "search.ripgrep":
                return await search(
                    arguments,
                    workspace,
                    rg=settings.ripgrep,
                    default_max=settings.search_max_results,
                    unreadable=context.unreadable,
                )
        raise ToolCallError(tool=name, reason="not a built-in tool")
