"""Marketplaces (P7): add a marketplace (a folder or a git URL), install, update and uninstall its plugins.

Installed plugins live in ``$KAIROX_HOME/plugins/<marketplace>/<plugin>/<version>``. A copy is staged beside
its final place, checked (manifest, paths, symlinks, compatibility) and moved in with one rename, so a failed
install leaves nothing half-written. An incompatible plugin installs disabled, with the reason recorded.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from kairox.errors import Diagnostic, KairoxError
from kairox.plugins._catalog import (
    Marketplace,
    MarketplaceEntry,
    PluginSource,
    find_marketplace_file,
    read_marketplace,
)
from kairox.plugins._compat import ProgramProber
from kairox.plugins._load import PluginSettings, effective_trust, find_manifests, has_layout, load_plugin
from kairox.plugins._manifest import TrustLevel
from kairox.plugins._model import Plugin, PluginOrigin
from kairox.plugins._records import InstallRecord, InstallRecords
from kairox.plugins._settings import forget_plugin, set_plugin_enabled

Progress = Callable[[str, int, int], None]
"""``(what, done, total)``: called as an install advances."""
SOURCE_FOLDER = "@source"
"""``$KAIROX_HOME/plugins/@source/<plugin>/<version>``: plugins installed from a folder or URL, not a marketplace
(``@`` keeps it apart from every marketplace name)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallRequest:
    """What ``install_source`` asks ``confirm`` about: the loaded (staged) plugin, where it goes, where from."""

    plugin: Plugin
    path: Path
    source: str


Confirm = Callable[[InstallRequest], Awaitable[bool]]


class MarketplaceError(KairoxError):
    """A marketplace or one of its plugins cannot be added, installed, updated or removed."""


