"""Reading what a plugin folder holds: skills, commands, agents, and MCP / LSP server declarations."""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kairox.config import LspServerConfig, McpServerConfig
from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity
from kairox.plugins._model import ContributionKind, ServerEntry, SkillEntry
from kairox.plugins._paths import climbing_root_paths, expand_plugin_root

_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)
_MAX_SKILL_DEPTH = 4


_NAME_LINE = re.compile(r"^name:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def frontmatter_name(markdown: Path) -> str | None:
    """The ``name`` of a markdown file's YAML frontmatter, when it has a string one.

    A plain ``name: value`` line is read directly; anything fancier goes through the YAML parser.
    """
    try:
        text = markdown.read_text(encoding="utf-8", errors="replace")[:8_192]
    except OSError:
        return None
    match = _FRONTMATTER.match(text)
    if not match:
        return None
    line = _NAME_LINE.search(match.group(1))
    if line is not None:
        value = line.group(1)
        if value and value[0] not in "[{|>&*!'\"#" and ": " not in value and " #" not in value:
            return value
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def _skill_folders(root: Path, depth: int = 0) -> Iterator[Path]:
    if (root / "SKILL.md").is_file():
        yield root
        return
    if depth >= _MAX_SKILL_DEPTH:
        return
    for child in sorted(root.iterdir()):
        if child.is_dir() and not child.name.startswith(".") and not child.is_symlink():
            yield from _skill_folders(child, depth + 1)


def skills_in(root: Path, plugin: str) -> list[SkillEntry]:
    """Skill folders (``SKILL.md``) under ``root``, or ``root`` itself when it is one."""
    entries = []
    for folder in _skill_folders(root):
        name = frontmatter_name(folder / "SKILL.md") or folder.name
        entries.append(SkillEntry(plugin=plugin, name=name, path=folder, kind=ContributionKind.SKILL))
    return entries


def markdown_entries(root: Path, plugin: str, kind: ContributionKind) -> list[SkillEntry]:
    """Commands or agents: a markdown file, or every ``*.md`` under a folder (subfolders become ``sub:name``)."""
    if root.is_file():
        return [SkillEntry(plugin=plugin, name=root.stem, path=root, kind=kind)] if root.suffix == ".md" else []
    entries = []
    for file in sorted(root.rglob("*.md")):
        relative = file.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or file.name.lower() == "readme.md":
            continue
        name = ":".join((*relative.parts[:-1], file.stem))
        entries.append(SkillEntry(plugin=plugin, name=name, path=file, kind=kind))
    return entries


# --- servers -------------------------------------------------------------------------------------------------

_MCP_TYPES = {"http": "streamable_http", "streamable-http": "streamable_http", "streamableHttp": "streamable_http"}
_MCP_FIELDS = set(McpServerConfig.model_fields)
_MCP_RENAMES = {"startupTimeoutSec": "startup_timeout_sec", "toolTimeoutSec": "tool_timeout_sec"}


def _climbing(raw: dict[str, Any], root: Path) -> str | None:
    """Why a server entry is refused: a path from the plugin root that leads out of it (P3); else None."""
    for key in ("command", "args", "cwd", "env"):
        value = raw.get(key)
        texts = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
        for text in texts:
            found = climbing_root_paths(text, root) if isinstance(text, str) else []
            if found:
                return f"{key} names {found[0]!r}, outside the plugin folder; the server is skipped"
    return None


def _usable(
    table: dict[str, Any], kind: str, *, root: Path, source: str, diagnostics: list[Diagnostic]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The entries of a server table that are JSON objects whose paths stay in the plugin folder; each other entry
    is refused with an ``ExtensionLoadFailure`` in ``diagnostics``."""
    for name, raw in table.items():
        reason = _climbing(raw, root) if isinstance(raw, dict) else "the server entry must be a JSON object"
        if reason is None:
            yield name, raw
        else:
            diagnostics.append(ExtensionLoadFailure(kind=kind, name=name, reason=reason, source=source))


def expand_plugin_values(value: Any, root: Path) -> Any:
    """``${KAIROX_PLUGIN_ROOT}`` expanded in every string of ``value`` (a server entry)."""
    if isinstance(value, str):
        return expand_plugin_root(value, root)
    if isinstance(value, list):
        return [expand_plugin_values(v, root) for v in value]
    if isinstance(value, dict):
        return {k: expand_plugin_values(v, root) for k, v in value.items()}
    return value


def unwrap_servers(data: Any, key: str) -> Any:
    """``{"mcpServers": {...}}`` (wrapped) or ``{...}`` (flat) -> the server table."""
    if isinstance(data, dict) and isinstance(data.get(key), dict):
        return data[key]
    return data


def mcp_entries(data: Any, *, plugin: str, root: Path, source: str) -> tuple[list[ServerEntry], list[Diagnostic]]:
    """MCP server declarations (Claude Code's ``.mcp.json`` shape) as ``McpServerConfig`` entries."""
    diagnostics: list[Diagnostic] = []
    table = unwrap_servers(data, "mcpServers")
    if not isinstance(table, dict):
        return [], [
            ExtensionLoadFailure(
                kind="mcp_server", name=plugin, reason="the MCP server table must be a JSON object", source=source
            )
        ]
    if not table:
        diagnostics.append(
            Diagnostic(
                kind="mcp_server", name=plugin, reason="declares no MCP servers", source=source, severity=Severity.INFO
            )
        )
    entries: list[ServerEntry] = []
    for name, raw in _usable(table, "mcp_server", root=root, source=source, diagnostics=diagnostics):
        fields: dict[str, Any] = {}
        for key, value in expand_plugin_values(raw, root).items():
            key = _MCP_RENAMES.get(key, key)
            if key == "type":
                value = _MCP_TYPES.get(value, value)
            elif key == "oauth":
                value = bool(value)
            elif key == "timeout" and isinstance(value, int | float):
                key, value = "tool_timeout_sec", value / 1000  # Claude Code gives milliseconds
            if key not in _MCP_FIELDS:
                diagnostics.append(
                    Diagnostic(
                        kind="mcp_server",
                        name=name,
                        reason=f"field {key!r} is not supported and is ignored",
                        source=source,
                    )
                )
                continue
            fields[key] = value
        if fields.get("command") and "cwd" not in fields and fields.get("type", "stdio") == "stdio":
            fields["cwd"] = str(root)
        empty_url = "url" in fields and not str(fields["url"]).strip()
        if empty_url:
            fields["enabled"] = False
        try:
            config = McpServerConfig.model_validate(fields)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or name}: {e['msg']}" for e in exc.errors())
            diagnostics.append(ExtensionLoadFailure(kind="mcp_server", name=name, reason=problems, source=source))
            continue
        if empty_url:
            diagnostics.append(
                Diagnostic(
                    kind="mcp_server",
                    name=name,
                    reason="its url is empty; it stays disabled",
                    source=source,
                    hint="set the url in [mcp_servers] or the plugin",
                )
            )
        entries.append(ServerEntry(name=name, config=config, plugin=plugin, source=source))
    return entries, diagnostics


def lsp_entries(data: Any, *, plugin: str, root: Path, source: str) -> tuple[list[ServerEntry], list[Diagnostic]]:
    """LSP server declarations (Claude Code's ``lspServers`` / ``.lsp.json`` shape) as ``LspServerConfig``."""
    diagnostics: list[Diagnostic] = []
    table = unwrap_servers(data, "lspServers")
    if not isinstance(table, dict):
        return [], [
            ExtensionLoadFailure(
                kind="lsp_server", name=plugin, reason="the LSP server table must be a JSON object", source=source
            )
        ]
    entries: list[ServerEntry] = []
    for name, raw in _usable(table, "lsp_server", root=root, source=source, diagnostics=diagnostics):
        raw = expand_plugin_values(raw, root)
        fields: dict[str, Any] = {
            k: raw[k]
            for k in ("command", "args", "env", "languages", "file_patterns", "settings", "enabled")
            if k in raw
        }
        mapping = raw.get("extensionToLanguage")
        if isinstance(mapping, dict):
            fields.setdefault("languages", sorted({str(v) for v in mapping.values()}))
            fields.setdefault("file_patterns", [f"*{ext}" for ext in mapping])
        if "initializationOptions" in raw:
            fields["initialization_options"] = raw["initializationOptions"]
        if isinstance(raw.get("startupTimeout"), int | float):
            fields["startup_timeout_sec"] = raw["startupTimeout"] / 1000
        ignored = sorted(
            set(raw) - set(fields) - {"extensionToLanguage", "initializationOptions", "startupTimeout", "transport"}
        )
        for key in ignored:
            diagnostics.append(
                Diagnostic(
                    kind="lsp_server",
                    name=name,
                    reason=f"field {key!r} is not supported and is ignored",
                    source=source,
                    severity=Severity.INFO,
                )
            )
        try:
            config = LspServerConfig.model_validate(fields)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or name}: {e['msg']}" for e in exc.errors())
            diagnostics.append(ExtensionLoadFailure(kind="lsp_server", name=name, reason=problems, source=source))
            continue
        entries.append(ServerEntry(name=name, config=config, plugin=plugin, source=source))
    return entries, diagnostics
