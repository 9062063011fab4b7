"""Running the gateway: over stdio (one client, the host that launched us) or Streamable HTTP (many clients).

Shutdown is the same for both: SIGTERM or SIGINT (or stdin closing, for stdio) stops taking new calls, waits for
the calls in flight (``drain_sec``), then leaves the context, which stops every upstream server it started.
"""

import contextlib
import hmac
import ipaddress
import re
import signal
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from mcp.server.streamable_http_manager import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from kairox.errors import KairoxError
from kairox.events import EventSink, FanoutSink
from kairox.gateway._server import Gateway, GatewayEvents, GatewayOptions
from kairox.gateway._team import Team, TeamApp, default_replica
from kairox.gateway._users import Users
from kairox.runtime import RuntimeOptions

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
PATH = "/mcp"
_PORT = re.compile(r"[0-9]{1,5}")


class GatewayConfigError(KairoxError):
    """``kairox serve`` was asked for something unsafe or impossible (a public address without a token)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    """Every request must carry ``Authorization: Bearer <token>``; required off loopback."""
    allowed_hosts: tuple[str, ...] = ()
    """More ``Host`` header values to accept (``name:*`` for any port); the bound host is always accepted."""
    allowed_origins: tuple[str, ...] = ()
    """More ``Origin`` values to accept; requests without ``Origin`` (not from a browser) are accepted."""
    max_body_bytes: int = DEFAULT_MAX_REQUEST_BODY_SIZE
    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout_sec: float = DEFAULT_SESSION_IDLE_TIMEOUT
    users: Users | None = None
    """A person per token (``--users-file``, OIDC) instead of one shared ``token``."""

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False

    @property
    def names(self) -> tuple[str, ...]:
        """The host names this server answers for on its own port: the loopback names and the bound host."""
        bound = self.host if ":" not in self.host or self.host.startswith("[") else f"[{self.host}]"
        return tuple(dict.fromkeys([*(h[:-2] for h in LOOPBACK_HOSTS), bound]))

    def security(self) -> TransportSecuritySettings:
        """Host and Origin checks (DNS rebinding): loopback names, the bound host, and what was allowed."""
        bound = self.host if ":" not in self.host or self.host.startswith("[") else f"[{self.host}]"
        hosts = [*LOOPBACK_HOSTS, f"{bound}:*", *self.allowed_hosts]
        origins = [*LOOPBACK_ORIGINS, f"http://{bound}:*", *self.allowed_origins]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )


class ExactHosts:
    """ASGI wrapper in front of the SDK's own Host and Origin check, which reads ``localhost:*`` as any text after
    ``localhost:`` (``localhost:8765@evil.com``, ``127.0.0.1:8765.evil.com``, another port): here the loopback
    names and the bound host must carry exactly the port this server listens on (from the connection), and a
    ``name:*`` the user allowed must end in a port number. 421 for a Host, 403 for an Origin, as the SDK answers."""

    def __init__(self, app: ASGIApp, *, names: Sequence[str], hosts: Sequence[str], origins: Sequence[str]) -> None:
        self.app = app
        self.names = tuple(names)
        """Host names served on this server's own port: the loopback names and the bound host."""
        self.hosts, self.origins = tuple(hosts), tuple(origins)
        """What the user allowed besides (``--allow-host``, ``--allow-origin``)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            server = scope.get("server")
            port = str(server[1]) if server else None
            headers = Headers(scope=scope)
            host = headers.get("host")
            if host is None or not _allowed(host, self.names, self.hosts, port):
                await PlainTextResponse("Invalid Host header", status_code=421)(scope, receive, send)
                return
            origin = headers.get("origin")
            if origin is not None and not _allowed(
                origin, tuple(f"http://{n}" for n in self.names), self.origins, port
            ):
                await PlainTextResponse("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _allowed(value: str, names: Sequence[str], patterns: Sequence[str], port: str | None) -> bool:
    """``value`` is one of ``names`` with exactly ``port``, or matches one of ``patterns`` (``name:*``: any port
    number, nothing else after it)."""
    if port is not None and any(value == f"{name}:{port}" for name in names):
        return True
    for pattern in patterns:
        if pattern.endswith(":*"):
            prefix = pattern[:-1]
            if value.startswith(prefix) and _PORT.fullmatch(value[len(prefix) :]):
                return True
        elif value == pattern:
            return True
    return False


def parse_listen(text: str) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[V6]:PORT`` -> (host, port); the host is 127.0.0.1 when left out."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise GatewayConfigError(
            f"--http {text!r}: expected [HOST:]PORT with a port from 0 to 65535",
            hint="e.g. --http 8765 or --http 0.0.0.0:8765",
        )
    return host.strip("[]") or "127.0.0.1", int(port)


class BearerToken:
    """ASGI wrapper: 401 unless the request carries the gateway's token (compared in constant time)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = Headers(scope=scope).get("authorization", "").encode()
            if not hmac.compare_digest(given, self.expected):
                response = PlainTextResponse(
                    "kairox serve needs `Authorization: Bearer <token>` (the token given to --token or --token-file)",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="kairox"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


@contextlib.asynccontextmanager
async def open_gateway(
    runtime: RuntimeOptions, options: GatewayOptions, *, events: EventSink | None = None, team: bool = True
) -> AsyncIterator[Gateway]:
    """Build the workspace's context and a gateway over it; leaving stops every server the context started.
    ``team``: keep state in the store (``kairox serve``); ``kairox proxy`` serves one person from one process."""
    gateway_events = GatewayEvents()
    sink = FanoutSink([gateway_events, *([events] if events is not None else [])])
    from kairox.agent import open_workspace, serve_tasks
    from kairox.gateway._store import Store, default_url
    from kairox.gateway._telemetry import from_env

    telemetry = from_env()
    async with contextlib.AsyncExitStack() as stack:
        if telemetry is not None:  # `kairox serve`'s own events reach it through the command's sink
            stack.callback(telemetry.shutdown)
        opened = await stack.enter_async_context(
            open_workspace(cli=runtime, session=False, events=[sink])
        )  # the gateway's clients bring the model; the configured one, when there is one, runs `task`'s agents
        await stack.enter_async_context(serve_tasks(opened.context, sink))
        if not team:
            yield Gateway(opened.context, gateway_events, options, team=None)
            return
        url = options.store or opened.context.resolved.config.gateway.store or default_url(opened.context.resolved.home)
        store = await anyio.to_thread.run_sync(Store, url)
        stack.callback(store.close)
        await anyio.to_thread.run_sync(store.migrate)
        await anyio.to_thread.run_sync(store.prune)
        shared = await anyio.to_thread.run_sync(
            lambda: Team(
                store,
                replica=options.replica or default_replica(),
                telemetry=telemetry,
            )
        )
        yield Gateway(opened.context, gateway_events, options, team=shared)


async def _until_signal(gateway: Gateway, drain_sec: float, stop: Callable[[], None]) -> None:
    """On SIGTERM or SIGINT: let the calls in flight finish (up to ``drain_sec``), then ``stop``."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            gateway.closing = True
            if not await gateway.drain(drain_sec):
                sys.stderr.write(
                    f"kairox serve: {gateway.in_flight} calls still running after {drain_sec:g}s; stopping them\n"
                )
            stop()
            return


async def serve_stdio(
    runtime: RuntimeOptions, options: GatewayOptions, *, events: EventSink | None = None, drain_sec: float = 10.0
) -> None:
    async with open_gateway(runtime, options, events=events) as gateway:
        _report(gateway, "serving MCP over stdio")
        await run_stdio(gateway, gateway.server, drain_sec, also=gateway.announce_changes)


async def run_stdio(
    gateway: Gateway, server: Any, drain_sec: float, *, also: Callable[[], Coroutine[Any, Any, None]] | None = None
) -> None:
    """Serve ``server`` (the gateway's, or a proxy's over the gateway's gate) to the host on stdin/stdout."""
    from mcp.server.stdio import stdio_server

    async with anyio.create_task_group() as tasks:
        if also is not None:
            tasks.start_soon(also)
        tasks.start_soon(gateway.events.relay.run)
        tasks.start_soon(_until_signal, gateway, drain_sec, tasks.cancel_scope.cancel)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        tasks.cancel_scope.cancel()  # stdin closed: the host is gone


def http_app(gateway: Gateway, http: HttpOptions, server: Any = None) -> ASGIApp:
    app: ASGIApp = (server or gateway.server).streamable_http_app(
        streamable_http_path=PATH,
        transport_security=http.security(),
        host=http.host,
        max_request_body_size=http.max_body_bytes,
        max_sessions=http.max_sessions,
        session_idle_timeout=http.idle_timeout_sec,
    )
    app = ExactHosts(app, names=http.names, hosts=http.allowed_hosts, origins=http.allowed_origins)
    app = BearerToken(app, http.token) if http.token and http.users is None else app
    if gateway.team is None:
        return app
    return TeamApp(app, team=gateway.team, gateway=gateway, users=http.users, max_body=http.max_body_bytes)


async def serve_http(
    runtime: RuntimeOptions,
    options: GatewayOptions,
    http: HttpOptions,
    *,
    events: EventSink | None = None,
    drain_sec: float = 10.0,
) -> None:
    if not http.loopback and not http.token and http.users is None:
        raise GatewayConfigError(
            f"serving on {http.host} (not loopback) needs a token",
            hint="pass --token-file PATH (or --token), or bind 127.0.0.1",
        )
    async with open_gateway(runtime, options, events=events) as gateway:
        await run_http(gateway, gateway.server, http, drain_sec, also=gateway.announce_changes)


async def run_http(
    gateway: Gateway,
    server: Any,
    http: HttpOptions,
    drain_sec: float,
    *,
    also: Callable[[], Coroutine[Any, Any, None]] | None = None,
    who: str = "kairox serve",
) -> None:
    """Serve ``server`` over Streamable HTTP until SIGTERM or SIGINT (the calls in flight drain first)."""
    config = uvicorn.Config(
        http_app(gateway, http, server),
        host=http.host,
        port=http.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        access_log=False,
    )
    web = _Uvicorn(config)

    def stop() -> None:
        web.should_exit = True

    async with anyio.create_task_group() as tasks:
        if also is not None:
            tasks.start_soon(also)
        tasks.start_soon(gateway.events.relay.run)
        tasks.start_soon(_until_signal, gateway, drain_sec, stop)
        tasks.start_soon(_announce_address, web, gateway, http, who)
        await web.serve()
        tasks.cancel_scope.cancel()


async def _announce_address(server: uvicorn.Server, gateway: Gateway, http: HttpOptions, who: str) -> None:
    while not server.started:
        await anyio.sleep(0.02)
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    _report(gateway, f"serving MCP on http://{shown}:{port}{PATH}", who=who)
    if not http.loopback:
        sys.stderr.write(
            f"{who}: warning: listening on {http.host}, reachable from other machines; every request needs the token\n"
        )
        sys.stderr.flush()


def _report(gateway: Gateway, what: str, *, who: str = "kairox serve") -> None:
    if who == "kairox serve":
        tools = len(gateway.served())
        listed = f"{tools} tools behind kairox_search_tools" if gateway.options.search else f"{tools} tools"
    else:
        listed = f"{sum(1 for s in gateway.context.registry.tools() if s.origin == gateway.options.name)} tools"
    team = f"; store {gateway.team.store.shown}; replica {gateway.team.replica}" if gateway.team else ""
    lines = [f"{who}: {what} ({listed}; audit log {gateway.audit.path}{team})"]
    lines += [f"{who}: {d.severity}: {d.name}: {d.reason}" for d in [*gateway.context.failures(), *gateway.diagnostics]]
    if not gateway.held.empty and who == "kairox serve":
        lines.append(f"{who}: note: {gateway.held.notice()}")
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


class _Uvicorn(uvicorn.Server):
    """uvicorn's server without its own signal handlers: the gateway drains its calls first, then stops it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
