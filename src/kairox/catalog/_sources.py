"""``CatalogSource``: where catalog entries come from. The built-in list, a JSON manifest, or a registry.

Remote sources are fetched with conditional requests (ETag, If-Modified-Since), cached, used from the cache
while it is fresh, and used from the cache with its age when the source cannot be reached or serves garbage.
"""

import abc
import enum
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from kairox._util._json import JsonObject
from kairox.catalog._cache import CachedSource, CatalogCache
from kairox.catalog._model import CatalogEntry, CatalogFormatError, parse_entry
from kairox.errors import Diagnostic

if TYPE_CHECKING:
    import httpx

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""A response larger than this is refused (a registry page or a manifest is far smaller)."""
MAX_PAGES = 2_000
PAGE_LIMIT = 100
_REPORTED_BAD_ENTRIES = 5


class SourceStatus(enum.StrEnum):
    BUILTIN = "builtin"
    FRESH = "fresh"
    """Fetched (or confirmed unchanged with a 304) just now."""
    CACHED = "cached"
    """Used from the cache, which is younger than ``cache_ttl_sec``."""
    STALE = "stale"
    """The source could not be reached or read; the cache is used, however old."""
    FAILED = "failed"
    """The source could not be reached or read, and nothing is cached."""
    PENDING_TRUST = "pending_trust"


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceState:
    """How one source fared: for ``kairox mcp catalog sources`` and the listing's header."""

    name: str
    kind: str
    url: str | None
    status: SourceStatus
    entries: int = 0
    hidden: int = 0
    """Entries left out because their status is not ``active`` (deprecated, deleted)."""
    fetched_at: float | None = None
    downloaded: bool = False
    """Whether a body was downloaded this time (False for a cache hit or a 304)."""
    error: str | None = None
    where: str | None = None
    """The configuration file and line that declare the source."""

    def age_text(self, now: float | None = None) -> str | None:
        if self.fetched_at is None:
            return None
        return _age(max(0.0, (now or time.time()) - self.fetched_at))

    def summary(self, now: float | None = None) -> str:
        age = self.age_text(now)
        if self.status is SourceStatus.STALE:
            return f"cached {age} ago, source unreachable: {self.error}"
        if self.status is SourceStatus.FAILED:
            return f"unavailable: {self.error}"
        if self.status is SourceStatus.CACHED:
            return f"cached {age} ago"
        if self.status is SourceStatus.FRESH:
            return "fetched now" if self.downloaded else "unchanged (not modified)"
        if self.status is SourceStatus.PENDING_TRUST:
            return "waits for `kairox trust` (declared by an untrusted project)"
        return "shipped with Kairox"

    def to_json(self) -> JsonObject:
        return {
            "name": self.name,
            "kind": self.kind,
            "url": self.url,
            "status": str(self.status),
            "entries": self.entries,
            "hidden": self.hidden,
            "fetched_at": self.fetched_at,
            "age_sec": None if self.fetched_at is None else round(max(0.0, time.time() - self.fetched_at), 1),
            "downloaded": self.downloaded,
            "error": self.error,
            "where": self.where,
            "summary": self.summary(),
        }


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{int(seconds)} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} d"


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceLoad:
    """The active entries of one source, how it fared, and what was wrong in what it served."""

    entries: tuple[CatalogEntry, ...]
    state: SourceState
    diagnostics: tuple[Diagnostic, ...] = ()


def entries_from_documents(
    documents: list[Any], source: str, where: str
) -> tuple[list[CatalogEntry], int, list[Diagnostic]]:
    """Active entries of ``documents`` (``server.json`` or ``{"server": ..., "_meta": ...}`` items), the number
    hidden for their status, and diagnostics (a few bad entries named, the rest counted)."""
    entries: list[CatalogEntry] = []
    hidden = 0
    bad: list[CatalogFormatError] = []
    bad_count = 0
    for index, item in enumerate(documents):
        try:
            document, wrapper = _unwrap(item, f"{where}[{index}]")
            entry = parse_entry(document, source=source, where=f"{where}[{index}]", wrapper_meta=wrapper)
        except CatalogFormatError as exc:
            bad_count += 1
            if len(bad) < _REPORTED_BAD_ENTRIES:
                bad.append(exc)
            continue
        if entry.status != "active":
            hidden += 1
            continue
        entries.append(entry)
    diagnostics = [
        Diagnostic(
            kind="catalog",
            name=source,
            reason=f"entry skipped: {exc.where}: {exc.reason}",
            source=source,
            hint=exc.hint,
        )
        for exc in bad
    ]
    if bad_count > len(bad):
        diagnostics.append(
            Diagnostic(
                kind="catalog",
                name=source,
                reason=f"{bad_count - len(bad)} more entries skipped for the same kind of problem",
                source=source,
            )
        )
    return entries, hidden, diagnostics


