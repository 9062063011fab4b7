"""``McpClient``: one MCP server behind one supervisor task (M2, M6, M7, M8).

The supervisor task opens the transport and a session in its own exit stack, lists what the server offers,
moves the :class:`ServerLifecycle` through its states, and closes everything in the same task (anyio cancel
scopes belong to one task). Calls come from any task; they use the session the supervisor holds. A server that
goes away after it was Ready is restarted with exponential backoff, up to ``max_restarts``.

The session is Kairox's own (``_native``) for servers of the handshake era, on every transport; a server that
answers the 2026 ``server/discover`` probe is handed to the SDK's ``Client`` (``_sdk``) on the same connection.
A process whose servers all speak stdio and the handshake era never imports the SDK.
"""

import asyncio
import contextlib
import gc
import math
import os
import signal
import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import anyio.abc

from kairox._rpc import ChildProcess, start_host_guard
from kairox._util import JsonObject
from kairox._version import __version__
from kairox.config import McpServerConfig
from kairox.events import EventSink, NullSink
from kairox.mcp._callbacks import ClientCallbacks
from kairox.mcp._content import McpResource, McpTool, is_offered
from kairox.mcp._events import McpProtocolViolation, McpServerRestarting, McpToolProgress, McpToolsChanged
from kairox.mcp._features import ClientFeatures
from kairox.mcp._files import server_file_stem
from kairox.mcp._lifecycle import FailureCause, ServerLifecycle, ServerStatus
from kairox.mcp._native import NativeSession, SdkStreamChannel, StdioChannel
from kairox.mcp._protocol_cache import known_legacy, remember_legacy, server_key
from kairox.mcp._session import (
    CONNECTION_CLOSED,
    INVALID_REQUEST,
    MODERN_VERSIONS,
    InvalidResult,
    McpSession,
    SessionError,
)
from kairox.mcp._stdio import ChildStdioTransport
from kairox.mcp._tool_cache import CachedLists, ToolListCache
from kairox.mcp._transports import (
    STDIN_GRACE_SEC,
    STOP_TIMEOUT_SEC,
    StartError,
    describe_failure,
    expand,
    open_remote,
    open_stdio,
)
from kairox.tools import ProgressCallback, ServerConfinement, ToolResult, refusal_hint, sandbox_refusal

if TYPE_CHECKING:
    # The SDK (over half a second of imports, most of it its protocol types) loads only for a remote server or
    # one of the 2026 era, after that server's process was spawned, so the server boots while Python imports.
    import httpx2
    from mcp.client import Transport

    from kairox.mcp._sdk import SdkSession

_STDERR_TAIL_CHARS = 4_000
_BACKOFF_BASE_SEC = 0.25
_BACKOFF_MAX_SEC = 8.0
_STABLE_AFTER_SEC = 60.0
_VIOLATIONS_REPORTED = 20

ToolsListener = Callable[[tuple[McpTool, ...]], Awaitable[None] | None]


class _SessionExpired(Exception):
    """The HTTP server no longer knows our session (404): re-initialize and retry once."""


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerState:
    """A snapshot of one server for ``kairox mcp status`` and the UIs."""

    name: str
    status: ServerStatus
    transport: str
    tools: int = 0
    error: str | None = None
    stderr_tail: str = ""
    protocol_version: str | None = None
    pid: int | None = None
    confinement: dict[str, Any] | None = None
    """How a stdio server runs: ``confined``, ``sandbox``, ``network``, ``writable_roots``, ``state_dir`` and
    ``reason`` (why it runs unconfined); None for a remote server."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": str(self.status),
            "transport": self.transport,
            "tools": self.tools,
            "error": self.error,
            "stderr_tail": self.stderr_tail,
            "protocol_version": self.protocol_version,
            "confinement": self.confinement,
        }


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = next((e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())), exc.exceptions[0])
    return exc


def _session_gone(transport: str, exc: SessionError) -> bool:
    """An HTTP 404 on our session: the SDK's transport reports it as INVALID_REQUEST, with the server's body when
    it sent one ("Session not found") or its own stand-in ("Session terminated")."""
    return transport == "streamable_http" and exc.code == INVALID_REQUEST and "session" in exc.message.lower()


_starting: "weakref.WeakSet[McpClient]" = weakref.WeakSet()
"""Clients whose start-up clock runs: the SDK import stops that clock for all of them."""


def _load_sdk() -> None:
    """Import the SDK once (the first connection calls this after spawning its server, which boots meanwhile)
    and move what the import built out of the collector's reach: its protocol types are hundreds of thousands
    of objects that live as long as the process, and walking them made every full collection, the one at
    interpreter exit included (about 0.3 s), pay for them again.

    The import holds the event loop (about a second on a busy machine): every start under way gets that time
    back, so ``startup_timeout_sec`` measures the servers, not Kairox's one import."""
    if "mcp.client.client" in sys.modules and gc.get_freeze_count():
        return
    began = time.monotonic()
    import mcp_types  # noqa: F401

    from mcp import Client  # noqa: F401

    gc.freeze()
    took = time.monotonic() - began
    for client in list(_starting):
        client._postpone_start(took)


