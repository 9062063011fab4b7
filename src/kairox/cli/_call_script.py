"""Many tool calls in one process: ``kairox tools call --script FILE`` (JSON lines) and ``--interactive``.

One process keeps its servers and sessions between calls, so a debug session started by ``dap.launch`` can be
stepped, inspected and continued by the calls after it.
"""

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox.cli._common import ExitCode

PROMPT = "kairox> "
QUIT_WORDS = frozenset({"exit", "quit", ":q"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptCall:
    tool: str
    arguments: dict[str, Any]
    where: str
    """``FILE:LINE`` of the call (``<stdin>:N`` at the prompt), for messages."""


class ScriptLineError(ValueError):
    """A line of a call script (or of the prompt) that is not a call; says where and what a call looks like."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f'{where}: {reason}; a call is {{"tool": NAME, "arguments": {{...}}}}')
        self.where = where


def parse_script_line(text: str, where: str) -> ScriptCall | None:
    """One JSON line ``{"tool": ..., "arguments": {...}}``; None for a blank line or a ``#`` comment."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ScriptLineError(where, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict) or not isinstance(value.get("tool"), str) or not value["tool"]:
        raise ScriptLineError(where, 'no "tool" name')
    arguments = value.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ScriptLineError(where, '"arguments" must be a JSON object')
    unknown = sorted(set(value) - {"tool", "arguments"})
    if unknown:
        raise ScriptLineError(where, f"unknown keys {', '.join(unknown)}")
    return ScriptCall(tool=value["tool"], arguments=arguments, where=where)


def read_script(path: Path) -> list[ScriptCall]:
    """Every call of a script file, checked before the first one runs."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptLineError(str(path), f"cannot read the script ({exc})") from None
    calls = []
    for number, line in enumerate(text.splitlines(), start=1):
        call = parse_script_line(line, f"{path}:{number}")
        if call is not None:
            calls.append(call)
    return calls


def parse_prompt_line(text: str, where: str) -> ScriptCall | None:
    """At the prompt: ``TOOL [JSON-ARGUMENTS]``, or a script line ``{"tool": ...}``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return parse_script_line(stripped, where)
    if not stripped or stripped.startswith("#"):
        return None
    tool, _, rest = stripped.partition(" ")
    if not rest.strip():
        return ScriptCall(tool=tool, arguments={}, where=where)
    try:
        arguments = json.loads(rest)
    except json.JSONDecodeError as exc:
        raise ScriptLineError(where, f"the arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(arguments, dict):
        raise ScriptLineError(where, "the arguments must be a JSON object")
    return ScriptCall(tool=tool, arguments=arguments, where=where)


def read_prompt_line() -> str | None:
    """Show the prompt on stderr and read one line; None at end of input or ``exit``."""
    sys.stderr.write(PROMPT)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return None if not line or line.strip() in QUIT_WORDS else line


def worst_exit(codes: list[ExitCode]) -> ExitCode:
    """The exit code of a run of calls: the first failure's, OK when every call succeeded."""
    return next((code for code in codes if code is not ExitCode.OK), ExitCode.OK)
