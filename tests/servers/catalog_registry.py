"""A small MCP Registry for the catalog tests: the registry API's shape on 127.0.0.1.

``python catalog_registry.py [--entries N]`` prints its port on the first line of stdout, then serves until
its stdin closes (the test ends) or 10 minutes pass.

- ``GET /v0.1/servers?limit=&cursor=&search=&version=latest&updated_since=``: cursor paging, search, an ETag
  for the data's version (``If-None-Match`` gets a 304), one entry ``deleted`` and one ``deprecated``.
- ``GET /manifest.json``: every entry as one JSON list (a catalog manifest), with the same ETag.
- ``/garbage/...``, ``/wrong/...``, ``/huge/...`` prefixes: not JSON, wrong types, 10 MB of broken JSON.
- ``POST /control?down=1|0``: down mode answers every request with 503; ``POST /control?bump=NAME``
  changes one entry's description (the data version and its ``updatedAt`` move on).
- ``GET /stats``: how many bodies were sent (``full``), how many 304s, and the request paths.
"""

import argparse
import json
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

OFFICIAL = "io.modelcontextprotocol.registry/official"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Registry:
    def __init__(self, count: int) -> None:
        self.lock = threading.Lock()
        self.version = 1
        self.down = False
        self.stats: dict[str, object] = {"full": 0, "not_modified": 0, "paths": []}
        start = "2026-01-01T00:00:00.000000Z"
        self.items: list[dict[str, object]] = []
        for index in range(count):
            self.items.append(self._item(f"io.example/server-{index:03d}", f"Example server number {index}", start))
        self.items.append(self._item("io.example/weather", "Weather forecasts for any city", start, title="Weather"))
        self.items.append(self._item("io.example/gone", "A server that was deleted", start, status="deleted"))
        self.items.append(self._item("io.example/old", "A server that was deprecated", start, status="deprecated"))

    @staticmethod
    def _item(
        name: str, description: str, updated: str, *, status: str = "active", title: str | None = None
    ) -> dict[str, object]:
        server: dict[str, object] = {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": name,
            "description": description,
            "version": "1.0.0",
            "packages": [
                {
                    "registryType": "npm",
                    "identifier": f"@example/{name.rsplit('/', 1)[-1]}",
                    "version": "1.0.0",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [{"name": "EXAMPLE_TOKEN", "isRequired": True, "isSecret": True}],
                }
            ],
            "remotes": [
                {
                    "type": "streamable-http",
                    "url": "http://127.0.0.1:9/mcp",
                    "headers": [
                        {
                            "name": "Authorization",
                            "value": "Bearer {example_token}",
                            "isSecret": True,
                            "isRequired": True,
                            "variables": {"example_token": {"isRequired": True, "isSecret": True}},
                        }
                    ],
                }
            ],
            "x-unknown-field": {"kept": True},
        }
        if title:
            server["title"] = title
        meta = {OFFICIAL: {"status": status, "publishedAt": updated, "updatedAt": updated, "isLatest": True}}
        return {"server": server, "_meta": meta}

    def bump(self, name: str) -> None:
        with self.lock:
            for item in self.items:
                server = item["server"]
                assert isinstance(server, dict)
                if server["name"] == name:
                    server["description"] = f"{server['description']} (updated)"
                    meta = item["_meta"]
                    assert isinstance(meta, dict)
                    meta[OFFICIAL]["updatedAt"] = _now()
            self.version += 1


class Handler(BaseHTTPRequestHandler):
    registry: Registry

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _json(self, data: object, etag: str | None = None) -> None:
        if etag is not None and self.headers.get("If-None-Match") == etag:
            with self.registry.lock:
                self.registry.stats["not_modified"] = int(self.registry.stats["not_modified"]) + 1  # type: ignore[call-overload]
            self._send(304, b"", {"ETag": etag})
            return
        with self.registry.lock:
            self.registry.stats["full"] = int(self.registry.stats["full"]) + 1  # type: ignore[call-overload]
        headers = {"Content-Type": "application/json"}
        if etag is not None:
            headers["ETag"] = etag
        self._send(200, json.dumps(data).encode(), headers)

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/control":
            if "down" in query:
                self.registry.down = query["down"][0] == "1"
            if "bump" in query:
                self.registry.bump(query["bump"][0])
            self._send(204, b"")
            return
        self._send(404, b"{}")

    def do_GET(self) -> None:
        registry = self.registry
        url = urlsplit(self.path)
        if url.path == "/stats":
            with registry.lock:
                self._send(200, json.dumps(registry.stats).encode())
            return
        with registry.lock:
            paths = registry.stats["paths"]
            assert isinstance(paths, list)
            paths.append(self.path)
        if registry.down:
            self._send(503, b"down for maintenance")
            return
        mode, _, rest = url.path.lstrip("/").partition("/")
        if mode not in ("garbage", "wrong", "huge"):
            mode, rest = "", url.path.lstrip("/")
        if mode == "garbage":
            self._send(200, b"<html><body>502 Bad Gateway</body></html>", {"Content-Type": "text/html"})
            return
        if mode == "huge":
            body = b'{"servers": [' + b'{"name": "io.example/x", "description": "' + b"x" * (10 * 1024 * 1024) + b'"'
            self._send(200, body, {"Content-Type": "application/json"})
            return
        if mode == "wrong":
            wrong = [
                {"server": {"name": 5, "description": [], "version": {}}},
                "text",
                {"name": "a/b", "description": "d", "version": "1", "packages": "npm"},
            ]
            self._json({"servers": wrong, "metadata": {"count": 3}} if rest.startswith("v0.1") else wrong)
            return
        etag = f'W/"catalog-v{registry.version}"'
        with registry.lock:
            items = json.loads(json.dumps(registry.items))
        if rest == "manifest.json":
            self._json([item["server"] | {"_meta": item["_meta"]} for item in items], etag)
            return
        if rest != "v0.1/servers":
            self._send(404, b'{"error": "not found"}')
            return
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        search = query.get("search", "").lower()
        if search:
            items = [
                i
                for i in items
                if search in i["server"]["name"].lower() or search in i["server"]["description"].lower()
            ]
        since = query.get("updated_since")
        if since:
            after = datetime.fromisoformat(since)
            items = [i for i in items if datetime.fromisoformat(i["_meta"][OFFICIAL]["updatedAt"]) > after]
        limit = max(1, min(100, int(query.get("limit", "30"))))
        offset = int(query.get("cursor", "0") or "0")
        page = items[offset : offset + limit]
        following = offset + limit
        metadata: dict[str, object] = {"count": len(page)}
        if following < len(items):
            metadata["nextCursor"] = str(following)
        self._json({"servers": page, "metadata": metadata}, etag)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=250)
    parser.add_argument("--lifetime", type=float, default=600.0)
    options = parser.parse_args()
    Handler.registry = Registry(options.entries)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()
    deadline = time.monotonic() + options.lifetime
    # the test holds our stdin: when it closes (the test ended, or died), so do we
    watcher = threading.Thread(target=sys.stdin.read, daemon=True)
    watcher.start()
    while watcher.is_alive() and time.monotonic() < deadline:
        watcher.join(0.2)
    server.shutdown()


if __name__ == "__main__":
    main()