def _broken_connection() -> tuple[type[Exception], ...]:
    """The errors of a connection that broke under a call: the HTTP stack's too when a remote server loaded it."""
    errors: tuple[type[Exception], ...] = (anyio.BrokenResourceError, anyio.ClosedResourceError)
    httpx = sys.modules.get("httpx2")
    return (*errors, httpx.TransportError) if httpx is not None else errors


def _exited_on_its_own(transport: StdioChannel | None, code: int | None) -> bool:
    """Whether the stdio server ended by itself: its output ended, or a message found its input closed and it
    exited other than by the stop's signals (a server that crashes at once can close its input before the end of
    its output is read)."""
    if transport is None:
        return False
    if transport.eof:
        return True
    return transport.input_closed and code is not None and code not in (-signal.SIGTERM, -signal.SIGKILL)


def _exit_detail(code: int | None) -> str:
    if code is None:
        return "closed its output"
    if code < 0:
        return f"was killed by signal {-code}"
    if code > 128:
        return f"was killed by signal {code - 128}"
    return f"exited with code {code}"


class McpClient:
    """One configured MCP server. ``async with McpClient(...)`` starts it and waits until it is Ready or Failed.

    The manager runs many of them in one task group through :meth:`run` instead.
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        workspace: Path,
        home: Path | None = None,
        events: EventSink | None = None,
        features: ClientFeatures | None = None,
        environ: Mapping[str, str] | None = None,
        base_dir: Path | None = None,
        confinement: ServerConfinement | None = None,
    ) -> None:
        if config.transport == "stdio":
            start_host_guard()  # it boots while the rest of the start runs, so the server's spawn does not wait
        self.name = name
        self.config = config
        self.workspace = workspace
        self.home = home or Path(os.environ.get("KAIROX_HOME") or Path.home() / ".kairox")
        self.events: EventSink = events or NullSink()
        self.features = features or ClientFeatures(roots=(workspace,))
        self.environ = dict(os.environ if environ is None else environ)
        self.base_dir = base_dir or workspace
        self.confinement = confinement
        """The sandbox profile it starts under (None: unconfined, as a client built without one)."""
        self.confinement_state: dict[str, Any] | None = None
        if config.transport == "stdio":
            self.confinement_state = (
                confinement.describe()
                if confinement is not None
                else {"confined": False, "sandbox": "none", "reason": "not managed"}
            )
        self.confinement_warning: str | None = None
        """Set when it runs unconfined only because no sandbox exists here (``doctor`` warns)."""
        self.lifecycle = ServerLifecycle(name, config.transport, self.events)
        self.tools: tuple[McpTool, ...] = ()
        self.resources: tuple[McpResource, ...] = ()
        self.prompts: tuple[str, ...] = ()
        self.instructions: str | None = None
        self.log_path = self.home / "logs" / "mcp" / f"{server_file_stem(name)}.log"
        self._listeners: list[ToolsListener] = []
        self._session: McpSession | None = None
        self._child: ChildProcess | None = None
        self._transport: StdioChannel | None = None
        self._connection_closed: anyio.Event | asyncio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._lost = anyio.Event()
        self._relist = anyio.Event()
        self._expired = False
        self._mode: str = config.protocol_mode
        self._cache_key = server_key(name, config)
        self._legacy_checked = False
        """Whether an earlier run's record of this server (``known_legacy``) was read: at its first start, not
        here (a lazy server that is never called never needs it)."""
        self._prior_discover: dict[str, Any] | None = None
        self._stderr_tail = ""
        self._task_group: anyio.abc.TaskGroup | None = None
        self.cache = ToolListCache(self.home) if config.cache_tools else None
        cached = self.cache.load(name, config) if self.cache is not None else None
        self.from_cache = cached is not None
        """The lists came from the cache and no start of this session has confirmed them yet."""
        if cached is not None:
            self.tools, self.resources, self.prompts = cached.tools, cached.resources, cached.prompts
        self.lazy_start: Callable[[], Awaitable[object]] | None = None
        """Set by the manager for a ``startup = "lazy"`` server that has not started: the first call starts it."""
        self._lazy_lock = anyio.Lock()

    # --- public state -------------------------------------------------------------------------------------

    @property
    def status(self) -> ServerStatus:
        return self.lifecycle.status

    @property
    def session_kind(self) -> str | None:
        """``kairox`` when Kairox's own session serves the live connection (a handshake-era server), ``sdk``
        when the SDK's ``Client`` does (a 2026-era server); None while there is no connection."""
        session = self._session
        if session is None:
            return None
        return "kairox" if isinstance(session, NativeSession) else "sdk"

    @property
    def pid(self) -> int | None:
        """The process (group leader) of a stdio server while it runs."""
        child = self._child
        return child.pid if child is not None and child.returncode is None else None

    @property
    def stderr_tail(self) -> str:
        child = self._child
        if child is not None:
            return child.stderr.text(_STDERR_TAIL_CHARS)
        return self._stderr_tail

    def state(self) -> McpServerState:
        return McpServerState(
            name=self.name,
            status=self.status,
            transport=self.config.transport,
            tools=self.offered_count(),
            error=self.lifecycle.reason,
            stderr_tail=self.stderr_tail,
            protocol_version=self.lifecycle.protocol_version,
            pid=self.pid,
            confinement=self.confinement_state,
        )

    def offered_count(self) -> int:
        """How many of the server's tools pass ``enabled_tools`` / ``disabled_tools``, have a usable schema and fit
        under ``max_tools`` (what the model sees)."""
        config = self.config
        usable = sum(
            1
            for tool in self.tools
            if tool.problem is None and is_offered(tool, config.enabled_tools, config.disabled_tools)
        )
        return min(usable, config.max_tools)

    def on_tools_changed(self, listener: ToolsListener) -> None:
        """Called with the server's whole tool list after every (re-)listing."""
        self._listeners.append(listener)

    # --- lifetime -----------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self.run)
        await self.lifecycle.settled.wait()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._task_group is not None
        self.stop()
        # exit in the entering task: anyio cancel scopes belong to one task
        await self._task_group.__aexit__(exc_type, exc, tb)

    def stop(self) -> None:
        """Ask the supervisor to close the session and stop the server; ``run`` returns when it has."""
        self._stop.set()
        if self._scope is not None:
            self._scope.cancel()

    async def run(self) -> None:
        """The supervisor: start, serve, restart after crashes, stop. Returns when stopped or given up."""
        restarts = 0
        legacy_retry = False
        raced = False
        attempt = 0
        # one clock for a start, from the first spawn: a protocol probe that makes the server exit and the
        # classic handshake tried after it share ``startup_timeout_sec``
        if not self._legacy_checked:
            self._legacy_checked = True
            if self._mode == "auto" and known_legacy(self.home, self._cache_key):
                self._mode = "legacy"  # it exited on the probe in an earlier run
        try:
            while not self._stop.is_set():
                if not legacy_retry or attempt != 1:
                    self._start_deadline = anyio.current_time() + self.config.startup_timeout_sec
                reason, was_ready, exited = await self._serve_once(attempt)
                attempt += 1
                if legacy_retry and was_ready and attempt == 2:
                    remember_legacy(self.home, self._cache_key)
                if self._stop.is_set():
                    break
                assert reason is not None
                if not was_ready and self._sandbox_raced and not raced:
                    # bwrap stopped before the server ran: a path it was to cover went away after the masks were
                    # worked out. Nothing ran, so it starts once more with masks worked out afresh
                    raced = True
                    self.lifecycle.failed(
                        f"{reason}; started again with the sandbox's masks worked out afresh",
                        self._stderr_tail,
                        will_restart=True,
                    )
                    continue
                if not was_ready and self.lifecycle.ready_count == 0:
                    if exited and self._mode == "auto" and not legacy_retry:
                        # some servers exit on the 2026 discovery probe; try the classic handshake once
                        legacy_retry = True
                        self._mode = "legacy"
                        continue
                    if self.from_cache:  # the cached tools were listed: they go with the server that failed
                        self.tools, self.resources = (), ()
                        await self._notify_listeners()
                    self.lifecycle.failed(reason, self._stderr_tail)
                    return
                if self._expired:
                    self._expired = False
                    self.lifecycle.failed(reason, self._stderr_tail, will_restart=True)
                    continue
                if self._uptime >= _STABLE_AFTER_SEC:
                    restarts = 0  # a crash after a long healthy run starts the backoff afresh
                if restarts >= self.config.max_restarts:
                    # the server is gone for good: its tools leave the registry with it
                    self.tools, self.resources = (), ()
                    await self._notify_listeners()
                    self.lifecycle.failed(
                        f"{reason}; not restarted again after {restarts} restart(s) (max_restarts)", self._stderr_tail
                    )
                    return
                delay = min(_BACKOFF_BASE_SEC * 2**restarts, _BACKOFF_MAX_SEC)
                restarts += 1
                self.lifecycle.failed(reason, self._stderr_tail, will_restart=True)
                self.events.emit(McpServerRestarting(server=self.name, attempt=restarts, delay_sec=delay))
                with anyio.move_on_after(delay):
                    await self._stop.wait()
        except Exception as exc:
            # a bug here must not take the other servers' task group down with it
            self.lifecycle.failed(f"internal error in the supervisor: {type(exc).__name__}: {exc}", self._stderr_tail)
        finally:
            if self.lifecycle.status != ServerStatus.FAILED:
                self.lifecycle.stopped()
            self._done.set()

    def _postpone_start(self, seconds: float) -> None:
        self._start_deadline += seconds
        if self._scope is not None and self._scope.deadline != math.inf:
            self._scope.deadline += seconds

    async def _serve_once(self, attempt: int) -> tuple[str | None, bool, bool]:
        """One connection from start to loss. Returns (failure reason, reached Ready, the process exited)."""
        self.lifecycle.starting(attempt)
        self._lost = anyio.Event()
        self._relist = anyio.Event()
        reason: str | None = None
        closed = False
        was_ready = False
        exited = False
        timeout = self.config.startup_timeout_sec
        ready_at: float | None = None
        with anyio.CancelScope() as scope:
            self._scope = scope
            if self._stop.is_set():
                scope.cancel()
            scope.deadline = self._start_deadline
            _starting.add(self)
            try:
                async with AsyncExitStack() as stack:
                    session = await self._connect(stack)
                    async with anyio.create_task_group() as tg:
                        if getattr(session, "needs_listen", False):
                            # subscribe before listing, so no change between the two is missed
                            await tg.start(self._listen_loop, session)
                        await self._list_everything(session)
                        self._save_lists(session)
                        tg.start_soon(self._relist_loop, session)
                        scope.deadline = math.inf
                        _starting.discard(self)
                        ready_at = anyio.current_time()
                        self._session = session
                        was_ready = True
                        if self._child is not None:  # a Ready server gets a clean exit
                            self._child.stop_timeout, self._child.stdin_grace = STOP_TIMEOUT_SEC, STDIN_GRACE_SEC
                        self.lifecycle.ready(self.offered_count(), session.protocol_version)
                        await self._notify_listeners()
                        if self._connection_closed is not None:
                            tg.start_soon(self._watch_connection, self._connection_closed)
                        await self._lost.wait()
                        tg.cancel_scope.cancel()
            except Exception as exc:
                cause = _unwrap(exc)
                reason = describe_failure(cause, self.config.url)
                # the connection ended under the handshake (ours or the SDK's error says so by its code, not its text)
                sdk_errors = sys.modules.get("mcp.shared.exceptions")
                code = cause.code if isinstance(cause, SessionError) else None
                if sdk_errors is not None and isinstance(cause, sdk_errors.MCPError):
                    code = cause.error.code
                closed = code == CONNECTION_CLOSED
                variable = getattr(cause, "variable", None) if isinstance(cause, StartError) else None
                self.lifecycle.cause = FailureCause.UNSET_VARIABLE if variable else FailureCause.OTHER
                self.lifecycle.cause_variable = variable
            finally:
                _starting.discard(self)
                self._session = None
                self._scope = None
                self._uptime = 0.0 if ready_at is None else anyio.current_time() - ready_at
                self._after_connection()
        child_code = self._last_exit_code
        exited = self._exited_by_itself
        if self._stop.is_set():
            return None, was_ready, exited
        if scope.cancelled_caught and not was_ready:
            reason = f"did not finish the MCP handshake within {timeout:g}s (startup_timeout_sec)"
            self.lifecycle.cause, self.lifecycle.cause_variable = FailureCause.STARTUP_TIMEOUT, None
        elif was_ready and reason is None:
            reason = "the session expired (HTTP 404)" if self._expired else f"the server {_exit_detail(child_code)}"
        elif not was_ready and exited and (reason is None or closed):
            reason = f"the server {_exit_detail(child_code)} before finishing the MCP handshake"
        if not was_ready and self._transport_invalid:
            reason = f"{reason}; its stdout is not JSON-RPC, e.g. {self._transport_invalid[0]!r}"
        refusal = sandbox_refusal(self._stderr_tail) if not was_ready and self.confinement_state is not None else None
        if refusal is not None and not self._sandbox_raced:
            # bwrap itself refused (its message names the path): said first, not hidden in the stderr tail
            reason = f"the sandbox could not start it: {refusal}"
        if not was_ready and self.confinement_state is not None:
            # a server that needs what its profile refuses says so on stderr: name the setting that allows it
            refused = refusal_hint(self._stderr_tail, self.confinement_state, f"mcp_servers.{self.name}")
            if refused is not None:
                reason = f"{reason or 'it failed'}; {refused}"
        return reason or "unknown failure", was_ready, exited

    _last_exit_code: int | None = None
    _start_deadline = 0.0
    _uptime = 0.0
    _violations = 0
    _exited_by_itself = False
    _sandbox_raced = False
    """The last start stopped in bwrap, before the server ran, on a path that went away (``vanished_before_start``)."""
    _transport_invalid: tuple[str, ...] = ()

    def _after_connection(self) -> None:
        child = self._child
        self._sandbox_raced = False
        if child is not None:
            self._stderr_tail = child.stderr.text(_STDERR_TAIL_CHARS)
            self._last_exit_code = child.returncode
            if child.argv and os.path.basename(child.argv[0]) == "bwrap":
                from kairox.tools._sandbox import vanished_before_start  # loaded only for a confined server

                self._sandbox_raced = vanished_before_start(
                    child.argv, child.returncode, b"", self._stderr_tail.strip().encode()
                )
        else:
            self._last_exit_code = None
        self._transport_invalid = tuple(self._transport.invalid_lines) if self._transport is not None else ()
        self._exited_by_itself = _exited_on_its_own(self._transport, self._last_exit_code)
        self._child = None
        self._transport = None
        self._connection_closed = None

    async def _watch_connection(self, closed: anyio.Event | asyncio.Event) -> None:
        await closed.wait()
        self._lost.set()

    # --- connecting ---------------------------------------------------------------------------------------

    async def _connect(self, stack: AsyncExitStack) -> McpSession:
        callbacks = ClientCallbacks(self.name, self.features, self.events)
        if self.config.transport == "stdio":
            self._child, started = await open_stdio(
                stack,
                self.config,
                environ=self.environ,
                workspace=self.workspace,
                base_dir=self.base_dir,
                log_path=self.log_path,
                confinement=self.confinement,
            )
            self.confinement_state, self.confinement_warning = started.confinement, started.warning
        if self._mode in MODERN_VERSIONS:  # a 2026-era server, known from an earlier connection
            return await self._sdk_session(stack, callbacks, self._mode, self._prior_discover)
        inner = await stack.enter_async_context(AsyncExitStack())
        channel: StdioChannel | SdkStreamChannel
        if self._child is not None:
            channel = self._transport = StdioChannel(self._child, on_invalid_line=self._invalid_line)
        else:
            read, write = await inner.enter_async_context(await self._remote(inner))
            channel = SdkStreamChannel(read, write, on_problem=self._violation)
        session = NativeSession(
            channel,
            server=self.name,
            callbacks=callbacks,
            client_info={"name": "kairox", "version": __version__},
            on_tools_changed=self._relist_soon,
            on_violation=self._violation,
        )
        await inner.enter_async_context(session)
        probed = self._mode == "auto"
        modern = await session.open(self._mode)
        if modern is None:
            self._mode = "legacy"  # remembered per server: a restart skips the probe
            if probed:  # and across runs: the next session sends `initialize` first
                remember_legacy(self.home, self._cache_key)
            self.instructions = session.instructions
            self._connection_closed = session.closed
            return session
        # a 2026-era server: the SDK takes the connection over (a stdio server keeps running, HTTP reconnects)
        await inner.aclose()
        shared = [v for v in MODERN_VERSIONS if v in modern.get("supportedVersions", ())]
        if "capabilities" in modern and shared:
            return await self._sdk_session(stack, callbacks, shared[-1], modern)
        return await self._sdk_session(stack, callbacks, "auto", None)  # it named its versions in an error

    async def _sdk_session(
        self, stack: AsyncExitStack, callbacks: ClientCallbacks, mode: str, discover: dict[str, Any] | None
    ) -> "SdkSession":
        _load_sdk()
        from kairox.mcp._sdk import SdkSession, sdk_client

        transport: Transport
        if self._child is not None:
            if self._transport is None:
                self._transport = StdioChannel(self._child, on_invalid_line=self._invalid_line)
            stdio = ChildStdioTransport(self._transport)
            self._connection_closed, transport = stdio.closed, stdio
        else:
            transport = await self._remote(stack)
        client = sdk_client(
            transport,
            mode=mode,
            prior_discover=discover,
            callbacks=callbacks,
            on_tools_changed=self._relist_soon,
            on_violation=self._violation,
        )
        await stack.enter_async_context(client)
        session = SdkSession(client, server=self.name)
        if session.discover_result is not None:
            # remember the era per server: a restart adopts it without probing again
            self._mode = session.protocol_version
            self._prior_discover = session.discover_result.model_dump(by_alias=True, mode="json", exclude_none=True)
        elif self._mode == "auto":
            self._mode = "legacy"
        self.instructions = session.instructions
        return session

    def _relist_soon(self) -> None:
        self._relist.set()

    def _violation(self, detail: str) -> None:
        self.events.emit(McpProtocolViolation(server=self.name, detail=detail))

    async def _remote(self, stack: AsyncExitStack) -> "Transport":
        _load_sdk()  # the HTTP transports are the SDK's own
        from kairox.mcp._oauth import token_path

        # a server logged in with `kairox mcp login` uses its tokens even without oauth = true
        use_oauth = self.config.oauth or token_path(self.home, self.name).exists()
        auth = self._oauth_provider() if use_oauth else None
        return await open_remote(stack, self.config, environ=self.environ, auth=auth)

    def _oauth_provider(self) -> "httpx2.Auth":
        from kairox.mcp._oauth import oauth_provider

        assert self.config.url is not None
        url = expand(self.config.url, "url", self.environ)
        return oauth_provider(self.name, url, home=self.home, login=self.features.oauth_login)

    # --- listing ------------------------------------------------------------------------------------------

    async def _list_everything(self, session: McpSession) -> None:
        offers = session.offers
        self.tools = await session.list_tools() if offers.tools else ()
        resources: list[McpResource] = []
        if offers.resources:
            with contextlib.suppress(SessionError, InvalidResult):
                resources.extend(await session.list_resources())
        self.resources = tuple(resources)
        if offers.prompts:
            with contextlib.suppress(SessionError, InvalidResult):
                self.prompts = await session.list_prompts()

    async def _relist_loop(self, session: McpSession) -> None:
        while True:
            await self._relist.wait()
            # a burst of list_changed collapses into the re-listings that run while it arrives
            self._relist = anyio.Event()
            try:
                self.tools = await session.list_tools()
            except Exception as exc:
                self.events.emit(McpProtocolViolation(server=self.name, detail=f"re-listing tools failed: {exc}"))
                continue
            self.lifecycle.tools = self.offered_count()
            self._save_lists(session)
            self.events.emit(McpToolsChanged(server=self.name, tools=tuple(tool.name for tool in self.tools)))
            await self._notify_listeners()

    async def _listen_loop(
        self, session: "SdkSession", *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """2026-era servers announce tool changes only on a ``subscriptions/listen`` stream."""
        try:
            await session.listen(self._relist_soon, task_status=task_status)
        except Exception as exc:
            if not self._lost.is_set():
                self.events.emit(
                    McpProtocolViolation(server=self.name, detail=f"tool change subscription ended: {exc}")
                )
            with contextlib.suppress(RuntimeError):
                task_status.started()

    async def _notify_listeners(self) -> None:
        for listener in list(self._listeners):
            outcome = listener(self.tools)
            if outcome is not None:
                await outcome

    async def refresh_tools(self) -> tuple[McpTool, ...]:
        """Re-list the tools now (all pages) and tell the listeners."""
        session = await self._ready_session()
        if session is not None:
            self.tools = await session.list_tools()
            self._save_lists(session)
            await self._notify_listeners()
        return self.tools

    def _save_lists(self, session: McpSession) -> None:
        """The lists as the server gave them now: the cache entry for the next session."""
        self.from_cache = False
        if self.cache is not None:
            info = getattr(session, "server_info", None)
            lists = CachedLists(
                tools=self.tools,
                resources=self.resources,
                prompts=self.prompts,
                server_info=info if isinstance(info, dict) else None,
            )
            self.cache.save(self.name, self.config, lists)

    # --- what the server sends us -------------------------------------------------------------------------

    def _invalid_line(self, line: str) -> None:
        # a server that prints without end must not flood the event stream: report the first lines only
        self._violations += 1
        if self._violations <= _VIOLATIONS_REPORTED:
            self.events.emit(
                McpProtocolViolation(server=self.name, detail=f"stdout line is not JSON-RPC: {line[:200]!r}")
            )
        elif self._violations == _VIOLATIONS_REPORTED + 1:
            self.events.emit(
                McpProtocolViolation(server=self.name, detail="more stdout lines are not JSON-RPC; no longer reported")
            )

    # --- calls --------------------------------------------------------------------------------------------

    async def _ready_session(self) -> McpSession | None:
        """The live session; waits while the server is starting or restarting, None once it gave up."""
        lifecycle = self.lifecycle
        if self._session is not None and lifecycle.status == ServerStatus.READY and not self._lost.is_set():
            return self._session
        if self.lazy_start is not None:
            async with self._lazy_lock:  # concurrent first calls start the server once
                if self.lazy_start is not None:
                    await self.lazy_start()

        def settled(status: ServerStatus) -> bool:
            if status == ServerStatus.READY:
                return not self._lost.is_set()
            if status == ServerStatus.STOPPED and self.from_cache and not self._done.is_set():
                return False  # listed from the cache, its start scheduled: wait for it
            return status in (ServerStatus.STOPPED, ServerStatus.DISABLED, ServerStatus.PENDING_TRUST) or (
                status == ServerStatus.FAILED and not lifecycle.restarting
            )

        with anyio.move_on_after(self.config.startup_timeout_sec + _BACKOFF_MAX_SEC):
            await lifecycle.wait_for(settled)
        return self._session if settled(lifecycle.status) and lifecycle.status == ServerStatus.READY else None

    def _unavailable(self, tool: str) -> ToolResult:
        why = self.lifecycle.reason or str(self.status)
        if self.status == ServerStatus.PENDING_TRUST:  # the reason names the status in words and what to run
            return ToolResult.error(f"MCP server {self.name!r} is {why}; {tool!r} was not called")
        return ToolResult.error(
            f"MCP server {self.name!r} is {self.status} ({why}); {tool!r} was not called. "
            "`kairox mcp status` shows its stderr"
        )

    async def call_tool(
        self,
        tool: str,
        arguments: JsonObject | None = None,
        *,
        call_id: str = "",
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> ToolResult:
        """Call one of the server's tools by its own name. Every failure is a tool error result.

        ``timeout`` (default ``tool_timeout_sec``) is an idle timeout: each progress notification restarts it.
        When it runs out, or the calling task is cancelled, the server is sent ``notifications/cancelled``.
        """
        idle = timeout or self.config.tool_timeout_sec
        for attempt in range(2):
            session = await self._ready_session()
            if session is None:
                return self._unavailable(tool)
            try:
                return await self._call_once(session, tool, dict(arguments or {}), call_id, progress, idle)
            except _SessionExpired:
                if attempt == 1:
                    break
                self._expired = True
                self._lost.set()
                with anyio.move_on_after(self.config.startup_timeout_sec):
                    await self.lifecycle.wait_for(lambda status: status != ServerStatus.READY)
        return ToolResult.error(f"MCP server {self.name!r} lost the session twice during {tool!r}; try again later")

    async def _call_once(
        self,
        session: McpSession,
        tool: str,
        arguments: JsonObject,
        call_id: str,
        progress: ProgressCallback | None,
        idle: float,
    ) -> ToolResult:
        result: ToolResult | None = None
        loop = asyncio.get_running_loop()
        report = progress
        # an asyncio timer, not an anyio cancel scope: the same deadline for a fraction of the cost per call
        timer = asyncio.timeout(idle)

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            timer.reschedule(loop.time() + idle)
            self.events.emit(
                McpToolProgress(
                    server=self.name, tool=tool, call_id=call_id, progress=progress, total=total, message=message
                )
            )
            if report is not None:
                outcome = report(progress, total, message)
                if outcome is not None:
                    await outcome

        try:
            async with timer:
                result = await session.call_tool(tool, arguments, on_progress)
        except SessionError as exc:
            result = await self._call_error(tool, exc)
        except InvalidResult as exc:
            if self._session is not session:  # the session closed under the call
                result = await self._call_error(tool, SessionError(CONNECTION_CLOSED, str(exc)))
            else:
                result = ToolResult.error(f"{tool} on MCP server {self.name!r} returned an invalid result: {exc}")
        except _broken_connection() as exc:
            result = ToolResult.error(f"{tool} on MCP server {self.name!r} failed: the connection broke ({exc})")
        except TimeoutError:
            if not timer.expired():
                raise
        if result is None:
            return ToolResult.error(
                f"{tool} on MCP server {self.name!r} timed out after {idle:g}s without a result or progress "
                f"(tool_timeout_sec); the server was told to cancel it"
            )
        return result

    async def _call_error(self, tool: str, exc: SessionError) -> ToolResult:
        if exc.code == CONNECTION_CLOSED:
            self._lost.set()
            child = self._child
            detail = "the connection closed"
            if child is not None:
                detail = f"the server {_exit_detail(await child.wait(1.0))}"
            return ToolResult.error(
                f"MCP server {self.name!r} went away during the call to {tool!r} ({detail}); "
                "Kairox restarts it, so the call can be tried again"
            )
        if _session_gone(self.config.transport, exc):
            raise _SessionExpired from exc
        return ToolResult.error(f"{tool} on MCP server {self.name!r} failed: {exc.message} (JSON-RPC error {exc.code})")

    # --- resources ----------------------------------------------------------------------------------------

    async def read_resource(self, uri: str) -> ToolResult:
        session = await self._ready_session()
        if session is None:
            return self._unavailable("resources/read")
        try:
            return await session.read_resource(uri)
        except SessionError as exc:
            return ToolResult.error(f"reading {uri} from MCP server {self.name!r} failed: {exc.message}")
        except InvalidResult as exc:
            return ToolResult.error(f"reading {uri} from MCP server {self.name!r} failed: {exc}")
