"""What both wires share: one ``httpx`` client per session, a streamed POST opened under the shared retry loop,
server-sent events read as they arrive, and failures classified (status, ``Retry-After``, timeouts, broken
connections).

Kairox speaks the two wire formats itself instead of through the ``openai`` and ``anthropic`` SDKs: importing
the SDKs cost 0.45 s and 1.2-1.5 s on a 2-core machine (their ``__init__`` loads every pydantic type of every
API, hundreds of modules, before the first request; teardown at exit another 0.1-0.25 s), against about 0.1 s
for ``httpx``, and a session needs one streaming endpoint of each."""

import json
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import anyio

from kairox.agent._provider import Failure, ModelProviderError, ModelSettings, status_failure, with_retries
from kairox.events import EventSink

if TYPE_CHECKING:
    import httpx


def import_httpx() -> ModuleType:
    """``httpx``, without its command-line module: ``httpx/__init__`` imports ``httpx._main`` only to offer
    ``httpx.main``, and that loads click, rich and pygments when they are installed (about 0.1 s, as long as the
    rest of ``httpx``). Marked missing while ``httpx`` loads, it falls back to its stub; the mark is taken away
    after, so an explicit ``import httpx._main`` still works."""
    if "httpx" not in sys.modules:
        marked = "httpx._main" not in sys.modules
        if marked:
            sys.modules["httpx._main"] = None  # type: ignore[assignment]  # import machinery: None means "cannot be imported"
        try:
            import httpx
        finally:
            if marked and "httpx._main" in sys.modules and sys.modules["httpx._main"] is None:
                del sys.modules["httpx._main"]
    import httpx

    return httpx


_loader: threading.Thread | None = None
_ssl_context: list[Any] = []
"""The TLS context of the session's client, made by the loader thread."""


def _load() -> None:
    httpx = import_httpx()
    make = getattr(httpx, "create_ssl_context", None)  # httpx >= 0.28; older ones make their own
    if make is not None:
        # what the client would make itself (certifi's roots, or SSL_CERT_FILE / SSL_CERT_DIR): ~20-70 ms of
        # reading certificates, most of it with the interpreter lock released, so here it runs beside the servers' start
        _ssl_context.append(make())


def preload() -> None:
    """Start loading what the first model request needs in a thread, so it overlaps the servers' start-up (their
    processes boot and answer ``initialize`` while this process would otherwise wait): ``httpx``, and the TLS
    context every client of the process shares."""
    global _loader
    if _loader is None and "httpx" not in sys.modules:
        _loader = threading.Thread(target=_load, name="kairox-preload", daemon=True)
        _loader.start()


def _tls_context() -> Any:
    """The loader's TLS context (waiting for the loader if it still runs), or ``True``: the client makes one."""
    if _loader is not None:
        _loader.join()
    return _ssl_context[0] if _ssl_context else True


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerSentEvent:
    event: str
    """The ``event:`` field; ``message`` when the server sent none."""
    data: str


class HttpStatusError(Exception):
    """The provider answered the request with an error status."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.message, self.headers = status, message, headers


def error_message(body: bytes, fallback: str) -> str:
    """``error.message`` of a JSON error body (both wires put it there), else the body's start, else ``fallback``."""
    try:
        value = json.loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()
        return text[:500] or fallback
    error = value.get("error", value) if isinstance(value, dict) else value
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return json.dumps(value)[:500]


def http_failure(exc: BaseException) -> Failure | None:
    """Classify what opening a request raised; ``None``: not a request failure (a bug, a cancellation)."""
    httpx = import_httpx()

    if isinstance(exc, HttpStatusError):
        return status_failure(exc.status, str(exc), exc.headers)
    if isinstance(exc, httpx.TimeoutException):
        return Failure(
            message=f"the request timed out ({type(exc).__name__}: {exc or 'no answer in time'})", retryable=True
        )
    if isinstance(exc, httpx.TransportError):
        return Failure(message=f"cannot connect: {type(exc).__name__}: {exc}", retryable=True)
    return None


def broken_off(settings: ModelSettings, exc: Exception) -> ModelProviderError:
    """A failure once the answer streams: final (the front end has shown part of it)."""
    failure = http_failure(exc)
    message = failure.message if failure else f"{type(exc).__name__}: {exc}"
    return ModelProviderError(settings.provider, f"the answer broke off: {message}")


class HttpWire:
    """What Kairox's own model clients share: one provider endpoint, its ``httpx`` client (made on the first
    request), POSTs streamed under retries."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        url: str,
        events: EventSink,
        headers: Mapping[str, str],
        on_sent: Callable[[], None] | None = None,
    ) -> None:
        self.settings = settings
        self.events = events
        self._url = url
        self._headers = {**headers, **settings.headers}  # the configured headers win
        self._client: httpx.AsyncClient | None = None
        self._extensions: dict[str, Any] = {}
        if on_sent is not None:

            async def trace(name: str, info: Mapping[str, Any]) -> None:
                if name.endswith(".send_request_body.complete"):  # the request is out: the answer takes a while
                    on_sent()

            self._extensions["trace"] = trace

    def _http(self) -> "httpx.AsyncClient":
        if self._client is None:
            httpx = import_httpx()
            timeout = self.settings.request_timeout_sec
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, connect=min(timeout, 30.0)), headers=self._headers, verify=_tls_context()
            )
        return self._client

    @property
    def model(self) -> str:
        return self.settings.model

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    @asynccontextmanager
    async def post(self, body: dict[str, Any]) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
        """POST ``body`` and yield its server-sent events; retried (429, 5xx, timeouts, refused connections)
        until the answer starts. The response is closed when the block ends, also on a cancel."""
        url, client = self._url, self._http()
        content = json.dumps(body, ensure_ascii=False).encode()
        headers = {"content-type": "application/json", "accept": "text/event-stream"}

        async def attempt() -> "httpx.Response":
            response = await client.send(
                client.build_request("POST", url, content=content, headers=headers, extensions=self._extensions),
                stream=True,
            )
            if response.status_code >= 400:
                try:
                    raw = await response.aread()
                finally:
                    await response.aclose()
                raise HttpStatusError(
                    response.status_code, error_message(raw, response.reason_phrase), response.headers
                )
            return response

        response = await with_retries(self.settings, attempt, http_failure, self.events)
        try:
            yield _events(response)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await response.aclose()


async def _events(response: "httpx.Response") -> AsyncIterator[ServerSentEvent]:
    """The server-sent events of a streamed response, each when its blank line arrives."""
    kind, data = "", list[str]()
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield ServerSentEvent(event=kind or "message", data="\n".join(data))
            kind, data = "", list[str]()
        elif line.startswith(":"):
            continue  # a comment (keep-alive)
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "event":
                kind = value
    if data:
        yield ServerSentEvent(event=kind or "message", data="\n".join(data))
