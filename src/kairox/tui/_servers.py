"""The trace panel's data: how each server status of the runtime's server view is drawn, and one line per event
worth reading (tool calls and decisions, hooks, approvals, server transitions, load failures). Plain data: the
widgets only render it; the server rows themselves are :class:`kairox.runtime.ServerBoard`'s."""

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from kairox._rpc._status import ServerStatus
from kairox.agent import (
    ApprovalRequested,
    ModelFailed,
    ModelRequestRetried,
    SubagentEvent,
    SubagentStarted,
    SubagentStopped,
    TurnEnded,
    TurnHookOutcome,
)
from kairox.dap import DapServerFailed, DapServerRunning, DapServerStarting, DapServerStopped
from kairox.errors import Diagnostic, Severity
from kairox.events import Event
from kairox.hooks import HookFinished
from kairox.lsp import LspServerFailed, LspServerRunning, LspServerStarting, LspServerStopped
from kairox.mcp import McpServerFailed, McpServerReady, McpServerRestarting, McpServerStarting, McpServerStopped
from kairox.registry import ToolCallApprovalAnswered, ToolCallDecided, ToolCallFinished
from kairox.sandbox import EgressRefused

MARKS: dict[ServerStatus, tuple[str, str]] = {
    ServerStatus.READY: ("●", "green"),
    ServerStatus.STARTING: ("◐", "yellow"),
    ServerStatus.FAILED: ("●", "red"),
    ServerStatus.STOPPED: ("○", "grey50"),
    ServerStatus.IDLE: ("◌", "cyan"),
    ServerStatus.DISABLED: ("⊘", "grey50"),
    ServerStatus.HELD_BACK: ("◇", "magenta"),
    ServerStatus.PENDING_RETRUST: ("◇", "magenta"),
}
"""How the TUI draws each status of the runtime's server view."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TraceEntry:
    text: str
    server: str | None = None
    error: bool = False


def _kind(event: Event) -> str:
    return event.kind.partition(".")[0]


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def verdict(event: ToolCallDecided) -> str:
    """``allow by rule fs.read(./**) at kairox.toml:11``, ``ask by mode``."""
    text = f"{event.decision} by {event.source}"
    if event.rule:
        text += f" {event.rule}"
    if event.file:
        text += f" at {event.file}" + (f":{event.line}" if event.line else "")
    return text


def describe(event: Event) -> TraceEntry | None:
    """The trace line of an event, or ``None`` for events the trace leaves out (streamed text ...)."""
    match event:
        case SubagentEvent(agent=agent, inner=inner):  # a subagent's step, named
            entry = describe(inner)
            return replace(entry, text=f"{agent}: {entry.text}") if entry is not None else None
        case SubagentStarted(agent=agent, description=what, tools=tools, model=model):
            return TraceEntry(text=f"agent {agent}: started ({what}; {tools} tools, {model})")
        case SubagentStopped(agent=agent, reason=reason, tool_calls=n, input_tokens=i, output_tokens=o):
            return TraceEntry(text=f"agent {agent}: {reason} after {n} call(s), {i} tokens in / {o} out")
        case McpServerStarting(server=name, attempt=attempt):
            return TraceEntry(
                text=f"mcp {name}: starting" + (f" (attempt {attempt + 1})" if attempt else ""), server=name
            )
        case McpServerReady(server=name):  # its tool count is the table's, which counts Kairox's resource tools too
            return TraceEntry(text=f"mcp {name}: ready", server=name)
        case McpServerFailed(server=name, reason=reason, will_restart=again):
            return TraceEntry(
                text=f"mcp {name}: failed: {_short(reason)}" + (" (restarting)" if again else ""),
                server=name,
                error=True,
            )
        case McpServerRestarting(server=name, attempt=attempt, delay_sec=delay):
            return TraceEntry(text=f"mcp {name}: restart {attempt} in {delay:g}s", server=name)
        case McpServerStopped(server=name):
            return TraceEntry(text=f"mcp {name}: stopped", server=name)
        case LspServerStarting(server=name) | DapServerStarting(server=name):
            return TraceEntry(text=f"{_kind(event)} {name}: starting", server=name)
        case LspServerRunning(server=name) | DapServerRunning(server=name):
            return TraceEntry(text=f"{_kind(event)} {name}: running", server=name)
        case LspServerFailed(server=name, reason=reason) | DapServerFailed(server=name, reason=reason):
            return TraceEntry(text=f"{_kind(event)} {name}: failed: {_short(reason)}", server=name, error=True)
        case LspServerStopped(server=name) | DapServerStopped(server=name):
            return TraceEntry(text=f"{_kind(event)} {name}: stopped", server=name)
        case ToolCallDecided(tool=tool, decision=decision):
            return TraceEntry(text=f"tool {tool}: {verdict(event)}", server=_server_of(tool), error=decision == "deny")
        case ToolCallApprovalAnswered(tool=tool, approved=approved, scope=scope, reason=reason):
            word = f"approved ({scope})" if approved else "denied" + (f": {_short(reason)}" if reason else "")
            return TraceEntry(text=f"approval {tool}: {word}", server=_server_of(tool), error=not approved)
        case ToolCallFinished(tool=tool, is_error=is_error, duration_ms=ms, error=error):
            tail = f", error: {_short(error)}" if is_error and error else ""
            return TraceEntry(
                text=f"tool {tool}: finished in {ms:.0f} ms{tail}", server=_server_of(tool), error=is_error
            )
        case ApprovalRequested(tool=tool, reason=reason, headless=headless):
            return TraceEntry(
                text=f"approval {tool}: asked ({_short(reason)})" + (", no one to ask" if headless else ""),
                server=_server_of(tool),
            )
        case HookFinished(hook=hook, event=hook_event, exit_code=code, decision=decision, error=error, skipped=skipped):
            outcome = "skipped" if skipped else error or (decision or f"exit {code}")
            return TraceEntry(
                text=f"hook {hook_event} {_short(hook, 60)}: {_short(str(outcome))}", error=error is not None
            )
        case TurnHookOutcome(hook_event=name, hooks=count, blocked=blocked, reason=reason):
            return TraceEntry(
                text=f"hooks {name}: {count} ran" + (f", blocked: {reason}" if blocked else ""), error=blocked
            )
        case ModelFailed(provider=provider, message=message):
            return TraceEntry(text=f"model {provider}: {_short(message)}", error=True)
        case ModelRequestRetried(attempt=attempt, delay_sec=delay, reason=reason):
            return TraceEntry(text=f"model: retry {attempt} in {delay:g}s ({_short(reason)})")
        case EgressRefused(host=host, port=port, reason=reason):
            return TraceEntry(text=f"network {host}:{port}: refused, {_short(reason)}", error=True)
        case TurnEnded(reason=reason, message=message) if message:
            return TraceEntry(text=f"turn ended ({reason}): {_short(message)}", error=str(reason) != "completed")
    return None


def load_failures(diagnostics: Iterable[Diagnostic]) -> list[TraceEntry]:
    """The context's load failures (and warnings) as trace lines."""
    entries = []
    for item in diagnostics:
        if item.severity is Severity.INFO:
            continue
        where = f" ({item.location()})" if item.source else ""
        name = item.name if item.kind.endswith("_server") else None
        entries.append(
            TraceEntry(
                text=f"{item.kind} {item.name}: {_short(item.reason)}{where}",
                server=name,
                error=item.severity is Severity.ERROR,
            )
        )
    return entries


def _server_of(tool: str) -> str | None:
    """``mcp__notes__add`` -> ``notes``."""
    if tool.startswith("mcp__"):
        return tool[5:].split("__", 1)[0]
    return None


MAIN_ARGUMENTS = tuple("command path file_path file uri url query pattern symbol expression name".split())
"""Argument names that say what a call does, first found first: the shell command, the file, the query."""


def call_summary(arguments: Any, schema: Any = None) -> str:
    """What a call ran, on one line: its main argument (``git push origin master``, ``shop/cart.py``,
    ``lsp.definition`` ...): one of ``MAIN_ARGUMENTS``, else the first required text argument of ``schema``, else
    the first text argument. Search tools add the folder they searched (``TODO in src``)."""
    if not isinstance(arguments, dict):
        return ""
    required = list(schema.get("required") or []) if isinstance(schema, dict) else []
    texts = {
        k: v if isinstance(v, str) else " ".join(map(str, v))
        for k, v in arguments.items()
        if isinstance(v, str) or (isinstance(v, list) and v and all(isinstance(i, str | int | float) for i in v))
    }
    key = (
        next((k for k in MAIN_ARGUMENTS if texts.get(k)), None)
        or next((k for k in required if texts.get(k)), None)
        or next(iter(texts), None)
    )
    if key is None:
        return ""
    text = texts[key]
    if key in ("query", "pattern") and isinstance(arguments.get("path"), str):
        text += f" in {arguments['path']}"
    return " ".join(text.split())


def compact_json(value: Any, limit: int = 4000) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return text if len(text) <= limit else text[:limit] + "\n…"
