"""Where plugins are found: installed, the user's plugin folder, the workspace, ``[plugins] paths`` (P1, P6)."""

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from kairox.config import KairoxConfig, join_key
from kairox.errors import Diagnostic, Severity
from kairox.plugins._catalog import MARKETPLACE_FILES, read_marketplace
from kairox.plugins._compat import ProgramProber
from kairox.plugins._load import PluginSettings, find_manifests, has_layout, load_plugin
from kairox.plugins._manifest import TrustLevel, read_json
from kairox.plugins._model import Plugin, PluginOrigin
from kairox.plugins._records import InstallRecords

_SKIP_DIRS = {"node_modules", "__pycache__", ".git", ".venv", "venv"}


class ResolvedLike(Protocol):
    """The parts of ``kairox.config.ResolvedConfig`` plugin discovery reads."""

    @property
    def config(self) -> KairoxConfig: ...
    @property
    def home(self) -> Path: ...
    @property
    def workspace(self) -> Path: ...
    @property
    def trusted(self) -> bool: ...
    def is_pending(self, key: str) -> bool: ...
    def base_dir(self, key: str) -> Path: ...
    def from_project(self, key: str) -> bool: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginSet:
    """Every plugin found (enabled or not) and every problem met on the way."""

    plugins: tuple[Plugin, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    def get(self, name: str) -> Plugin | None:
        return next((p for p in self.plugins if p.name == name), None)

    def active(self) -> tuple[Plugin, ...]:
        """Enabled, compatible plugins: the ones whose contributions are routed."""
        return tuple(p for p in self.plugins if p.active)


_UNTRUSTED_PATHS = "listed by an untrusted project layer; run `kairox trust`"
_UNTRUSTED_WORKSPACE = "workspace plugins wait for `kairox trust`"
_CHANGED_SINCE_TRUST = "new or changed since this workspace was trusted; run `kairox trust` to review"
_TRUST_REASONS = frozenset({_UNTRUSTED_PATHS, _UNTRUSTED_WORKSPACE, _CHANGED_SINCE_TRUST})
"""Why trust keeps a plugin disabled: it waits for the user's review, so what is wrong with it is still said."""


class _Gatherer:
    def __init__(self, *, by_root: bool = False) -> None:
        self.by_root = by_root
        self.plugins: dict[str, Plugin] = {}
        self.from_project: set[str] = set()
        self.roots: set[Path] = set()
        self.diagnostics: list[Diagnostic] = []

    def add(self, plugin: Plugin | None, problems: Iterable[Diagnostic], *, from_project: bool = False) -> None:
        """``from_project``: found through the workspace (its plugin folder, or a path a project file lists)."""
        if plugin is None:
            self.diagnostics += problems
            return
        if plugin.enabled or plugin.disabled_reason in _TRUST_REASONS:
            # a plugin the user disabled is not loaded for use: what its contents would warn about is not said
            # (doctor, the start of every command, the TUI's trace); `kairox plugins validate` still checks it.
            # One that waits for trust is: the review should know what is wrong with it
            self.diagnostics += problems
        self.roots.add(plugin.root)
        key = str(plugin.root) if self.by_root else plugin.name
        first = self.plugins.get(key)
        if first is not None and (key in self.from_project) != from_project:
            # a plugin the workspace brings never hides the user's own: the user's hooks and tools stay
            ours, theirs = (plugin, first) if not from_project else (first, plugin)
            self.diagnostics.append(
                Diagnostic(
                    kind="plugin",
                    name=plugin.name,
                    reason=(
                        f"the workspace plugin in {theirs.root} has the name of your "
                        f"plugin in {ours.root}; the workspace one is not loaded"
                    ),
                    source=str(theirs.root),
                    hint="rename the workspace plugin, or remove yours if the workspace one should replace it",
                )
            )
            self.plugins[key] = ours
            self.from_project.discard(key)
            return
        if first is not None:
            self.diagnostics.append(
                Diagnostic(
                    kind="plugin",
                    name=plugin.name,
                    reason=f"{plugin.root} is shadowed by the plugin of the same name in {first.root}",
                    source=str(plugin.root),
                    severity=Severity.INFO,
                )
            )
            return
        self.plugins[key] = plugin
        if from_project:
            self.from_project.add(key)

    def result(self) -> PluginSet:
        return PluginSet(plugins=tuple(self.plugins.values()), diagnostics=tuple(self.diagnostics))


def _settings(
    config: KairoxConfig, name: str, *, default_enabled: bool = True, reason: str | None = None
) -> PluginSettings:
    """``default_enabled`` False: trust holds the plugin back (``reason`` says how to allow it)."""
    held = not default_enabled
    entry = config.plugins.entries.get(name)
    if entry is None:
        return PluginSettings(
            enabled=default_enabled, disabled_reason=None if default_enabled else reason, held_by_trust=held
        )
    enabled = entry.enabled and default_enabled
    why = None if enabled else (reason if not default_enabled else "disabled in [plugins.entries]")
    return PluginSettings(
        enabled=enabled,
        disabled_contributions=frozenset(entry.disabled_contributions),
        disabled_reason=why,
        held_by_trust=held,
    )


def _peek_name(root: Path) -> str:
    """The name a folder's manifest gives (for settings lookups before loading), else the folder name."""
    manifest, _ = find_manifests(root)
    if manifest is not None:
        data, _problem = read_json(manifest)
        if isinstance(data, dict) and isinstance(data.get("name"), str) and data["name"].strip():
            return str(data["name"]).strip()
    return root.name


def discover_plugins(
    config: KairoxConfig,
    *,
    home: Path,
    workspace: Path | None = None,
    trusted: bool = True,
    base_dir: Callable[[str], Path] | None = None,
    paths_pending: bool = False,
    prober: ProgramProber | None = None,
    pending: Callable[[str], bool] | None = None,
    from_project: Callable[[str], bool] | None = None,
) -> PluginSet:
    """Find and load every plugin the configuration can see, enabled or not.

    ``base_dir(key)`` gives the folder relative paths of ``key`` are resolved against (the folder of the file
    that set it, as ``ResolvedConfig.base_dir`` does); ``home`` when not given.

    Precedence for one name: ``[plugins.entries.NAME] path``, ``[plugins] paths``, the workspace's
    ``.kairox/plugins``, ``$KAIROX_HOME/plugins/<name>``, then installed plugins. Workspace plugins and paths
    from an untrusted project layer are listed but stay disabled until the workspace is trusted, and in a
    trusted workspace while ``pending(key)`` says trust has not pinned them as they are. A plugin found through
    the workspace (``from_project(key)`` for configured paths) never hides one of the user's own of that name.
    """
    gather = _Gatherer()

    def base(key: str) -> Path:
        return base_dir(key) if base_dir is not None else home

    def project(key: str) -> bool:
        return from_project is not None and from_project(key)

    for name, entry in config.plugins.entries.items():
        if entry.path:
            folder = Path(os.path.expanduser(entry.path))
            key = join_key(["plugins", "entries", name, "path"])
            folder = folder if folder.is_absolute() else base(key) / folder
            gather.add(
                *load_plugin(folder, origin=PluginOrigin.PATH, settings=_settings(config, name), prober=prober),
                from_project=project(key),
            )
    for listed in config.plugins.paths:
        folder = Path(os.path.expanduser(listed))
        folder = folder if folder.is_absolute() else base("plugins.paths") / folder
        reason = _UNTRUSTED_PATHS
        settings = _settings(config, _peek_name(folder), default_enabled=not paths_pending, reason=reason)
        gather.add(
            *load_plugin(folder, origin=PluginOrigin.PATH, settings=settings, prober=prober),
            from_project=project("plugins.paths"),
        )
    if workspace is not None:
        folder = workspace / ".kairox" / "plugins"
        for child in sorted(folder.iterdir()) if folder.is_dir() else []:
            if child.is_dir() and not child.name.startswith("."):
                reason = _UNTRUSTED_WORKSPACE
                waiting = pending is not None and pending(join_key(["plugins", "workspace", child.name]))
                if trusted and waiting:
                    reason = _CHANGED_SINCE_TRUST
                settings = _settings(config, _peek_name(child), default_enabled=trusted and not waiting, reason=reason)
                gather.add(
                    *load_plugin(child, origin=PluginOrigin.WORKSPACE, settings=settings, prober=prober),
                    from_project=True,
                )
    plugins_dir = home / "plugins"
    records = InstallRecords(home)
    recorded = records.read()
    for child in sorted(plugins_dir.iterdir()) if plugins_dir.is_dir() else []:
        if child.is_dir() and not child.name.startswith(".") and (find_manifests(child)[0] or has_layout(child)):
            gather.add(
                *load_plugin(
                    child, origin=PluginOrigin.USER, settings=_settings(config, _peek_name(child)), prober=prober
                )
            )
    for name, record in sorted(recorded.items()):
        settings = _settings(config, name)
        if record.disabled_reason and name not in config.plugins.entries:
            settings = PluginSettings(enabled=False, disabled_reason=record.disabled_reason)
        elif not settings.enabled and record.disabled_reason:
            settings = PluginSettings(
                enabled=False,
                disabled_contributions=settings.disabled_contributions,
                disabled_reason=record.disabled_reason,
            )
        plugin, problems = load_plugin(
            record.path,
            origin=PluginOrigin.INSTALLED,
            trust=record.trust,
            settings=settings,
            marketplace=record.marketplace,
            prober=prober,
        )
        gather.add(replace(plugin, installed_version=record.version) if plugin is not None else None, problems)
    return gather.result()


def discover_from_resolved(resolved: ResolvedLike, *, prober: ProgramProber | None = None) -> PluginSet:
    """:func:`discover_plugins` with what a resolved configuration knows (base folder of paths, trust)."""
    return discover_plugins(
        resolved.config,
        home=resolved.home,
        workspace=resolved.workspace,
        trusted=resolved.trusted,
        base_dir=resolved.base_dir,
        paths_pending=resolved.is_pending("plugins.paths"),
        prober=prober,
        pending=resolved.is_pending,
        from_project=resolved.from_project,
    )


def _unknown_manifest(file: Path) -> Diagnostic:
    return Diagnostic(
        kind="plugin",
        name=file.parent.parent.name,
        source=str(file),
        severity=Severity.INFO,
        reason=(
            f"{file.parent.name}/plugin.json is another host's manifest; "
            "Kairox reads .kairox-plugin, .codex-plugin and .claude-plugin"
        ),
        hint="add a .claude-plugin/plugin.json to load this folder as a plugin",
    )


def validate_tree(path: Path, *, prober: ProgramProber | None = None) -> PluginSet:
    """Load every plugin under ``path`` (manifests, and local entries of marketplace files) for ``validate``."""
    gather = _Gatherer(by_root=True)
    path = path.resolve()
    if not path.exists():
        return PluginSet(
            diagnostics=(
                Diagnostic(
                    kind="plugin",
                    name=path.name,
                    reason="no such file or folder",
                    source=str(path),
                    severity=Severity.ERROR,
                ),
            )
        )
    if path.is_file():
        path = path.parent.parent if path.parent.name.endswith("-plugin") else path.parent
    marketplaces: list[Path] = []
    plugins_found: list[Path] = []
    for walked, dirs, _files in os.walk(path):
        here = Path(walked)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _SKIP_DIRS and (not d.startswith(".") or d.endswith("-plugin") or d == ".agents")
        )
        if any(d.endswith("-plugin") for d in dirs):
            manifest, others = find_manifests(here)
            if manifest is not None or has_layout(here):
                plugins_found.append(here)
            elif others:
                # another host's manifest folder (.cursor-plugin/): not Kairox's to load, and no error either
                gather.diagnostics += [_unknown_manifest(other) for other in others]
        elif here == path and has_layout(here):
            plugins_found.append(here)
        if ".claude-plugin" in dirs or ".agents" in dirs:
            marketplaces += [here / f for f in MARKETPLACE_FILES if (here / f).is_file()]
    for root in plugins_found:
        gather.add(*load_plugin(root, origin=PluginOrigin.VALIDATE, trust=TrustLevel.LOCAL, prober=prober))
    for file in marketplaces:
        market, problems = read_marketplace(file)
        gather.diagnostics += problems
        if market is None:
            continue
        for entry in market.entries:
            if entry.source.kind != "path":
                gather.diagnostics.append(
                    Diagnostic(
                        kind="marketplace",
                        name=entry.name,
                        source=str(file),
                        severity=Severity.INFO,
                        reason=f"not checked: its files come from {entry.source.describe()}",
                        hint="`kairox plugins install` fetches and checks them",
                    )
                )
                continue
            folder = (market.root / entry.source.location).resolve()
            if not folder.is_relative_to(market.root.resolve()):
                gather.diagnostics.append(
                    Diagnostic(
                        kind="marketplace",
                        name=entry.name,
                        reason=f"source {entry.source.location!r} leaves the marketplace folder",
                        source=str(file),
                        severity=Severity.ERROR,
                    )
                )
                continue
            if folder in gather.roots or folder in plugins_found:
                continue
            if not folder.is_dir():
                gather.diagnostics.append(
                    Diagnostic(
                        kind="marketplace",
                        name=entry.name,
                        reason=f"source {entry.source.location!r} does not exist",
                        source=str(file),
                        severity=Severity.ERROR,
                    )
                )
                continue
            fallback = entry.raw if not entry.strict or not find_manifests(folder)[0] else None
            gather.add(
                *load_plugin(
                    folder, origin=PluginOrigin.VALIDATE, trust=TrustLevel.LOCAL, fallback=fallback, prober=prober
                )
            )
    return gather.result()
