"""The trace panel's data: one row per MCP, LSP and DAP server, kept current from lifecycle events, and one
line per event worth reading (tool calls and decisions, hooks, approvals, server transitions, load failures).
Plain data: the widgets only render it."""

import enum
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kairox.agent import ApprovalRequested, ModelFailed, ModelRequestRetried, TurnEnded, TurnHookOutcome
from kairox.dap import DapServerFailed, DapServerRunning, DapServerStarting, DapServerStopped
from kairox.errors import Diagnostic, Severity
from kairox.events import Event
from kairox.hooks import HookFinished
from kairox.lsp import LspServerFailed, LspServerRunning, LspServerStarting, LspServerStopped
from kairox.mcp import (
    McpServerFailed,
    McpServerReady,
    McpServerRestarting,
    McpServerStarting,
    McpServerStopped,
    McpToolsChanged,
)
from kairox.registry import ToolCallApprovalAnswered, ToolCallDecided, ToolCallFinished

if TYPE_CHECKING:
    from kairox.runtime import ExtensionContext


class ServerMark(enum.StrEnum):
    """What the trace panel shows for a server: the MCP statuses and the LSP/DAP ones mapped onto one set."""

    READY = "ready"
    RUNNING = "running"
    STARTING = "starting"
    FAILED = "failed"
    STOPPED = "stopped"
    DISABLED = "disabled"
    PENDING_TRUST = "pending trust"
    IDLE = "idle"
    """A language or debug server that starts on first use."""


MARKS: dict[ServerMark, tuple[str, str]] = {
    ServerMark.READY: ("●", "green"),
    ServerMark.RUNNING: ("●", "green"),
    ServerMark.STARTING: ("◐", "yellow"),
    ServerMark.FAILED: ("●", "red"),
    ServerMark.STOPPED: ("○", "grey50"),
    ServerMark.DISABLED: ("⊘", "grey50"),
    ServerMark.PENDING_TRUST: ("◇", "magenta"),
    ServerMark.IDLE: ("◌", "cyan"),
}

_MCP = {
    "ready": ServerMark.READY, "starting": ServerMark.STARTING, "failed": ServerMark.FAILED, "stopped": ServerMark.STOPPED,
    "disabled": ServerMark.DISABLED, "pending_trust": ServerMark.PENDING_TRUST,
}
_RPC = {"running": ServerMark.RUNNING, "starting": ServerMark.STARTING, "failed": ServerMark.FAILED, "stopped": ServerMark.STOPPED}


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerRow:
    kind: str
    """``mcp``, ``lsp`` or ``dap``."""
    name: str
    status: ServerMark
    tools: int | None = None
    started: float | None = None
    """When it last became Ready / Running (seconds since the epoch)."""
    error: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TraceEntry:
    text: str
    server: str | None = None
    error: bool = False


