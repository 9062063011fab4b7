"""What a loaded plugin is, as data the runtime routes: skills, commands, tools, hooks, servers."""

import enum
from dataclasses import dataclass, field
from pathlib import Path

from kairox.config import LspServerConfig, McpServerConfig
from kairox.errors import Diagnostic
from kairox.plugins._compat import CompatibilityVerdict
from kairox.plugins._manifest import PluginManifest, PluginPermissions, ToolDeclaration, TrustLevel


class ContributionKind(enum.StrEnum):
    SKILL = "skill"
    COMMAND = "command"
    AGENT = "agent"
    TOOL = "tool"
    HOOK = "hook"
    MCP_SERVER = "mcp_server"
    LSP_SERVER = "lsp_server"


class PluginOrigin(enum.StrEnum):
    """Where a plugin was found."""

    INSTALLED = "installed"
    """``$KAIROX_HOME/plugins/<marketplace>/<plugin>/<version>``, installed from a marketplace."""
    USER = "user"
    """A plugin folder put directly in ``$KAIROX_HOME/plugins/<name>``."""
    WORKSPACE = "workspace"
    """``.kairox/plugins/<name>`` of the workspace (waits for workspace trust)."""
    PATH = "path"
    """A folder listed in ``[plugins] paths`` or ``[plugins.entries.NAME] path``."""
    VALIDATE = "validate"
    """A folder given to ``kairox plugins validate``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillEntry:
    """One skill (or command, exposed as a user-invocable skill) of a plugin."""

    plugin: str
    name: str
    """The name inside the plugin; the skill registry sees ``<plugin>:<name>``."""
    path: Path
    """The skill folder (holding ``SKILL.md``) or the markdown file."""
    kind: ContributionKind = ContributionKind.SKILL

    @property
    def qualified_name(self) -> str:
        return f"{self.plugin}:{self.name}"


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginTool:
    plugin: str
    declaration: ToolDeclaration
    """With ``${KAIROX_PLUGIN_ROOT}`` already expanded in command, args and env."""
    root: Path


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginHook:
    """One command hook a plugin declares; the hook registry turns it into a runnable hook."""

    event: str
    """Kairox's event name (``pre_tool_use``...), Claude Code's names already mapped."""
    command: str
    matcher: str | None
    timeout_sec: float
    plugin: str
    trust: str
    plugin_root: Path
    source: str
    """The file that declares it (``hooks/hooks.json``, ``plugin.json``)."""
    name: str
    """Contribution name: the event, numbered when the plugin has several hooks for it."""
    scripts: tuple[Path, ...] = ()
    """Files of the plugin the command names: hashed for approval, so a changed script asks again."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerEntry:
    """An MCP or LSP server a plugin brings, as the config entry the server managers take."""

    name: str
    config: McpServerConfig | LspServerConfig
    plugin: str
    source: str

    @property
    def provenance(self) -> str:
        return f"plugin:{self.plugin}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Contribution:
    kind: ContributionKind
    name: str
    enabled: bool = True
    path: str | None = None
    detail: str | None = None

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": str(self.kind),
            "name": self.name,
            "enabled": self.enabled,
            "path": self.path,
            "detail": self.detail,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Plugin:
    """A plugin that loaded: its manifest, what it contributes, whether it may run here."""

    name: str
    root: Path
    manifest: PluginManifest
    manifest_path: Path | None
    """The authoritative manifest; ``None`` for a folder loaded by its layout or a marketplace entry."""
    manifest_format: str
    """``kairox``, ``codex``, ``claude``, ``marketplace`` or ``layout``."""
    other_manifests: tuple[Path, ...] = ()
    origin: PluginOrigin
    trust: TrustLevel
    compatibility: CompatibilityVerdict
    enabled: bool = True
    disabled_reason: str | None = None
    held_by_trust: bool = False
    """Off until ``kairox trust`` (an untrusted workspace's plugin, or one new or changed since it was trusted)."""
    disabled_contributions: frozenset[str] = frozenset()
    marketplace: str | None = None
    skills: tuple[SkillEntry, ...] = ()
    commands: tuple[SkillEntry, ...] = ()
    agents: tuple[SkillEntry, ...] = ()
    tools: tuple[PluginTool, ...] = ()
    hooks: tuple[PluginHook, ...] = ()
    mcp_servers: tuple[ServerEntry, ...] = ()
    lsp_servers: tuple[ServerEntry, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    installed_version: str | None = None
    """The version an install recorded (its folder name), for an installed plugin whose manifest names none."""

    @property
    def version(self) -> str | None:
        return self.manifest.version or self.installed_version

    @property
    def permissions(self) -> PluginPermissions:
        return self.manifest.permissions or PluginPermissions()

    @property
    def active(self) -> bool:
        """Enabled and compatible: its contributions are routed."""
        return self.enabled and self.compatibility.compatible

    def is_enabled(self, kind: ContributionKind, name: str) -> bool:
        """Whether one contribution is loaded: the plugin is active and ``kind:name`` is not disabled."""
        if not self.active:
            return False
        key = f"{kind}:{name}"
        return key not in self.disabled_contributions and not (
            kind is ContributionKind.HOOK and f"{kind}:{name.split('.')[0]}" in self.disabled_contributions
        )

    def contributions(self) -> tuple[Contribution, ...]:
        items: list[Contribution] = []
        for entries in (self.skills, self.commands, self.agents):
            items += [Contribution(kind=e.kind, name=e.name, path=str(e.path)) for e in entries]
        items += [
            Contribution(kind=ContributionKind.TOOL, name=t.declaration.name, detail=t.declaration.command)
            for t in self.tools
        ]
        items += [
            Contribution(
                kind=ContributionKind.HOOK, name=h.name, path=h.source, detail=f"{h.matcher or '*'}: {h.command}"
            )
            for h in self.hooks
        ]
        items += [Contribution(kind=ContributionKind.MCP_SERVER, name=s.name, path=s.source) for s in self.mcp_servers]
        items += [Contribution(kind=ContributionKind.LSP_SERVER, name=s.name, path=s.source) for s in self.lsp_servers]
        return tuple(
            Contribution(
                kind=c.kind, name=c.name, enabled=self.is_enabled(c.kind, c.name), path=c.path, detail=c.detail
            )
            for c in items
        )
