"""Remote sources against the test registry: paging, search, ETag, cache when down, hidden statuses, bad data."""

import json
import os
import time
from pathlib import Path
from typing import Any

from kairox.catalog import CatalogCache, SourceStatus, catalog_sources, load_catalog
from kairox.catalog._sources import RemoteSource
from kairox.config import resolve_config


def _source(registry: Any, home: Path, *, kind: str = "registry", path: str = "", ttl: float = 3600) -> RemoteSource:
    return RemoteSource("test", registry.url + path, kind, cache=CatalogCache(home), ttl_sec=ttl)


def test_registry_paging_is_followed_and_inactive_entries_are_hidden(registry: Any, isolated_home: Path) -> None:
    load = _source(registry, isolated_home).load()
    ids = {e.id for e in load.entries}
    assert len(ids) == 251 and "io.example/weather" in ids
    assert "io.example/gone" not in ids and "io.example/old" not in ids
    assert (load.state.status, load.state.entries, load.state.hidden, load.state.downloaded) == (
        SourceStatus.FRESH,
        251,
        2,
        True,
    )
    pages = [p for p in registry.stats()["paths"] if p.startswith("/v0.1/servers")]
    assert len(pages) == 3  # 253 entries, 100 per page
    assert "cursor=100" in pages[1] and "cursor=200" in pages[2]
    weather = next(e for e in load.entries if e.id == "io.example/weather")
    assert weather.extra == {"x-unknown-field": {"kept": True}} and weather.source == "test"


def test_fresh_cache_is_used_without_asking_the_registry(registry: Any, isolated_home: Path) -> None:
    _source(registry, isolated_home).load()
    before = len(registry.stats()["paths"])
    again = _source(registry, isolated_home).load()
    assert again.state.status is SourceStatus.CACHED and len(again.entries) == 251
    assert len(registry.stats()["paths"]) == before


def test_etag_hit_does_not_download_again(registry: Any, isolated_home: Path) -> None:
    _source(registry, isolated_home).load()
    full = registry.stats()["full"]
    again = _source(registry, isolated_home).load(refresh=True)
    stats = registry.stats()
    assert (stats["full"], stats["not_modified"]) == (full, 1)
    assert again.state.status is SourceStatus.FRESH and not again.state.downloaded and len(again.entries) == 251


def test_incremental_sync_takes_the_updated_entries(registry: Any, isolated_home: Path) -> None:
    _source(registry, isolated_home).load()
    registry.control(bump="io.example/weather")
    load = _source(registry, isolated_home).load(refresh=True)
    weather = next(e for e in load.entries if e.id == "io.example/weather")
    assert weather.description == "Weather forecasts for any city (updated)"
    assert len(load.entries) == 251
    last = registry.stats()["paths"][-1]
    assert "updated_since=" in last


def test_down_registry_is_served_from_the_cache_with_its_age(registry: Any, isolated_home: Path) -> None:
    source = _source(registry, isolated_home)
    source.load()
    cache_file = CatalogCache(isolated_home).path("test", registry.url, "registry")
    data = json.loads(cache_file.read_text())
    data["fetched_at"] = time.time() - 3 * 3600
    cache_file.write_text(json.dumps(data))
    registry.control(down="1")
    load = _source(registry, isolated_home).load()
    assert load.state.status is SourceStatus.STALE and len(load.entries) == 251
    assert load.state.summary().startswith("cached 3 h ago, source unreachable: HTTP 503 from ")


def test_search_through_the_catalog(registry: Any, isolated_home: Path) -> None:
    catalog = load_catalog([_source(registry, isolated_home)])
    assert [e.id for e in catalog.search("weather")] == ["io.example/weather"]
    assert [e.id for e in catalog.search("number 249")] == ["io.example/server-249"]
    assert catalog.search("deleted") == []


def test_manifest_source_with_etag(registry: Any, isolated_home: Path) -> None:
    load = _source(registry, isolated_home, kind="manifest", path="/manifest.json").load()
    assert len(load.entries) == 251 and load.state.hidden == 2
    again = _source(registry, isolated_home, kind="manifest", path="/manifest.json").load(refresh=True)
    assert not again.state.downloaded and registry.stats()["not_modified"] == 1


def test_malformed_answers_are_diagnostics(registry: Any, isolated_home: Path) -> None:
    garbage = _source(registry, isolated_home, path="/garbage").load()
    assert garbage.state.status is SourceStatus.FAILED and garbage.entries == ()
    assert "did not send JSON" in garbage.state.error  # type: ignore[operator]
    huge = _source(registry, isolated_home, path="/huge").load()
    assert huge.state.status is SourceStatus.FAILED and "did not send JSON" in str(huge.state.error)
    wrong = _source(registry, isolated_home, path="/wrong").load()
    assert wrong.state.status is SourceStatus.FRESH and wrong.entries == ()
    assert [d.reason for d in wrong.diagnostics] == [
        "entry skipped: test[0].name: expected a string, got a number",
        "entry skipped: test[1]: expected an object, got a string",
        "entry skipped: test[2].packages: expected a list, got a string",
    ]
    manifest = _source(registry, isolated_home, kind="manifest", path="/wrong/manifest.json").load()
    assert len(manifest.diagnostics) == 3


def test_unreachable_source_without_cache_leaves_the_others(isolated_home: Path, tmp_path: Path) -> None:
    (isolated_home / "kairox.toml").write_text(
        '[[mcp_catalog.sources]]\nname = "nowhere"\nurl = "http://127.0.0.1:9"\nkind = "registry"\n'
    )
    resolved = resolve_config(tmp_path, env={**os.environ})
    sources, held = catalog_sources(resolved)
    catalog = load_catalog(sources, held=held)
    states = {s.name: s for s in catalog.sources}
    assert states["nowhere"].status is SourceStatus.FAILED and "cannot reach http://127.0.0.1:9" in str(
        states["nowhere"].error
    )
    assert len(catalog.entries) >= 12  # the built-in list is still there


def test_sources_concatenate_across_layers_and_untrusted_ones_wait(
    registry: Any, isolated_home: Path, tmp_path: Path
) -> None:
    (isolated_home / "kairox.toml").write_text(
        f'[mcp_catalog]\nurl = "{registry.url}/manifest.json"\n\n[[mcp_catalog.sources]]\n'
        f'name = "mine"\nurl = "{registry.url}"\nkind = "registry"\n'
    )
    (tmp_path / "kairox.toml").write_text(f'[[mcp_catalog.sources]]\nname = "theirs"\nurl = "{registry.url}/wrong"\n')
    (tmp_path / ".git").mkdir()
    resolved = resolve_config(tmp_path, env={**os.environ})
    sources, held = catalog_sources(resolved)
    assert [s.name for s in sources] == ["builtin", "mcp_catalog.url", "mine"]
    assert [(h.name, h.status) for h in held] == [("theirs", SourceStatus.PENDING_TRUST)]
    catalog = load_catalog(sources, held=held)
    assert catalog.entries["io.example/weather"].source == "mine"
    assert catalog.overridden["io.example/weather"] == ("mcp_catalog.url",)

    from kairox.config import trust_workspace

    trust_workspace(tmp_path)
    trusted, held = catalog_sources(resolve_config(tmp_path, env={**os.environ}))
    assert [s.name for s in trusted] == ["builtin", "mcp_catalog.url", "mine", "theirs"] and held == []
