"""Loading one plugin folder: manifest resolution (P1), contents (P2), path safety (P3), verdicts (P4)."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity
from kairox.plugins._compat import ProgramProber, check_compatibility
from kairox.plugins._contents import lsp_entries, markdown_entries, mcp_entries, skills_in
from kairox.plugins._hookfile import parse_hooks
from kairox.plugins._manifest import (
    MANIFEST_DIRS,
    MANIFEST_FORMATS,
    PluginManifest,
    ToolDeclaration,
    TrustLevel,
    field_line,
    parse_manifest,
    read_json,
)
from kairox.plugins._model import (
    ContributionKind,
    Plugin,
    PluginHook,
    PluginOrigin,
    PluginTool,
    ServerEntry,
    SkillEntry,
)
from kairox.plugins._paths import (
    PluginPathError,
    climbing_root_paths,
    escaping_symlinks,
    expand_plugin_root,
    resolve_inside,
)

LAYOUT_MARKERS = ("skills", "commands", "agents", "hooks/hooks.json", ".mcp.json", ".lsp.json")
"""A folder holding any of these loads as a plugin even without a manifest."""

MAX_NAME = 64
"""The longest plugin name or version: both name a folder, and the name is part of its tools' names."""
_JSON_NAMES = {"mcp_servers": "mcpServers", "lsp_servers": "lspServers"}
"""Manifest fields whose JSON name differs from the model's."""
_TRUST_RANK = {TrustLevel.COMMUNITY: 1, TrustLevel.VERIFIED: 2, TrustLevel.OFFICIAL: 3}


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginSettings:
    """What configuration says about one plugin."""

    enabled: bool = True
    disabled_contributions: frozenset[str] = frozenset()
    disabled_reason: str | None = None
    held_by_trust: bool = False
    """Off because the workspace (or what changed in it) waits for ``kairox trust``."""


def find_manifests(root: Path) -> tuple[Path | None, tuple[Path, ...]]:
    """The authoritative manifest (resolution order) and every other ``.*-plugin/plugin.json`` beside it."""
    ordered = [root / d / "plugin.json" for d in MANIFEST_DIRS]
    found = [p for p in ordered if p.is_file()]
    extra = sorted(p for p in root.glob(".*-plugin/plugin.json") if p.is_file() and p not in ordered)
    if not found:
        return None, tuple(extra)
    return found[0], (*found[1:], *extra)


def has_layout(root: Path) -> bool:
    return any((root / marker).exists() for marker in LAYOUT_MARKERS)


def effective_trust(origin_trust: TrustLevel, claimed: TrustLevel | None) -> TrustLevel:
    """A manifest's own ``trust`` claim can only lower the trust its origin gives it."""
    if origin_trust is TrustLevel.LOCAL or claimed is None or claimed is TrustLevel.LOCAL:
        return origin_trust
    return claimed if _TRUST_RANK[claimed] < _TRUST_RANK[origin_trust] else origin_trust


class _PluginRefused(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.reason)
        self.diagnostic = diagnostic