def _unwrap(item: Any, where: str) -> tuple[Any, JsonObject | None]:
    if isinstance(item, dict) and isinstance(item.get("server"), dict):
        meta = item.get("_meta")
        if meta is not None and not isinstance(meta, dict):
            raise CatalogFormatError(f"{where}._meta", "expected an object")
        return item["server"], meta
    return item, None


class CatalogSource(abc.ABC):
    """One place catalog entries come from."""

    name: str
    kind: str
    url: str | None = None
    where: str | None = None

    @abc.abstractmethod
    def load(self, *, refresh: bool = False) -> SourceLoad:
        """The source's active entries; never raises for what the source serves or whether it answers."""


class BuiltinSource(CatalogSource):
    """The curated list shipped with Kairox: there is something to see on first start, without any network."""

    name = "builtin"
    kind = "builtin"

    def load(self, *, refresh: bool = False) -> SourceLoad:
        text = resources.files("kairox.catalog").joinpath("_builtin.json").read_text(encoding="utf-8")
        documents = json.loads(text)["servers"]
        entries, hidden, diagnostics = entries_from_documents(documents, self.name, "builtin")
        state = SourceState(
            name=self.name, kind=self.kind, url=None, status=SourceStatus.BUILTIN, entries=len(entries), hidden=hidden
        )
        return SourceLoad(entries=tuple(entries), state=state, diagnostics=tuple(diagnostics))


class _FetchError(Exception):
    """The source did not answer with a usable document; the message is phrased for the user."""


@dataclass(kw_only=True)
class _Fetched:
    documents: list[Any]
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False
    synced_at: str | None = None
    incremental: bool = False
    problems: list[Diagnostic] = field(default_factory=list)