class PluginInstallDeniedError(MarketplaceError):
    """The gate (a deny rule, the person, no terminal) refused the install; nothing was written."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallResult:
    record: InstallRecord
    plugin: Plugin
    enabled: bool
    previous_version: str | None = None
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return self.previous_version != self.record.version


def _where(file: Path, problems: list[Diagnostic]) -> str:
    """``file:line: `` of the first problem (``file: `` when it has no line)."""
    line = next((p.line for p in problems if p.line), None)
    return f"{file}:{line}: " if line else f"{file}: "


def _read_market(
    folder: Path, *, shown: str | None = None, hint: str | None = None
) -> tuple[Marketplace, list[Diagnostic]]:
    """The marketplace in ``folder``; ``shown`` names it in errors instead of its file (a clone about to go)."""
    file = find_marketplace_file(folder)
    if file is None:
        raise MarketplaceError(f"{shown or folder} has no .claude-plugin/marketplace.json", hint=hint)
    market, problems = read_marketplace(file)
    if market is None:
        raise MarketplaceError(
            (f"{shown}: " if shown else _where(file, problems)) + "; ".join(p.reason for p in problems)
        )
    return market, problems


def _no_progress(what: str, done: int, total: int) -> None:
    return None


def _is_git(source: str) -> bool:
    return source.startswith(("http://", "https://", "git@", "ssh://", "git://", "file://")) or source.endswith(".git")


def _git(*args: str, cwd: Path | None = None) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MarketplaceError(f"git {args[0]} failed: {exc}", hint="is git installed and the URL reachable?") from exc
    if done.returncode != 0:
        raise MarketplaceError(f"git {' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")


def _clone(url: str, dest: Path, *, ref: str | None = None, sha: str | None = None) -> None:
    # a marketplace file is someone else's data: nothing in it may reach git as an option
    if url.startswith("-"):
        raise MarketplaceError(
            f"{url!r} is not a git URL", hint="the marketplace entry's source must be a URL or a path"
        )
    for what, value in (("ref", ref), ("revision", sha)):
        if value and value.startswith("-"):
            raise MarketplaceError(f"git {what} {value!r} of {url} looks like an option; refused")
    args = ["clone", "--quiet"]
    if sha is None:
        args += ["--depth", "1"]
    if ref:
        args += ["--branch", ref]
    _git(*args, "--", url, str(dest))
    if sha:
        _git("checkout", "--quiet", sha, "--", cwd=dest)


def _git_head(tree: Path) -> str | None:
    """The short commit of a cloned tree (a version for a plugin whose manifest has none)."""
    if not (tree / ".git").exists():
        return None
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or None


def _copy_tree(source: Path, dest: Path, progress: Progress, label: str) -> None:
    """Copy ``source`` to ``dest`` without ``.git``; symlinks are copied as links and never followed."""
    folders: list[Path] = []
    files: list[Path] = []
    for walked, dirs, names in os.walk(source, followlinks=False):
        here = Path(walked)
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for d in dirs:
            (files if (here / d).is_symlink() else folders).append(here / d)
        files += [here / n for n in sorted(names)]
    progress(label, 0, len(files))
    dest.mkdir(parents=True)
    for folder in folders:
        (dest / folder.relative_to(source)).mkdir(parents=True, exist_ok=True)
    for done, path in enumerate(files, start=1):
        target = dest / path.relative_to(source)
        if path.is_symlink():
            target.symlink_to(os.readlink(path))  # kept as a link, so the loader can refuse an escaping one
        else:
            shutil.copy2(path, target)
        progress(label, done, len(files))


def _folder_name(version: str) -> str:
    """A version as a folder name: no separators, no leading dot (``..`` must not climb out)."""
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", version)
    return name if name and not name.startswith(".") else f"v{name}"


def _remove_inside(path: Path, root: Path) -> bool:
    """Delete the folder ``path`` when it lies inside ``root`` (never ``root`` itself), whatever the records say."""
    real, base = path.resolve(), root.resolve()
    if real == base or not real.is_relative_to(base) or not real.is_dir():
        return False
    shutil.rmtree(real, ignore_errors=True)
    return True


class Marketplaces:
    """The configured marketplaces and the plugins installed from them."""

    def __init__(
        self,
        home: Path,
        config_file: Path,
        sources: Mapping[str, str] | None = None,
        *,
        progress: Progress | None = None,
        prober: ProgramProber | None = None,
    ) -> None:
        self.home = home
        self.config_file = config_file
        self.sources: dict[str, str] = dict(sources or {})
        """Marketplace name -> source (folder or git URL), as ``[plugins.marketplaces]`` has them."""
        self.progress = progress or _no_progress
        self.prober = prober
        self.records = InstallRecords(home)

    # --- marketplaces --------------------------------------------------------------------------------------

    def _cache(self, name: str) -> Path:
        return self.home / "marketplaces" / name

    def _fetch_git(self, url: str) -> tuple[Marketplace, list[Diagnostic]]:
        """Clone ``url`` and move it to the cache folder of the marketplace it holds."""
        staging = self.home / "marketplaces" / f".clone-{uuid.uuid4().hex[:8]}"
        staging.parent.mkdir(parents=True, exist_ok=True)
        self.progress(f"cloning {url}", 0, 1)
        try:
            _clone(url, staging)
            market, _ = _read_market(staging, shown=url)
            final = self._cache(market.name)
            if final.exists():
                shutil.rmtree(final)
            os.replace(staging, final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        self.progress(f"cloning {url}", 1, 1)
        return self.load(market.name, source=url)

    def load(self, name: str, *, source: str | None = None) -> tuple[Marketplace, list[Diagnostic]]:
        """Read marketplace ``name`` (from its folder, or the cached clone of its git URL)."""
        source = source or self.sources.get(name)
        if source is None:
            raise MarketplaceError(
                f"no marketplace named {name!r}", hint="`kairox plugins marketplace list` shows them"
            )
        folder = self._cache(name) if _is_git(source) else Path(source)
        if _is_git(source) and not folder.is_dir():
            return self._fetch_git(source)
        return _read_market(folder)

    def add(self, source: str) -> tuple[Marketplace, list[Diagnostic]]:
        """Register a marketplace (a folder holding ``.claude-plugin/marketplace.json`` or a git URL)."""
        if _is_git(source):
            market, problems = self._fetch_git(source)
        else:
            folder = Path(source).expanduser().resolve()
            market, problems = _read_market(folder, hint="give the folder that holds .claude-plugin/")
            source = str(folder)
        from kairox.config import join_key, set_value

        set_value(self.config_file, join_key(["plugins", "marketplaces", market.name, "source"]), source)
        self.sources[market.name] = source
        return market, problems

    def refresh(self, name: str) -> None:
        """Fetch a git marketplace again (a folder marketplace is read where it is)."""
        source = self.sources.get(name)
        if source is not None and _is_git(source):
            self._fetch_git(source)

    def find(self, plugin: str, marketplace: str | None = None) -> tuple[Marketplace, MarketplaceEntry]:
        names = [marketplace] if marketplace else sorted(self.sources)
        hits: list[tuple[Marketplace, MarketplaceEntry]] = []
        for name in names:
            market, _ = self.load(name)
            entry = market.find(plugin)
            if entry is not None:
                hits.append((market, entry))
        if not hits:
            where = f"marketplace {marketplace!r}" if marketplace else "any configured marketplace"
            raise MarketplaceError(
                f"plugin {plugin!r} is not in {where}", hint="`kairox plugins marketplace list` shows the marketplaces"
            )
        if len(hits) > 1:
            options = ", ".join(f"{plugin}@{m.name}" for m, _ in hits)
            raise MarketplaceError(f"plugin {plugin!r} is in several marketplaces", hint=f"name one: {options}")
        return hits[0]

    # --- plugins -------------------------------------------------------------------------------------------

    def _stage(self, market: Marketplace, entry: MarketplaceEntry, staging: Path) -> str | None:
        """Copy the entry's files to ``staging``; returns the git commit when the source is a repository."""
        source: PluginSource = entry.source
        label = f"copying {entry.name}"
        if source.kind == "git":
            clone = staging.with_name(staging.name + "-git")
            self.progress(f"cloning {source.location}", 0, 1)
            try:
                _clone(source.location, clone, ref=source.ref, sha=source.sha)
                head = _git_head(clone)
                self.progress(f"cloning {source.location}", 1, 1)
                origin = (clone / source.subdir).resolve() if source.subdir else clone
                if not origin.is_relative_to(clone.resolve()) or not origin.is_dir():
                    raise MarketplaceError(f"{entry.name}: sub-folder {source.subdir!r} is not in {source.location}")
                _copy_tree(origin, staging, self.progress, label)
            finally:
                shutil.rmtree(clone, ignore_errors=True)
            return head
        origin = Path(source.location) if source.kind == "folder" else (market.root / source.location)
        origin = origin.resolve()
        if source.kind == "path" and not origin.is_relative_to(market.root.resolve()):
            raise MarketplaceError(
                f"{entry.name}: source {source.location!r} leaves the marketplace folder {market.root}"
            )
        if not origin.is_dir():
            raise MarketplaceError(f"{entry.name}: source {origin} does not exist")
        _copy_tree(origin, staging, self.progress, label)
        return None

    def install(
        self,
        plugin: str,
        marketplace: str | None = None,
        *,
        confirm: Callable[[InstallRequest], bool] | None = None,
        keep_settings: bool = False,
    ) -> InstallResult:
        """Install (or reinstall) ``plugin``; compatible plugins are enabled, incompatible ones stay disabled.
        ``confirm`` is asked, as for a folder or URL, with the loaded plugin and its final folder before it is moved
        in (an update of an installed plugin passes none)."""
        market, entry = self.find(plugin, marketplace)
        stage_root = self.home / "plugins" / market.name / entry.name
        stage_root.mkdir(parents=True, exist_ok=True)
        staging = stage_root / f".staging-{uuid.uuid4().hex[:8]}"
        try:
            commit = self._stage(market, entry, staging)
            if find_manifests(staging)[0] is None:
                # the marketplace entry is the manifest (strict: false): keep it with the files
                manifest = {
                    k: v
                    for k, v in entry.raw.items()
                    if k not in ("source", "strict", "category", "tags", "displayName")
                }
                (staging / ".kairox-plugin").mkdir()
                (staging / ".kairox-plugin" / "plugin.json").write_text(
                    json.dumps(manifest, indent=2) + "\n", encoding="utf-8"
                )
            loaded = self._load_staged(staging, f"plugin {entry.name!r} from {market.name}")
            # the manifest's version first: it is what `plugins list` shows, so folder, record and list agree
            version = loaded.version or entry.version or commit or "0.0.0"
            source = f"{entry.source.describe()} (marketplace {market.name})"
            request = InstallRequest(plugin=loaded, path=stage_root / _folder_name(version), source=source)
            if confirm is not None and not confirm(request):
                raise PluginInstallDeniedError(f"installing {loaded.name!r} into {request.path} was not approved")
            final = self._move_in(staging, stage_root, version)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return self._record(
            loaded,
            final,
            version,
            name=entry.name,
            marketplace=market.name,
            source=entry.source.describe(),
            keep_settings=keep_settings,
        )

    async def install_source(self, source: str, *, confirm: Confirm, keep_settings: bool = False) -> InstallResult:
        """Install the plugin at ``source`` (a folder, a git URL cloned with ``git``, an archive URL; ``#sub/folder``
        picks one inside) into ``plugins/@source/<plugin>/<version>``. It is read the way ``skills install`` reads
        a source, loaded and checked in a staging copy, and ``confirm`` is asked (with the loaded plugin and its
        final folder) before it is moved in; a refusal leaves nothing behind."""
        from kairox._rpc._fetch import FetchError, SourceKind, fetch_source

        root = self.home / "plugins" / SOURCE_FOLDER
        root.mkdir(parents=True, exist_ok=True)
        fetched = Path(tempfile.mkdtemp(prefix=".fetch-", dir=root))
        staging = root / f".staging-{uuid.uuid4().hex[:8]}"
        try:
            try:
                read, tree = await fetch_source(
                    source,
                    fetched,
                    progress=lambda text: self.progress(text, 1, 1),
                    what="a plugin folder, a git URL or an archive URL",
                )
            except FetchError as exc:
                raise MarketplaceError(exc.message, hint=exc.hint) from exc
            if not tree.is_dir():
                raise MarketplaceError(
                    f"{tree} is not a folder",
                    hint="a plugin is a folder with .claude-plugin/plugin.json (or .kairox-plugin/, .codex-plugin/)",
                )
            if find_manifests(tree)[0] is None and not has_layout(tree):
                raise MarketplaceError(
                    f"{source} holds no plugin: no .kairox-plugin/, "
                    ".codex-plugin/ or .claude-plugin/plugin.json and none of "
                    "skills/, commands/, agents/, hooks/ or .mcp.json",
                    hint="give the plugin's own folder (SOURCE#sub/folder picks one inside a repository)",
                )
            _copy_tree(tree, staging, self.progress, f"copying {source}")
            loaded = self._load_staged(staging, f"the plugin at {source}")
            stored = str(Path(read.location).expanduser().resolve()) if read.kind is SourceKind.LOCAL else read.location
            shown = stored + (f"#{read.subpath}" if read.subpath else "")
            version = loaded.version or _git_head(fetched / "clone") or "0.0.0"
            stage_root = root / loaded.name
            final = stage_root / _folder_name(version)
            previous = self.records.read().get(loaded.name)
            if previous is not None and previous.marketplace:
                raise MarketplaceError(
                    f"plugin {loaded.name!r} is already installed from marketplace {previous.marketplace}",
                    hint=(
                        f"`kairox plugins uninstall {loaded.name}` first, or "
                        f"update it with `kairox plugins update {loaded.name}`"
                    ),
                )
            if not await confirm(InstallRequest(plugin=loaded, path=final, source=shown)):
                raise PluginInstallDeniedError(f"installing plugin {loaded.name!r} into {final} was not approved")
            stage_root.mkdir(parents=True, exist_ok=True)
            final = self._move_in(staging, stage_root, version)
        finally:
            for leftover in (staging, fetched):
                if leftover.exists():
                    shutil.rmtree(leftover, ignore_errors=True)
        return self._record(
            loaded, final, version, name=loaded.name, marketplace="", source=shown, keep_settings=keep_settings
        )

    def _load_staged(self, staging: Path, what: str) -> Plugin:
        loaded, problems = load_plugin(
            staging, origin=PluginOrigin.INSTALLED, trust=TrustLevel.COMMUNITY, prober=self.prober
        )
        if loaded is None:
            reasons = "; ".join(f"{p.location()}: {p.reason}" for p in problems if str(p.severity) == "error")
            raise MarketplaceError(f"{what} cannot be installed: {reasons}")
        return loaded

    def _move_in(self, staging: Path, stage_root: Path, version: str) -> Path:
        """Rename the checked copy into ``stage_root/<version>``; a reinstall of the same version swaps."""
        final = stage_root / _folder_name(version)
        aside = stage_root / f".old-{uuid.uuid4().hex[:8]}"
        try:
            if final.exists():
                os.replace(final, aside)  # a reinstall of the same version: swap, then drop the old copy
            os.replace(staging, final)
        finally:
            if aside.exists():
                shutil.rmtree(aside, ignore_errors=True)
        return final

    def _record(
        self,
        loaded: Plugin,
        final: Path,
        version: str,
        *,
        name: str,
        marketplace: str,
        source: str,
        keep_settings: bool,
    ) -> InstallResult:
        previous = self.records.read().get(name)
        if previous is not None and previous.path != final:
            _remove_inside(previous.path, self.home / "plugins")
        reason = None if loaded.compatibility.compatible else "incompatible: " + "; ".join(loaded.compatibility.reasons)
        record = InstallRecord(
            name=name,
            marketplace=marketplace,
            version=version,
            path=final,
            source=source,
            trust=effective_trust(TrustLevel.COMMUNITY, loaded.manifest.trust),
            disabled_reason=reason,
        )
        self.records.put(record)
        if reason is not None:
            set_plugin_enabled(self.config_file, name, False)
        elif not keep_settings or (previous is not None and previous.disabled_reason):
            # a fresh install, or an update that made an incompatible plugin compatible
            set_plugin_enabled(self.config_file, name, True)
        settings = PluginSettings(enabled=reason is None, disabled_reason=reason)
        installed, final_problems = load_plugin(
            final,
            origin=PluginOrigin.INSTALLED,
            trust=record.trust,
            settings=settings,
            marketplace=marketplace or None,
            prober=self.prober,
        )
        assert installed is not None  # the staged copy loaded, and the rename does not change its content
        return InstallResult(
            record=record,
            plugin=replace(installed, installed_version=version),
            enabled=reason is None,
            previous_version=previous.version if previous else None,
            diagnostics=tuple(final_problems),
        )

    def update(self, plugin: str | None = None) -> list[InstallResult]:
        """Reinstall installed plugins from their marketplace (fetched again); settings are kept. Plugins installed
        from a folder or URL are left to ``update_sources`` (it fetches them again, which may ask)."""
        records = self.records.read()
        names = [plugin] if plugin else sorted(n for n, r in records.items() if r.marketplace)
        if plugin and plugin not in records:
            raise MarketplaceError(
                f"plugin {plugin!r} is not installed", hint="`kairox plugins list` shows the installed plugins"
            )
        if plugin and not records[plugin].marketplace:
            raise MarketplaceError(
                f"plugin {plugin!r} was installed from {records[plugin].source}, not from a marketplace",
                hint=f"install it again: `kairox plugins install {records[plugin].source}`",
            )
        for market in sorted({records[n].marketplace for n in names}):
            self.refresh(market)
        return [self.install(name, records[name].marketplace, keep_settings=True) for name in names]

    def uninstall(self, plugin: str) -> InstallRecord:
        """Remove the plugin's files and every config entry of it."""
        record = self.records.remove(plugin)
        if record is None:
            raise MarketplaceError(
                f"plugin {plugin!r} is not installed", hint="`kairox plugins list` shows the installed plugins"
            )
        folder = self.home / "plugins" / (record.marketplace or SOURCE_FOLDER) / record.name
        if not _remove_inside(folder, self.home / "plugins"):
            _remove_inside(record.path, self.home / "plugins")
        forget_plugin(self.config_file, plugin)
        return record