class _Loader:
    def __init__(self, root: Path, name: str, manifest: PluginManifest, source: str) -> None:
        self.root, self.name, self.manifest, self.source = root, name, manifest, source
        self.diagnostics: list[Diagnostic] = []

    def refuse(self, reason: str, hint: str | None = None, *, field: str | None = None) -> _PluginRefused:
        line = self.field_line(field) if field else None
        return _PluginRefused(
            ExtensionLoadFailure(kind="plugin", name=self.name, reason=reason, source=self.source, line=line, hint=hint)
        )

    def field_line(self, field: str) -> int | None:
        """The line of the manifest where ``field`` (its JSON name) is written, when the manifest is a file."""
        return field_line(Path(self.source), _JSON_NAMES.get(field, field))

    def warn(self, reason: str, *, source: str | None = None, severity: Severity = Severity.WARNING) -> None:
        self.diagnostics.append(
            Diagnostic(kind="plugin", name=self.name, reason=reason, source=source or self.source, severity=severity)
        )

    def paths(self, field: str, declared: str | list[str] | None, default: str) -> list[Path]:
        """The default folder (when present) and the manifest's paths for ``field``, each kept inside."""
        items = [declared] if isinstance(declared, str) else list(declared or [])
        resolved: list[Path] = []
        default_path = self.root / default
        if default_path.exists():
            resolved.append(resolve_inside(self.root, default))
        for item in items:
            try:
                path = resolve_inside(self.root, item)
            except PluginPathError as exc:
                raise self.refuse(
                    f"{field}: {exc}",
                    hint="plugin paths are relative to the plugin folder and stay inside it",
                    field=field,
                ) from exc
            if not path.exists():
                self.warn(f"{field}: {item!r} does not exist in the plugin")
                continue
            if path not in resolved:
                resolved.append(path)
        return resolved

    def json_file(self, field: str, relative: str) -> tuple[Any, str] | None:
        try:
            path = resolve_inside(self.root, relative)
        except PluginPathError as exc:
            raise self.refuse(f"{field}: {exc}", field=field) from exc
        if not path.is_file():
            self.warn(f"{field}: {relative!r} does not exist in the plugin")
            return None
        data, problem = read_json(path)
        if problem is not None:
            self.diagnostics.append(problem)
            return None
        return data, str(path)

    def tools(self) -> list[PluginTool]:
        tools = []
        for declaration in self.manifest.tools:
            for text in (declaration.command, *declaration.args, *declaration.env.values()):
                climbing = climbing_root_paths(text, self.root)
                if climbing:
                    raise self.refuse(
                        f"tools.{declaration.name} names {climbing[0]!r}, outside the plugin folder", field="tools"
                    )
            command = expand_plugin_root(declaration.command, self.root)
            program, _, rest = command.strip().partition(" ")
            if "/" in program and not Path(program).is_absolute():
                # a relative program path is a file of the plugin
                try:
                    program = str(resolve_inside(self.root, program))
                except PluginPathError as exc:
                    raise self.refuse(f"tools.{declaration.name}.command: {exc}", field="tools") from exc
                command = f"{program} {rest}".strip()
            expanded = ToolDeclaration.model_validate(
                {
                    **declaration.model_dump(by_alias=True),
                    "command": command,
                    "args": [expand_plugin_root(a, self.root) for a in declaration.args],
                    "env": {k: expand_plugin_root(v, self.root) for k, v in declaration.env.items()},
                }
            )
            tools.append(PluginTool(plugin=self.name, declaration=expanded, root=self.root))
        return tools

    def hooks(self, trust: TrustLevel) -> list[PluginHook]:
        hooks: list[PluginHook] = []
        default = self.root / "hooks" / "hooks.json"
        sources: list[tuple[Any, str, bool]] = []
        if default.is_file():
            data, problem = read_json(default)
            if problem is not None:
                self.diagnostics.append(problem)
            else:
                sources.append((data, str(default), False))
        declared = self.manifest.hooks
        if isinstance(declared, str):
            try:
                target = resolve_inside(self.root, declared)
            except PluginPathError as exc:
                raise self.refuse(f"hooks: {exc}", field="hooks") from exc
            if not (default.is_file() and target == default.resolve()):
                loaded = self.json_file("hooks", declared)
                if loaded is not None:
                    sources.append((*loaded, False))
        elif declared is not None:
            raw = [d.model_dump(exclude_none=True) for d in declared] if isinstance(declared, list) else declared
            sources.append((raw, self.source, True))
        for data, source, inline in sources:
            found, problems = parse_hooks(
                data, plugin=self.name, trust=str(trust), root=self.root, source=source, inline=inline
            )
            hooks += found
            self.diagnostics += problems
        return hooks

    def servers(self, kind: str) -> list[ServerEntry]:
        key, sibling = ("mcp_servers", ".mcp.json") if kind == "mcp" else ("lsp_servers", ".lsp.json")
        convert = mcp_entries if kind == "mcp" else lsp_entries
        sources: list[tuple[Any, str]] = []
        if (self.root / sibling).is_file():
            data, problem = read_json(self.root / sibling)
            if problem is not None:
                self.diagnostics.append(problem)
            else:
                sources.append((data, str(self.root / sibling)))
        declared = getattr(self.manifest, key)
        if isinstance(declared, str):
            loaded = self.json_file(key, declared)
            if loaded is not None and loaded[1] != str((self.root / sibling).resolve()):
                sources.append(loaded)
        elif declared is not None:
            sources.append((declared, self.source))
        entries: dict[str, ServerEntry] = {}
        for data, source in sources:
            found, problems = convert(data, plugin=self.name, root=self.root, source=source)
            self.diagnostics += problems
            for entry in found:
                if entry.name in entries:
                    self.warn(
                        f"{kind.upper()} server {entry.name!r} is declared twice; the one in {source} wins",
                        source=source,
                    )
                entries[entry.name] = entry
        return list(entries.values())


