"""The plugins of the registered marketplaces (P7) as a front end browses them: every entry with whether it is
installed, one entry in full (compatibility, permissions, what it contributes, read from its files when they are
local, before anything is copied), and an install that goes through the gate first: it writes the user's
configuration and Kairox's plugin folder, both protected, so it always asks. Shared by every front end."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kairox._util._json import JsonObject
from kairox.config import Layer, ResolvedConfig
from kairox.events import EventSink
from kairox.plugins import (
    InstallRequest,
    InstallResult,
    Marketplace,
    MarketplaceEntry,
    MarketplaceError,
    Marketplaces,
    Plugin,
    PluginOrigin,
    TrustLevel,
    load_plugin,
)
from kairox.policy import Approver
from kairox.runtime._plugin_install import plugin_install_gate

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, kw_only=True, slots=True)
class MarketPlugin:
    """One plugin a marketplace offers."""

    name: str
    marketplace: str
    version: str | None
    description: str | None
    category: str | None
    tags: tuple[str, ...]
    source: str
    """Where its files come from (a folder of the marketplace, a git repository)."""
    local: bool
    """Its files can be read where they are (a folder): the detail shows what it contributes before installing."""
    installed_version: str | None = None

    @property
    def key(self) -> str:
        return f"{self.name}@{self.marketplace}"

    def to_json(self) -> JsonObject:
        return {
            "key": self.key,
            "name": self.name,
            "marketplace": self.marketplace,
            "version": self.version,
            "description": self.description,
            "category": self.category,
            "tags": list(self.tags),
            "source": self.source,
            "local": self.local,
            "installed": self.installed_version is not None,
            "installed_version": self.installed_version,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class MarketListing:
    plugins: list[MarketPlugin] = field(default_factory=list)
    marketplaces: list[JsonObject] = field(default_factory=list)
    """Each registered marketplace: ``name``, ``source``, ``plugins`` (how many it offers), ``error`` (why it could
    not be read, and what to do)."""


def marketplaces_of(resolved: ResolvedConfig, progress: Progress | None = None) -> Marketplaces:
    """The registered marketplaces, installing into Kairox's home and writing the user's configuration."""
    sources = {name: market.source for name, market in resolved.config.plugins.marketplaces.items()}
    return Marketplaces(resolved.home, resolved.layer_file(Layer.USER), sources, progress=progress)


def _tags(raw: dict[str, Any]) -> tuple[str, ...]:
    tags = raw.get("tags") or raw.get("keywords") or ()
    return tuple(str(t) for t in tags) if isinstance(tags, list) else ()


def _market_plugin(market: Marketplace, entry: MarketplaceEntry, installed: dict[str, Any]) -> MarketPlugin:
    record = installed.get(entry.name)
    category = entry.raw.get("category")
    return MarketPlugin(
        name=entry.name,
        marketplace=market.name,
        version=entry.version,
        description=entry.description,
        category=category if isinstance(category, str) else None,
        tags=_tags(entry.raw),
        source=entry.source.describe(),
        local=entry.source.kind != "git",
        installed_version=record.version if record is not None and record.marketplace == market.name else None,
    )


def market_listing(resolved: ResolvedConfig) -> MarketListing:
    """Every plugin of every registered marketplace (a git marketplace is cloned once, then read from its copy)."""
    markets = marketplaces_of(resolved)
    installed = markets.records.read()
    listing = MarketListing()
    for name in sorted(markets.sources):
        row: JsonObject = {"name": name, "source": markets.sources[name], "plugins": 0, "error": None}
        listing.marketplaces.append(row)
        try:
            market, _problems = markets.load(name)
        except (MarketplaceError, OSError) as exc:
            hint = getattr(exc, "hint", None)
            row["error"] = str(exc) + (f" ({hint})" if hint else "")
            continue
        row["plugins"] = len(market.entries)
        listing.plugins.extend(_market_plugin(market, entry, installed) for entry in market.entries)
    return listing


def _entry_folder(market: Marketplace, entry: MarketplaceEntry) -> Path | None:
    source = entry.source
    if source.kind == "git":
        return None
    folder = (Path(source.location) if source.kind == "folder" else market.root / source.location).resolve()
    if source.kind == "path" and not folder.is_relative_to(market.root.resolve()):
        return None  # install refuses it too, and says so
    return folder if folder.is_dir() else None


def permissions_text(plugin: Plugin) -> list[str]:
    """What a plugin asks to be allowed, one line per permission (``sandbox: workspace_write``)."""
    found = []
    for key, value in plugin.permissions.model_dump(mode="json", exclude_none=True).items():
        found.append(f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}")
    return found


def inspect_market_plugin(resolved: ResolvedConfig, marketplace: str, name: str) -> JsonObject:
    """One entry in full: the listing's fields, and read from its files (when they are local) whether it is
    compatible here, the permissions it asks for and what it contributes. Nothing is copied or written."""
    markets = marketplaces_of(resolved)
    market, entry = markets.find(name, marketplace)
    data = _market_plugin(market, entry, markets.records.read()).to_json()
    data.update(
        compatible=None,
        compatibility=[],
        permissions=[],
        contributions=[],
        trust=str(TrustLevel.COMMUNITY),
        problems=[],
        target_file=str(resolved.layer_file(Layer.USER)),
        install_folder=str(resolved.home / "plugins" / market.name / entry.name),
        homepage=entry.raw.get("homepage") if isinstance(entry.raw.get("homepage"), str) else None,
        author=_author(entry.raw.get("author")),
    )
    folder = _entry_folder(market, entry)
    if folder is None:
        note = (
            "its files are fetched at install: compatibility, permissions "
            "and contributions are checked then, before it is enabled"
        )
        data["problems"] = (
            [note] if entry.source.kind == "git" else [f"its source {entry.source.describe()} is not a folder here"]
        )
        return data
    plugin, problems = load_plugin(
        folder,
        origin=PluginOrigin.INSTALLED,
        trust=TrustLevel.COMMUNITY,
        fallback=None if entry.strict else entry.raw,
        marketplace=market.name,
    )
    data["problems"] = [f"{p.location()}: {p.reason}" for p in problems if str(p.severity) in ("error", "warning")]
    if plugin is None:
        data["compatible"] = False
        return data
    compat = plugin.compatibility
    data.update(
        version=plugin.version or entry.version,
        description=plugin.manifest.description or entry.description,
        compatible=compat.compatible,
        compatibility=list(compat.reasons)
        if not compat.compatible
        else [f"{k} {v}" for k, v in compat.checked.items()],
        permissions=permissions_text(plugin),
        contributions=[{"kind": str(c.kind), "name": c.name} for c in plugin.contributions()],
        trust=str(plugin.trust),
    )
    return data


def _author(raw: Any) -> str | None:
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        return str(raw["name"])
    return raw if isinstance(raw, str) else None


async def install_market_plugin(
    resolved: ResolvedConfig,
    marketplace: str,
    name: str,
    *,
    approver: Approver,
    events: EventSink | None = None,
    progress: Progress | None = None,
) -> InstallResult:
    """Install ``name`` from ``marketplace``: copied and checked, then the gate asks the same question as for a
    folder or URL (what the plugin brings and runs, where it goes), then moved in; an incompatible plugin installs
    disabled with the reason. Raises :class:`PluginInstallDeniedError` when the answer was no, and
    :class:`MarketplaceError` when it cannot be installed. It applies from the next session."""
    import anyio

    markets = marketplaces_of(resolved, progress)
    gate = plugin_install_gate(resolved, approver=approver, events=events)

    def confirm(request: InstallRequest) -> bool:
        async def asked() -> bool:
            return await gate(request)

        return anyio.from_thread.run(asked)

    return await anyio.to_thread.run_sync(lambda: markets.install(name, marketplace, confirm=confirm))
