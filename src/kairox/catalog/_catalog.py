"""The catalog a workspace sees: its sources from configuration, loaded and merged with provenance."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kairox._util._names import suggest
from kairox.catalog._cache import CatalogCache
from kairox.catalog._model import CatalogEntry
from kairox.catalog._sources import BuiltinSource, CatalogSource, RemoteSource, SourceState, SourceStatus
from kairox.config import ResolvedConfig
from kairox.errors import Diagnostic

if TYPE_CHECKING:
    import httpx

URL_SOURCE_NAME = "mcp_catalog.url"


@dataclass(frozen=True, kw_only=True, slots=True)
class Catalog:
    """Every active entry by id (a later source overrides an earlier one), each source's state, diagnostics."""

    entries: dict[str, CatalogEntry]
    sources: tuple[SourceState, ...]
    overridden: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """For an id served by several sources: the sources whose entry was overridden, earliest first."""
    diagnostics: tuple[Diagnostic, ...] = ()

    def listed(self, source: str | None = None) -> list[CatalogEntry]:
        found = [e for e in self.entries.values() if source is None or e.source == source]
        return sorted(found, key=lambda e: e.id.lower())

    def search(self, query: str, *, source: str | None = None) -> list[CatalogEntry]:
        """Entries whose name, title, description, tags or package names hold every word of ``query``; an exact
        id or name match first."""
        words = query.lower().split()
        found = [e for e in self.listed(source) if e.matches(words)]
        needle = query.strip().lower()
        return sorted(
            found, key=lambda e: (e.short_name.lower() != needle and (e.title or "").lower() != needle, e.id.lower())
        )

    def find(self, query: str) -> list[CatalogEntry]:
        """The entries ``query`` names: an id, a package identifier (``@scope/name``, with or without
        ``@version``), or the last part of an id. Several when the name is ambiguous."""
        if query in self.entries:
            return [self.entries[query]]
        for probe in (query, _without_version(query)):
            by_package = [e for e in self.entries.values() if probe in e.package_identifiers]
            if by_package:
                return sorted(by_package, key=lambda e: e.id)
        lowered = query.lower()
        by_tail = [
            e
            for e in self.entries.values()
            if e.id.rsplit("/", 1)[-1].lower() == lowered or e.short_name.lower() == lowered
        ]
        return sorted(by_tail, key=lambda e: e.id)

    def suggestion(self, query: str) -> str | None:
        return suggest(query, [*self.entries, *(e.short_name for e in self.entries.values())])


def _without_version(text: str) -> str:
    head, at, _ = text.rpartition("@")
    return head if at and head and head != "@" else text


def catalog_sources(
    resolved: ResolvedConfig, *, client: "httpx.Client | None" = None, timeout_sec: float = 15.0
) -> tuple[list[CatalogSource], list[SourceState]]:
    """The sources of a workspace's configuration, in merge order, and the states of those held for trust."""
    settings = resolved.config.mcp_catalog
    cache = CatalogCache(resolved.home)
    sources: list[CatalogSource] = [BuiltinSource()]
    held: list[SourceState] = []

    def remote(name: str, url: str, kind: str, key: str) -> RemoteSource:
        origin = resolved.origin(key)
        return RemoteSource(
            name,
            url,
            kind,
            cache=cache,
            ttl_sec=settings.cache_ttl_sec,
            where=origin.where() if origin else None,
            client=client,
            timeout_sec=timeout_sec,
        )

    if settings.url and not resolved.is_pending("mcp_catalog.url"):
        sources.append(remote(URL_SOURCE_NAME, settings.url, "manifest", "mcp_catalog.url"))
    for item in settings.sources:
        sources.append(remote(item.name, item.url, item.kind, "mcp_catalog.sources"))
    for pending in resolved.pending:
        if pending.key == "mcp_catalog.url" or pending.key.startswith("mcp_catalog.sources["):
            label = (
                pending.key.removeprefix("mcp_catalog.sources[").rstrip("]")
                if pending.key != "mcp_catalog.url"
                else URL_SOURCE_NAME
            )
            held.append(
                SourceState(
                    name=label, kind="remote", url=None, status=SourceStatus.PENDING_TRUST, where=pending.origin.where()
                )
            )
    return sources, held


def load_catalog(
    sources: Sequence[CatalogSource], *, refresh: bool = False, held: Sequence[SourceState] = ()
) -> Catalog:
    """Load every source (in order) and merge: a later source's entry replaces an earlier one with the same id."""
    entries: dict[str, CatalogEntry] = {}
    overridden: dict[str, list[str]] = {}
    states: list[SourceState] = []
    diagnostics: list[Diagnostic] = []
    for source in sources:
        load = source.load(refresh=refresh)
        states.append(load.state)
        diagnostics.extend(load.diagnostics)
        for entry in load.entries:
            previous = entries.pop(entry.id, None)
            if previous is not None and previous.source != entry.source:
                overridden.setdefault(entry.id, []).append(previous.source)
            entries[entry.id] = entry
    return Catalog(
        entries=entries,
        sources=(*states, *held),
        overridden={k: tuple(v) for k, v in overridden.items()},
        diagnostics=tuple(diagnostics),
    )