def load_plugin(
    root: Path,
    *,
    origin: PluginOrigin,
    trust: TrustLevel = TrustLevel.LOCAL,
    settings: PluginSettings | None = None,
    fallback: dict[str, Any] | None = None,
    marketplace: str | None = None,
    prober: ProgramProber | None = None,
) -> tuple[Plugin | None, list[Diagnostic]]:
    """Load the plugin in ``root``; every problem is a diagnostic, a refused plugin gives ``None``.

    ``fallback`` is a marketplace entry used as the manifest when the folder has none (``strict: false``).
    """
    settings = settings or PluginSettings()
    root = root.resolve()
    if not root.is_dir():
        return None, [
            ExtensionLoadFailure(
                kind="plugin", name=root.name, reason="the plugin folder does not exist", source=str(root)
            )
        ]
    manifest_path, others = find_manifests(root)
    diagnostics: list[Diagnostic] = []
    data: Any
    if manifest_path is not None:
        # a manifest that cannot be read still names its plugin (by folder), so reports group it right
        data, problem = read_json(manifest_path, name=root.name)
        if problem is not None:
            return None, [problem]
        manifest_format, source = MANIFEST_FORMATS[manifest_path.parent.name], str(manifest_path)
    elif fallback is not None:
        data, manifest_format, source = dict(fallback), "marketplace", str(root)
        for key in ("source", "category", "tags", "strict", "displayName"):
            data.pop(key, None)
    elif has_layout(root):
        data, manifest_format, source = {}, "layout", str(root)
    else:
        reason = "no manifest (.kairox-plugin, .codex-plugin or .claude-plugin /plugin.json) and no plugin layout"
        return None, [ExtensionLoadFailure(kind="plugin", name=root.name, reason=reason, source=str(root))]
    manifest, problems = parse_manifest(data, source=Path(source), plugin=root.name)
    diagnostics += problems
    if manifest is None:
        return None, diagnostics
    name = (manifest.name or "").strip() or root.name
    refused: str | None = None
    field = "name"
    if any(c in ":/\\ " or not c.isprintable() for c in name) or name.startswith("."):
        refused = "the plugin name may not contain ':', '/', spaces or control characters, or start with '.'"
    elif len(name) > MAX_NAME:
        refused = f"the plugin name is {len(name)} characters long; at most {MAX_NAME} are allowed"
    elif len(manifest.version or "") > MAX_NAME:
        refused, field = (
            f"the version is {len(manifest.version or '')} characters long; at most {MAX_NAME} are allowed",
            "version",
        )
    if refused is not None:  # each is a folder name of the installed plugin, and part of its tools' names
        line = field_line(Path(source), field) if manifest_path is not None else None
        return None, [
            *diagnostics,
            ExtensionLoadFailure(kind="plugin", name=name, reason=refused, source=source, line=line),
        ]
    links = escaping_symlinks(root)
    if links:
        link, target = links[0]
        reason = f"symlink {link.relative_to(root)} points outside the plugin ({target}); the plugin is refused"
        return None, [
            *diagnostics,
            ExtensionLoadFailure(
                kind="plugin", name=name, reason=reason, source=str(link), hint="replace the link with the file itself"
            ),
        ]
    loader = _Loader(root, name, manifest, source)
    trust_level = effective_trust(trust, manifest.trust)
    try:
        skills = [e for p in loader.paths("skills", manifest.skills, "skills") for e in skills_in(p, name)]
        commands = [
            e
            for p in loader.paths("commands", manifest.commands, "commands")
            for e in markdown_entries(p, name, ContributionKind.COMMAND)
        ]
        agents = [
            e
            for p in loader.paths("agents", manifest.agents, "agents")
            for e in markdown_entries(p, name, ContributionKind.AGENT)
        ]
        tools = loader.tools()
        hooks = loader.hooks(trust_level)
        mcp = loader.servers("mcp")
        lsp = loader.servers("lsp")
    except _PluginRefused as stop:
        return None, [*diagnostics, *loader.diagnostics, stop.diagnostic]
    diagnostics += loader.diagnostics
    diagnostics += _duplicates(name, source, skills + commands)
    compat = manifest.compatibility
    verdict = check_compatibility(
        compat.kairox_version if compat else None,
        compat.platforms if compat else None,
        compat.requires if compat else None,
        prober=prober,
    )
    if not verdict.compatible:
        diagnostics.append(
            Diagnostic(
                kind="plugin",
                name=name,
                reason="incompatible: " + "; ".join(verdict.reasons),
                source=source,
                hint="it stays disabled until that changes",
            )
        )
    plugin = Plugin(
        name=name,
        root=root,
        manifest=manifest,
        manifest_path=manifest_path,
        manifest_format=manifest_format,
        other_manifests=others,
        origin=origin,
        trust=trust_level,
        compatibility=verdict,
        enabled=settings.enabled,
        disabled_reason=settings.disabled_reason,
        held_by_trust=settings.held_by_trust,
        disabled_contributions=settings.disabled_contributions,
        marketplace=marketplace,
        skills=tuple(skills),
        commands=tuple(commands),
        agents=tuple(agents),
        tools=tuple(tools),
        hooks=tuple(hooks),
        mcp_servers=tuple(mcp),
        lsp_servers=tuple(lsp),
        diagnostics=tuple(diagnostics),
    )
    return plugin, diagnostics


def _duplicates(plugin: str, source: str, entries: list[SkillEntry]) -> list[Diagnostic]:
    seen: dict[str, SkillEntry] = {}
    problems: list[Diagnostic] = []
    for entry in entries:
        if entry.name in seen:
            problems.append(
                Diagnostic(
                    kind="plugin",
                    name=plugin,
                    reason=(
                        f"{entry.kind} {entry.name!r} ({entry.path}) has the same name "
                        f"as {seen[entry.name].path}; the skill registry keeps one"
                    ),
                    source=source,
                    severity=Severity.INFO,
                )
            )
        else:
            seen[entry.name] = entry
    return problems