class ServerBoard:
    """The rows of the trace panel, keyed by (kind, name), changed by :meth:`apply`."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.rows: dict[tuple[str, str], ServerRow] = {}
        self._clock = clock

    def put(self, row: ServerRow) -> None:
        self.rows[(row.kind, row.name)] = row

    def _change(self, kind: str, name: str, **changes: Any) -> ServerRow:
        row = self.rows.get((kind, name)) or ServerRow(kind=kind, name=name, status=ServerMark.STOPPED)
        row = replace(row, **changes)
        self.put(row)
        return row

    def sorted_rows(self) -> list[ServerRow]:
        order = {"mcp": 0, "lsp": 1, "dap": 2}
        return sorted(self.rows.values(), key=lambda r: (order.get(r.kind, 9), r.name))

    def apply(self, event: Event) -> ServerRow | None:
        """Take one event; the row it changed, if any."""
        now = self._clock()
        match event:
            case McpServerStarting(server=name):
                return self._change("mcp", name, status=ServerMark.STARTING)
            case McpServerReady(server=name, tools=tools):
                return self._change("mcp", name, status=ServerMark.READY, tools=tools, started=now, error=None)
            case McpServerFailed(server=name, reason=reason):
                return self._change("mcp", name, status=ServerMark.FAILED, error=reason)
            case McpServerStopped(server=name):
                return self._change("mcp", name, status=ServerMark.STOPPED)
            case McpToolsChanged(server=name, tools=tools):
                return self._change("mcp", name, tools=len(tools))
            case LspServerStarting(server=name) | DapServerStarting(server=name):
                return self._change(_kind(event), name, status=ServerMark.STARTING)
            case LspServerRunning(server=name) | DapServerRunning(server=name):
                return self._change(_kind(event), name, status=ServerMark.RUNNING, started=now, error=None)
            case LspServerFailed(server=name, reason=reason) | DapServerFailed(server=name, reason=reason):
                return self._change(_kind(event), name, status=ServerMark.FAILED, error=reason)
            case LspServerStopped(server=name) | DapServerStopped(server=name):
                return self._change(_kind(event), name, status=ServerMark.STOPPED)
        return None

    def sync(self, context: "ExtensionContext") -> None:
        """Every configured server, as the running context has it (servers that were never started emit no
        event: disabled, pending trust, language servers waiting for their first use)."""
        if context.mcp is not None:
            for name, client in context.mcp.clients.items():
                old = self.rows.get(("mcp", name))
                status = _MCP.get(str(client.status), ServerMark.STOPPED)
                self.put(
                    ServerRow(
                        kind="mcp", name=name, status=status, tools=client.offered_count() if client.tools else (old.tools if old else None),
                        started=old.started if old else None,
                        error=client.lifecycle.reason if status is ServerMark.FAILED else (old.error if old else None),
                    )
                )
        resolved = context.resolved
        for section, kind, running in (("lsp_servers", "lsp", context.lsp.servers), ("dap_servers", "dap", {})):
            for name in getattr(resolved.config, section):
                old = self.rows.get((kind, name))
                if name in running:
                    server = running[name]
                    status = _RPC.get(str(server.status), ServerMark.STOPPED)
                    if status is ServerMark.STOPPED and server.starts == 0:
                        status = ServerMark.IDLE
                    self.put(replace(old, status=status) if old else ServerRow(kind=kind, name=name, status=status, error=server.reason))
                elif old is None:
                    pending = resolved.is_pending(f"{section}.{name}")
                    enabled = getattr(getattr(resolved.config, section)[name], "enabled", True)
                    status = ServerMark.PENDING_TRUST if pending else ServerMark.IDLE if enabled else ServerMark.DISABLED
                    self.put(ServerRow(kind=kind, name=name, status=status))


def _kind(event: Event) -> str:
    return "lsp" if type(event).__name__.startswith("Lsp") else "dap"


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
        case McpServerStarting(server=name, attempt=attempt):
            return TraceEntry(text=f"mcp {name}: starting" + (f" (attempt {attempt + 1})" if attempt else ""), server=name)
        case McpServerReady(server=name, tools=tools):
            return TraceEntry(text=f"mcp {name}: ready, {tools} tool(s)", server=name)
        case McpServerFailed(server=name, reason=reason, will_restart=again):
            return TraceEntry(text=f"mcp {name}: failed: {_short(reason)}" + (" (restarting)" if again else ""), server=name, error=True)
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
            return TraceEntry(text=f"tool {tool}: finished in {ms:.0f} ms{tail}", server=_server_of(tool), error=is_error)
        case ApprovalRequested(tool=tool, reason=reason, headless=headless):
            return TraceEntry(text=f"approval {tool}: asked ({_short(reason)})" + (", no one to ask" if headless else ""), server=_server_of(tool))
        case HookFinished(hook=hook, event=hook_event, exit_code=code, decision=decision, error=error, skipped=skipped):
            outcome = "skipped" if skipped else error or (decision or f"exit {code}")
            return TraceEntry(text=f"hook {hook_event} {_short(hook, 60)}: {_short(str(outcome))}", error=error is not None)
        case TurnHookOutcome(hook_event=name, hooks=count, blocked=blocked, reason=reason):
            return TraceEntry(text=f"hooks {name}: {count} ran" + (f", blocked: {reason}" if blocked else ""), error=blocked)
        case ModelFailed(provider=provider, message=message):
            return TraceEntry(text=f"model {provider}: {_short(message)}", error=True)
        case ModelRequestRetried(attempt=attempt, delay_sec=delay, reason=reason):
            return TraceEntry(text=f"model: retry {attempt} in {delay:g}s ({_short(reason)})")
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
        entries.append(TraceEntry(text=f"{item.kind} {item.name}: {_short(item.reason)}{where}", server=name, error=item.severity is Severity.ERROR))
    return entries


def _server_of(tool: str) -> str | None:
    """``mcp__notes__add`` -> ``notes``."""
    if tool.startswith("mcp__"):
        return tool[5:].split("__", 1)[0]
    return None


def compact_json(value: Any, limit: int = 4000) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return text if len(text) <= limit else text[:limit] + "\n…"
