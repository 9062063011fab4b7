"""A 20,000-entry cached catalog: listing and searching it, against a plain json.load-and-filter baseline.

The cache file is what a registry source leaves after a sync (``{"server": server.json, "_meta": ...}`` items).
Kairox's list reads it, parses every entry into a ``CatalogEntry`` (types checked, unknown fields kept, deleted
and deprecated entries hidden) and sorts; search does the same and filters. The baseline reads the same file
with ``json.load`` and filters the raw dicts by status (list) or by a substring (search), with no checks.
Ratios are Kairox's median time over the baseline's.

Run: .venv/bin/python bench/catalog.py [COUNT]
"""

import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kairox.catalog import CatalogCache, load_catalog
from kairox.catalog._cache import CachedSource
from kairox.catalog._sources import RemoteSource

OFFICIAL = "io.modelcontextprotocol.registry/official"
WORDS = [
    "weather",
    "github",
    "jira",
    "slack",
    "postgres",
    "files",
    "search",
    "browser",
    "docs",
    "calendar",
    "email",
    "notes",
    "kubernetes",
    "docker",
    "metrics",
    "logs",
    "tracing",
    "billing",
    "invoices",
    "crm",
    "tickets",
    "maps",
    "translate",
    "images",
    "audio",
    "video",
    "pdf",
    "spreadsheet",
]
QUERIES = ("weather", "postgres logs", "calendar email", "no-such-word")


def document(index: int, rng: random.Random) -> dict[str, Any]:
    words = rng.sample(WORDS, 5)
    status = "deleted" if index % 97 == 0 else "deprecated" if index % 89 == 0 else "active"
    server = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": f"io.example.{words[0]}/server-{index:05d}",
        "title": f"{words[0].title()} {index}",
        "description": f"MCP server for {' '.join(words[1:])}",
        "version": f"1.{index % 10}.0",
        "repository": {"url": f"https://github.com/example/server-{index}", "source": "github"},
        "packages": [
            {
                "registryType": "npm",
                "identifier": f"@example/server-{index:05d}",
                "version": f"1.{index % 10}.0",
                "transport": {"type": "stdio"},
                "environmentVariables": [{"name": "EXAMPLE_TOKEN", "isRequired": True, "isSecret": True}],
            }
        ],
    }
    return {"server": server, "_meta": {OFFICIAL: {"status": status, "isLatest": True}}}


def median_of(action: Callable[[], Any], runs: int = 5) -> tuple[float, Any]:
    times, value = [], None
    for _ in range(runs):
        started = time.perf_counter()
        value = action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), value


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        cache = CatalogCache(home)
        url = "https://registry.example/"
        path = cache.write(
            CachedSource(
                name="bench",
                url=url,
                kind="registry",
                fetched_at=time.time(),
                documents=[document(i, rng) for i in range(count)],
            )
        )
        source = RemoteSource("bench", url, "registry", cache=cache, ttl_sec=3600)
        size_mb = path.stat().st_size / 1e6

        def baseline_list() -> list[dict[str, Any]]:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [d["server"] for d in data["documents"] if d["_meta"][OFFICIAL]["status"] == "active"]

        def baseline_search(query: str) -> list[dict[str, Any]]:
            words = query.lower().split()
            found = []
            for server in baseline_list():
                text = f"{server['name']} {server.get('title', '')} {server['description']}".lower()
                if all(w in text for w in words):
                    found.append(server)
            return found

        base_list, raw = median_of(baseline_list)
        ours_list, listed = median_of(lambda: load_catalog([source]).listed())
        assert len(listed) == len(raw), (len(listed), len(raw))
        print(f"catalog of {count} entries ({len(listed)} active), cache file {size_mb:.1f} MB")
        print(
            f"list:   kairox {ours_list * 1000:7.1f} ms   baseline "
            f"{base_list * 1000:7.1f} ms   ratio {ours_list / base_list:5.2f}"
        )
        catalog = load_catalog([source])
        for query in QUERIES:
            base, raw_found = median_of(lambda q=query: baseline_search(q))  # type: ignore[misc]
            ours, found = median_of(lambda q=query: load_catalog([source]).search(q))  # type: ignore[misc]
            only, _ = median_of(lambda q=query: catalog.search(q))  # type: ignore[misc]
            assert len(found) == len(raw_found), (query, len(found), len(raw_found))
            print(
                f"search {query!r:16} ({len(found):5d} hits): kairox {ours * 1000:7.1f} ms (load + search; "
                f"{only * 1000:5.1f} ms on a loaded catalog)   baseline "
                f"{base * 1000:7.1f} ms   ratio {ours / base:5.2f}"
            )


if __name__ == "__main__":
    main()
