"""Routing as data (P5): what of each active plugin goes to the skill registry, the ToolRegistry, the server
managers and the hook registry. The runtime does the wiring; nothing here imports those packages."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kairox.config import LspServerConfig, McpServerConfig
from kairox.errors import Diagnostic, Severity
from kairox.plugins._manifest import PluginPermissions
from kairox.plugins._model import ContributionKind, Plugin, PluginHook, PluginTool, ServerEntry, SkillEntry


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginRouting:
    """Every enabled contribution of every active plugin, ready to hand to its owner."""

    skills: tuple[SkillEntry, ...] = ()
    """Skills and commands (commands are user-invocable skills); register each as ``entry.qualified_name``."""
    skill_roots: tuple[tuple[str, Path], ...] = ()
    """``(plugin, folder)`` pairs in the shape ``kairox.skills.registry_from_config(plugin_roots=...)`` takes:
    each enabled skill's folder, and each folder of commands with at least one enabled command."""
    disabled_skills: frozenset[str] = frozenset()
    """Qualified names (``<plugin>:<name>``) of disabled skills and commands: drop them after discovery,
    since a command folder given as a root also holds the disabled ones."""
    tools: tuple[PluginTool, ...] = ()
    """Command tools; serve them with ``plugin_tool_providers(routing.tools, routing.permissions)``."""
    permissions: dict[str, PluginPermissions] = field(default_factory=dict)
    """Each active plugin's manifest ``permissions`` (narrow the user's policy with ``narrow_policy``)."""
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    lsp_servers: dict[str, LspServerConfig] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)
    """``"mcp_servers.<name>"`` / ``"lsp_servers.<name>"`` -> ``"plugin:<plugin>"``."""
    server_entries: tuple[ServerEntry, ...] = ()
    """The chosen MCP and LSP entries with their plugin and declaring file (for per-file provenance)."""
    hooks: tuple[PluginHook, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()


def _servers(
    plugins: Iterable[Plugin],
    kind: ContributionKind,
    taken: Mapping[str, object],
    section: str,
    provenance: dict[str, str],
    diagnostics: list[Diagnostic],
) -> dict[str, ServerEntry]:
    chosen: dict[str, ServerEntry] = {}
    for plugin in plugins:
        entries = plugin.mcp_servers if kind is ContributionKind.MCP_SERVER else plugin.lsp_servers
        for entry in entries:
            if not plugin.is_enabled(kind, entry.name):
                continue
            if entry.name in taken:
                diagnostics.append(
                    Diagnostic(
                        kind=str(kind),
                        name=entry.name,
                        reason=(
                            f"plugin {plugin.name} brings a server named like "
                            f"[{section}.{entry.name}]; the user's entry wins"
                        ),
                        source=entry.source,
                        severity=Severity.INFO,
                    )
                )
                continue
            first = chosen.get(entry.name)
            if first is not None:
                if first.config != entry.config:
                    diagnostics.append(
                        Diagnostic(
                            kind=str(kind),
                            name=entry.name,
                            reason=(
                                f"plugins {first.plugin} and {plugin.name} both bring a "
                                f"different server {entry.name!r}; {first.plugin}'s is used"
                            ),
                            source=entry.source,
                            hint=(
                                "disable one with `kairox plugins disable "
                                f"{plugin.name} --contribution {kind}:{entry.name}`"
                            ),
                        )
                    )
                continue
            chosen[entry.name] = entry
            provenance[f"{section}.{entry.name}"] = entry.provenance
    return chosen


def _command_root(entry: SkillEntry) -> Path:
    """The folder a command file sits in, up to the plugin's commands folder (``git:commit`` is two deep)."""
    return entry.path.parents[entry.name.count(":")]


def route_plugins(
    plugins: Iterable[Plugin],
    *,
    mcp_servers: Mapping[str, object] | None = None,
    lsp_servers: Mapping[str, object] | None = None,
) -> PluginRouting:
    """Collect the enabled contributions of the active plugins.

    ``mcp_servers`` / ``lsp_servers`` are the user's own server tables: a plugin server of the same name is
    left out (the user's entry wins). Two plugins bringing the same server with the same settings share it.
    """
    active = [p for p in plugins if p.active]
    diagnostics: list[Diagnostic] = []
    provenance: dict[str, str] = {}
    skills = [
        entry
        for plugin in active
        for entry in (*plugin.skills, *plugin.commands)
        if plugin.is_enabled(entry.kind, entry.name)
    ]
    roots: list[tuple[str, Path]] = []
    for entry in skills:
        folder = entry.path if entry.kind is ContributionKind.SKILL else _command_root(entry)
        if (entry.plugin, folder) not in roots:
            roots.append((entry.plugin, folder))
    disabled = frozenset(
        entry.qualified_name
        for plugin in active
        for entry in (*plugin.skills, *plugin.commands)
        if not plugin.is_enabled(entry.kind, entry.name)
    )
    tools = [t for p in active for t in p.tools if p.is_enabled(ContributionKind.TOOL, t.declaration.name)]
    hooks = [h for p in active for h in p.hooks if p.is_enabled(ContributionKind.HOOK, h.name)]
    mcp = _servers(active, ContributionKind.MCP_SERVER, mcp_servers or {}, "mcp_servers", provenance, diagnostics)
    lsp = _servers(active, ContributionKind.LSP_SERVER, lsp_servers or {}, "lsp_servers", provenance, diagnostics)
    return PluginRouting(
        skills=tuple(skills),
        skill_roots=tuple(roots),
        disabled_skills=disabled,
        tools=tuple(tools),
        permissions={p.name: p.permissions for p in active},
        mcp_servers={name: e.config for name, e in mcp.items() if isinstance(e.config, McpServerConfig)},
        lsp_servers={name: e.config for name, e in lsp.items() if isinstance(e.config, LspServerConfig)},
        provenance=provenance,
        server_entries=(*mcp.values(), *lsp.values()),
        hooks=tuple(hooks),
        diagnostics=tuple(diagnostics),
    )