class RemoteSource(CatalogSource):
    """A source fetched over HTTP(S): a JSON manifest or a registry speaking the MCP Registry API."""

    def __init__(
        self,
        name: str,
        url: str,
        kind: str,
        *,
        cache: CatalogCache,
        ttl_sec: float,
        where: str | None = None,
        client: "httpx.Client | None" = None,
        timeout_sec: float = 15.0,
    ) -> None:
        if kind not in ("manifest", "registry"):
            raise ValueError(f"unknown catalog source kind {kind!r}")
        self.name, self.url, self.kind, self.where = name, url, kind, where
        self.cache = cache
        self.ttl_sec = ttl_sec
        self._client = client
        self.timeout_sec = timeout_sec

    def load(self, *, refresh: bool = False) -> SourceLoad:
        assert self.url is not None
        cached = self.cache.read(self.name, self.url, self.kind)
        now = time.time()
        if cached is not None and not refresh and now - cached.fetched_at < self.ttl_sec:
            return self._from_cache(cached, SourceStatus.CACHED)
        try:
            fetched = self._fetch(cached)
        except _FetchError as exc:
            if cached is not None:
                return self._from_cache(cached, SourceStatus.STALE, error=str(exc))
            # the state says what went wrong; the other sources are listed meanwhile
            state = SourceState(
                name=self.name,
                kind=self.kind,
                url=self.url,
                status=SourceStatus.FAILED,
                error=str(exc),
                where=self.where,
            )
            return SourceLoad(entries=(), state=state)
        if fetched.not_modified and cached is not None:
            cached.fetched_at = now
            self.cache.write(cached)
            return self._from_cache(cached, SourceStatus.FRESH)
        documents = fetched.documents
        if fetched.incremental and cached is not None:
            documents = _merge_updates(cached.documents, documents)
        updated = CachedSource(
            name=self.name,
            url=self.url,
            kind=self.kind,
            fetched_at=now,
            synced_at=fetched.synced_at,
            etag=fetched.etag,
            last_modified=fetched.last_modified,
            documents=documents,
        )
        self.cache.write(updated)
        load = self._from_cache(updated, SourceStatus.FRESH, downloaded=True)
        return SourceLoad(entries=load.entries, state=load.state, diagnostics=(*fetched.problems, *load.diagnostics))

    def _from_cache(
        self, cached: CachedSource, status: SourceStatus, *, error: str | None = None, downloaded: bool = False
    ) -> SourceLoad:
        entries, hidden, diagnostics = entries_from_documents(cached.documents, self.name, self.name)
        state = SourceState(
            name=self.name,
            kind=self.kind,
            url=self.url,
            status=status,
            entries=len(entries),
            hidden=hidden,
            fetched_at=cached.fetched_at,
            downloaded=downloaded,
            error=error,
            where=self.where,
        )
        return SourceLoad(entries=tuple(entries), state=state, diagnostics=tuple(diagnostics))

    # --- HTTP ------------------------------------------------------------------------------------------------

    def _fetch(self, cached: CachedSource | None) -> _Fetched:
        import httpx  # only when a source is fetched: listing the built-in catalog stays light

        client = self._client or httpx.Client(timeout=self.timeout_sec, follow_redirects=True)
        try:
            if self.kind == "manifest":
                return self._fetch_manifest(client, cached)
            return self._fetch_registry(client, cached)
        finally:
            if self._client is None:
                client.close()

    def _get(self, client: "httpx.Client", url: str, headers: dict[str, str]) -> "tuple[httpx.Response, bytes]":
        import httpx

        try:
            with client.stream("GET", url, headers={"Accept": "application/json", **headers}) as response:
                if response.status_code == 304:
                    return response, b""
                if response.status_code >= 400:
                    raise _FetchError(f"HTTP {response.status_code} from {url}")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
                    raise _FetchError(
                        f"{url} sent {int(declared) // (1024 * 1024)} MB, more than the "
                        f"{MAX_RESPONSE_BYTES // (1024 * 1024)} MB a catalog may have"
                    )
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise _FetchError(
                            f"{url} sent more than the {MAX_RESPONSE_BYTES // (1024 * 1024)} MB a catalog may have"
                        )
                return response, bytes(body)
        except httpx.HTTPError as exc:
            raise _FetchError(f"cannot reach {url}: {exc.__class__.__name__}: {exc}") from exc

    @staticmethod
    def _conditional(cached: CachedSource | None) -> dict[str, str]:
        headers: dict[str, str] = {}
        if cached is not None and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached is not None and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
        return headers

    @staticmethod
    def _json(body: bytes, url: str) -> Any:
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            preview = body[:60].decode("utf-8", "replace")
            raise _FetchError(
                f"{url} did not send JSON ({exc.__class__.__name__}: {str(exc)[:120]}; starts with {preview!r})"
            ) from exc

    def _fetch_manifest(self, client: "httpx.Client", cached: CachedSource | None) -> _Fetched:
        assert self.url is not None
        response, body = self._get(client, self.url, self._conditional(cached))
        if response.status_code == 304:
            return _Fetched(documents=[], not_modified=True)
        data = self._json(body, self.url)
        if isinstance(data, dict) and "servers" in data:
            data = data["servers"]
        if not isinstance(data, list):
            raise _FetchError(
                f"{self.url}: a catalog manifest is a list of server.json "
                f'entries (or {{"servers": [...]}}), not {type(data).__name__}'
            )
        return _Fetched(
            documents=data, etag=response.headers.get("etag"), last_modified=response.headers.get("last-modified")
        )

    def _fetch_registry(self, client: "httpx.Client", cached: CachedSource | None) -> _Fetched:
        assert self.url is not None
        base = self.url.rstrip("/")
        incremental = cached is not None and cached.synced_at is not None
        query: dict[str, str] = {"limit": str(PAGE_LIMIT), "version": "latest"}
        if incremental and cached is not None and cached.synced_at:
            query["updated_since"] = cached.synced_at
        started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        documents: list[Any] = []
        etag = last_modified = None
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(MAX_PAGES):
            params = dict(query, **({"cursor": cursor} if cursor else {}))
            url = f"{base}/v0.1/servers?{urlencode(params)}"
            response, body = self._get(client, url, self._conditional(cached) if page == 0 else {})
            if response.status_code == 304:
                return _Fetched(documents=[], not_modified=True)
            if page == 0:
                etag, last_modified = response.headers.get("etag"), response.headers.get("last-modified")
            data = self._json(body, url)
            servers, cursor = _registry_page(data, url)
            documents.extend(servers)
            if not cursor:
                break
            if cursor in seen:
                raise _FetchError(f"{url}: the registry sent the cursor {cursor!r} twice (paging would never end)")
            seen.add(cursor)
        else:
            raise _FetchError(f"{base}: more than {MAX_PAGES} pages; is the registry paging correctly?")
        return _Fetched(
            documents=documents, etag=etag, last_modified=last_modified, synced_at=started, incremental=incremental
        )


def _registry_page(data: Any, url: str) -> tuple[list[Any], str | None]:
    if not isinstance(data, dict) or not isinstance(data.get("servers"), list):
        raise _FetchError(f'{url}: a registry page is {{"servers": [...], "metadata": {{...}}}}, not what was sent')
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise _FetchError(f"{url}: `metadata` is not an object")
    cursor = metadata.get("nextCursor", metadata.get("next_cursor"))
    if cursor is not None and not isinstance(cursor, str):
        raise _FetchError(f"{url}: `metadata.nextCursor` is not a string")
    return list(data["servers"]), cursor or None


def _document_id(item: Any) -> str | None:
    server = item.get("server") if isinstance(item, dict) and isinstance(item.get("server"), dict) else item
    name = server.get("name") if isinstance(server, dict) else None
    return name if isinstance(name, str) else None


def _merge_updates(old: list[Any], updates: list[Any]) -> list[Any]:
    """An incremental sync: updated entries replace theirs by id (a deleted one stays, with its status)."""
    merged: dict[str, Any] = {}
    anonymous: list[Any] = []
    for item in (*old, *updates):
        key = _document_id(item)
        if key is None:
            anonymous.append(item)
        else:
            merged.pop(key, None)
            merged[key] = item
    return [*merged.values(), *anonymous]
