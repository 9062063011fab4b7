"""The prompt context (E2): what the model is told exists. Concise and deterministic: the same workspace gives
the same text, so it can be cached and compared."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox.runtime._memory import MemoryFile


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginLine:
    name: str
    version: str | None
    description: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerLine:
    name: str
    tools: int
    status: str


def _one_line(text: str | None, limit: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def render_prompt_context(
    *,
    workspace: Path,
    trusted: bool,
    profile: str | None,
    model: str | None,
    plugins: Sequence[PluginLine],
    servers: Sequence[ServerLine],
    skills_catalog: str,
    instructions: Sequence[tuple[str, str]],
    memory: Sequence[MemoryFile],
    pending_trust: int = 0,
) -> str:
    lines = [
        f"Workspace: {workspace.name}" + ("" if trusted else " (untrusted: project servers, hooks and plugins are off)")
    ]
    if plugins:
        lines += ["", "Plugins:"]
        lines += [
            f"- {p.name}"
            + (f" {p.version}" if p.version else "")
            + (f": {_one_line(p.description)}" if p.description else "")
            for p in sorted(plugins, key=lambda p: p.name)
        ]
    if skills_catalog:
        lines += ["", skills_catalog]
    if instructions:
        lines += ["", "Instructions:"]
        for source, text in instructions:
            lines.append(text if source == "config" else f"[{source}]\n{text}")
    if memory:
        lines += ["", "Project memory:"]
        for item in memory:
            lines += [f"--- {_relative(item.path, workspace)}", item.text]
    # what changes from one session to the next comes last, so the text before it stays a cacheable prefix
    lines += ["", f"Profile: {profile or 'default'}" + (f" (model {model})" if model else "")]
    if pending_trust:
        lines.append(f"{pending_trust} project setting(s) wait for the user to run `kairox trust`.")
    # a server listed from the tool cache counts while it starts (or, lazy, waits for its first call)
    connected = [s for s in servers if s.status == "ready" or (s.status in ("starting", "stopped", "idle") and s.tools)]
    if connected:
        lines += ["", "MCP servers (tools named mcp__<server>__<tool>):"]
        lines += [f"- {s.name}: {s.tools} tool(s)" for s in sorted(connected, key=lambda s: s.name)]
    return "\n".join(lines).strip() + "\n"
