"""Claude-style ``.mcp.json`` files as another source of ``McpServerConfig`` entries (M1).

Both shapes are read: ``{"mcpServers": {"name": {...}}}`` and the flat ``{"name": {...}}``. ``type`` may be
``stdio``, ``http``, ``streamable-http``, ``streamable_http`` or ``sse``. A broken entry is reported as a
diagnostic with its file and line and left out; the others still load.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kairox._util._decode import DecodeProblem, decode_json
from kairox.config._servers import McpServerConfig
from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity

MCP_JSON = ".mcp.json"

_TYPE_ALIASES = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "streamable_http",
    "streamable-http": "streamable_http",
    "streamable_http": "streamable_http",
    "streamableHttp": "streamable_http",
}
_IGNORED_KEYS = frozenset({"description", "alwaysAllow", "autoApprove", "timeout", "transportType"})
"""Keys other hosts write that have no Kairox meaning: dropped with an info diagnostic."""


@dataclass(frozen=True, kw_only=True, slots=True)
class McpJsonFile:
    """The servers one ``.mcp.json`` declares, in file order, and what was wrong with it."""

    path: Path
    source: str
    """What the runtime records as provenance: the file path, or ``plugin:<name>``."""
    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    """Line of each server's key in the file, for messages and provenance."""
    diagnostics: tuple[Diagnostic, ...] = ()


def _line_of(text: str, name: str) -> int | None:
    needle = json.dumps(name) + ":"
    compact = json.dumps(name)
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line.replace('" :', '":') or line.strip().startswith(compact):
            return number
    return None


def _normalise(entry: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    data = dict(entry)
    ignored = [key for key in data if key in _IGNORED_KEYS]
    for key in ignored:
        data.pop(key)
    if "type" in data and isinstance(data["type"], str):
        data["type"] = _TYPE_ALIASES.get(data["type"], data["type"])
    if "disabled" in data:
        disabled = data.pop("disabled")
        if isinstance(disabled, bool):
            data.setdefault("enabled", not disabled)
    if "cwd" in data and data.get("type") in ("sse", "streamable_http"):
        data.pop("cwd")
    return data, ignored


def _validation_reason(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def read_mcp_json(path: Path, *, source: str | None = None) -> McpJsonFile:
    """Read one ``.mcp.json``. A missing file gives no servers; a broken one gives a diagnostic."""
    source = source or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return McpJsonFile(path=path, source=source)
    except OSError as exc:
        return McpJsonFile(path=path, source=source, diagnostics=(_failure(path.name, f"cannot read: {exc}", source),))
    except UnicodeDecodeError as exc:
        reason = f"cannot read: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        return McpJsonFile(
            path=path, source=source, diagnostics=(_failure(path.name, reason, source, hint="save the file as UTF-8"),)
        )
    try:
        document = decode_json(text)
    except DecodeProblem as exc:
        failure = ExtensionLoadFailure(
            kind="mcp_server",
            name=path.name,
            reason=f"not valid JSON: {exc.message}",
            source=source,
            line=exc.line,
            hint="fix the syntax at that line",
        )
        return McpJsonFile(path=path, source=source, diagnostics=(failure,))
    if not isinstance(document, dict):
        return McpJsonFile(
            path=path, source=source, diagnostics=(_failure(path.name, "the top level must be a JSON object", source),)
        )
    entries = document.get("mcpServers", document)
    if not isinstance(entries, dict):
        return McpJsonFile(
            path=path, source=source, diagnostics=(_failure(path.name, "`mcpServers` must be an object", source),)
        )

    servers: dict[str, McpServerConfig] = {}
    lines: dict[str, int] = {}
    diagnostics: list[Diagnostic] = []
    for name, entry in entries.items():
        line = _line_of(text, name)
        if line is not None:
            lines[name] = line
        if not isinstance(entry, dict):
            diagnostics.append(_failure(name, "a server entry must be a JSON object", source, line))
            continue
        data, ignored = _normalise(entry)
        if ignored:
            diagnostics.append(
                Diagnostic(
                    kind="mcp_server",
                    name=name,
                    severity=Severity.INFO,
                    source=source,
                    line=line,
                    reason=f"ignored keys Kairox does not use: {', '.join(sorted(ignored))}",
                )
            )
        try:
            servers[name] = McpServerConfig.model_validate(data)
        except ValidationError as exc:
            diagnostics.append(
                _failure(
                    name, _validation_reason(exc), source, line, hint="fix this entry; the other servers still load"
                )
            )
    return McpJsonFile(path=path, source=source, servers=servers, lines=lines, diagnostics=tuple(diagnostics))


def mcp_server_config(entry: Any) -> McpServerConfig:
    """One server entry in the ``.mcp.json`` (or Kairox's) shape; ``ValueError`` says what is wrong with it."""
    if not isinstance(entry, dict):
        raise ValueError("a server entry must be an object")
    try:
        return McpServerConfig.model_validate(_normalise(entry)[0])
    except ValidationError as exc:
        raise ValueError(_validation_reason(exc)) from None


def workspace_mcp_servers(workspace: Path) -> McpJsonFile:
    """The servers of ``<workspace>/.mcp.json`` (a project-level source: they wait for trust)."""
    return read_mcp_json(workspace / MCP_JSON)


def _failure(
    name: str, reason: str, source: str, line: int | None = None, *, hint: str | None = None
) -> ExtensionLoadFailure:
    return ExtensionLoadFailure(kind="mcp_server", name=name, reason=reason, source=source, line=line, hint=hint)
