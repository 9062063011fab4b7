"""The on-disk cache of remote catalogs: ``$KAIROX_HOME/cache/catalog/<source>-<hash>.json``.

A cached source keeps the documents as they were served (re-read on every load, so a newer Kairox reads them
with its newer model), the validators for conditional requests (ETag, Last-Modified) and when it was fetched.
"""

import hashlib
import json
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kairox._util._files import write_atomically
from kairox._util._json import JsonObject

CACHE_VERSION = 1


def catalog_cache_dir(home: Path) -> Path:
    return home / "cache" / "catalog"


@dataclass(kw_only=True, slots=True)
class CachedSource:
    """What was last fetched from one source."""

    name: str
    url: str
    kind: str
    fetched_at: float
    """When the source last answered (a 304 counts): seconds since the epoch."""
    synced_at: str | None = None
    """The registry's time of the last full or incremental sync, for ``updated_since``."""
    etag: str | None = None
    last_modified: str | None = None
    documents: list[JsonObject] = field(default_factory=list)
    """``{"server": server.json, "_meta": registry meta}`` items as served."""

    def to_json(self) -> JsonObject:
        return {"version": CACHE_VERSION, **{f.name: getattr(self, f.name) for f in fields(self)}}


class CatalogCache:
    """Reads and writes cached sources; a broken cache file is treated as absent (it is only a cache)."""

    def __init__(self, home: Path) -> None:
        self.folder = catalog_cache_dir(home)

    def path(self, name: str, url: str, kind: str) -> Path:
        digest = hashlib.sha256(f"{kind} {url}".encode()).hexdigest()[:12]
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]
        return self.folder / f"{safe}-{digest}.json"

    def read(self, name: str, url: str, kind: str) -> CachedSource | None:
        path = self.path(name, url, kind)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (
            not isinstance(data, dict)
            or data.get("version") != CACHE_VERSION
            or not isinstance(data.get("documents"), list)
        ):
            return None
        fetched = data.get("fetched_at")
        if not isinstance(fetched, int | float):
            return None
        text = {
            k: data.get(k) if isinstance(data.get(k), str) else None for k in ("synced_at", "etag", "last_modified")
        }
        return CachedSource(
            name=name, url=url, kind=kind, fetched_at=float(fetched), documents=data["documents"], **text
        )

    def write(self, cached: CachedSource) -> Path:
        path = self.path(cached.name, cached.url, cached.kind)
        write_atomically(path, json.dumps(cached.to_json(), ensure_ascii=False, separators=(",", ":")).encode())
        return path

    # --- tools seen in dry runs ------------------------------------------------------------------------------

    def tools_path(self, entry_id: str, version: str) -> Path:
        digest = hashlib.sha256(f"{entry_id}@{version}".encode()).hexdigest()[:16]
        return self.folder / "tools" / f"{digest}.json"

    def read_tools(self, entry_id: str, version: str) -> list[JsonObject] | None:
        """The tools a dry run of this entry listed, or None when no dry run was recorded."""
        try:
            data: Any = json.loads(self.tools_path(entry_id, version).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        tools = data.get("tools") if isinstance(data, dict) else None
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else None

    def write_tools(self, entry_id: str, version: str, tools: list[JsonObject]) -> None:
        path = self.tools_path(entry_id, version)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps({"id": entry_id, "version": version, "tools": tools}, ensure_ascii=False), encoding="utf-8"
        )
