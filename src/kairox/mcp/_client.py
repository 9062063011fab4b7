"""``McpClient``: one configured MCP server, supervised as language servers and debug adapters are (M2, M6, M7, M8).

Its supervisor task (``kairox._rpc._supervisor.ServerLifecycle``) opens an :class:`McpConnection` (the transport,
the session, the handshake), lists what the server offers, is Ready, and closes everything in the same task. A
server that goes away after it was Ready is started again with exponential backoff, up to ``max_restarts``. Calls
come from any task; they use the session of the live connection.
"""

import asyncio
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from kairox._rpc._replies import INVALID_REQUEST
from kairox._rpc._status import ServerStatus
from kairox._rpc._supervisor import Ready, ServerLifecycle, until_first
from kairox._util._json import JsonObject
from kairox.config import McpServerConfig
from kairox.events import Event, EventSink
from kairox.mcp._connection import FailureCause, McpConnection, StartError, describe_failure, exit_detail
from kairox.mcp._content import McpResource, McpTool, is_offered
from kairox.mcp._events import (
    McpProtocolViolation,
    McpServerFailed,
    McpServerReady,
    McpServerRestarting,
    McpServerStarting,
    McpServerStopped,
    McpToolProgress,
    McpToolsChanged,
)
from kairox.mcp._features import ClientFeatures
from kairox.mcp._files import server_file_stem
from kairox.mcp._protocol_cache import known_legacy, remember_legacy, server_key
from kairox.mcp._session import CONNECTION_CLOSED, InvalidResult, McpSession, SessionError
from kairox.mcp._tool_cache import CachedLists, ToolListCache
from kairox.sandbox import ServerConfinement, refusal_hint, sandbox_refusal
from kairox.tools import ProgressCallback, ToolResult

_BACKOFF_BASE_SEC = 0.25
_BACKOFF_MAX_SEC = 8.0
_STABLE_AFTER_SEC = 60.0
_VIOLATIONS_REPORTED = 20
_LOST = "the connection ended"

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


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = next((e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())), exc.exceptions[0])
    return exc


def _broken_connection() -> tuple[type[Exception], ...]:
    """The errors of a connection that broke under a call: the HTTP stack's too when a remote server loaded it."""
    errors: tuple[type[Exception], ...] = (anyio.BrokenResourceError, anyio.ClosedResourceError)
    httpx = sys.modules.get("httpx2")
    return (*errors, httpx.TransportError) if httpx is not None else errors


class McpClient(ServerLifecycle[McpConnection]):
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
        super().__init__(events=events, stop_wait=config.startup_timeout_sec + _BACKOFF_MAX_SEC)
        self.name = name
        self.config = config
        self.startup_timeout = config.startup_timeout_sec
        self.workspace = workspace
        self.home = home or Path(os.environ.get("KAIROX_HOME") or Path.home() / ".kairox")
        self.features = features or ClientFeatures(roots=(workspace,))
        self.environ = dict(os.environ if environ is None else environ)
        self.signs_in = False
        """Whether it connects with a person's OAuth login (``oauth``, or tokens ``kairox mcp login`` left)."""
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
        self.protocol_version: str | None = None
        self.cause: FailureCause | None = None
        """Why the last start failed (None while it has not)."""
        self.cause_variable: str | None = None
        self.attempt = 0
        """0 for the first start of a run, then 1, 2 ... for the starts after it."""
        self.ready_count = 0
        """How many times the server reached Ready (restarts included)."""
        self.tools: tuple[McpTool, ...] = ()
        self.resources: tuple[McpResource, ...] = ()
        self.prompts: tuple[str, ...] = ()
        self.skills: tuple[dict[str, Any], ...] = ()  # skills/list entries (the skills extension)
        self.instructions: str | None = None
        self.log_path = self.home / "logs" / "mcp" / f"{server_file_stem(name)}.log"
        self.mode: str = config.protocol_mode
        """``auto`` (probe the 2026 era first) or ``legacy``: what the next start of a stdio server sends first."""
        self.cache_key = server_key(name, config)
        self._legacy_checked = False
        """Whether an earlier run's record of this server (``known_legacy``) was read: at its first start, not here
        (a lazy server that is never called never needs it)."""
        self._legacy_retry = False
        self._listeners: list[ToolsListener] = []
        self._session: McpSession | None = None
        self._lost = anyio.Event()
        self._relist = anyio.Event()
        self._expired = False
        self._restarts = 0
        self._uptime = 0.0
        self._violations = 0
        self._stderr = ""
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
    def lifecycle(self) -> Self:
        """The client itself: it is the server's lifecycle (the name the peer bench harness,
        ``../shared/bench-peers``, reads ``reason`` and ``protocol_version`` through)."""
        return self

    @property
    def session_kind(self) -> str | None:
        """``kairox`` when Kairox's own session serves the live connection (a stdio server), ``sdk`` when the SDK's
        ``Client`` does (a remote server); None while there is no connection."""
        if self._session is None:
            return None
        return "kairox" if self.config.transport == "stdio" else "sdk"

    @property
    def pid(self) -> int | None:
        """The process (group leader) of a stdio server while it runs."""
        return self.client.pid if self.client is not None else None

    @property
    def stderr_tail(self) -> str:
        return self.client.stderr_tail if self.client is not None else self._stderr

    @stderr_tail.setter
    def stderr_tail(self, text: str) -> None:
        self._stderr = text

    @property
    def start_pending(self) -> bool:
        """Listed from the cache, its start scheduled (lazy, or in the background) and not begun or ended yet."""
        return self.from_cache and self.status is ServerStatus.STOPPED and not (self._done and self._done.is_set())

    def state(self) -> McpServerState:
        return McpServerState(
            name=self.name,
            status=self.status,
            transport=self.config.transport,
            tools=self.offered_count(),
            error=self.reason,
            stderr_tail=self.stderr_tail,
            protocol_version=self.protocol_version,
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
        self._prepare()
        self._task_group.start_soon(self.run)
        await self.settled.wait()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._task_group is not None
        self.request_stop()
        # exit in the entering task: anyio cancel scopes belong to one task
        await self._task_group.__aexit__(exc_type, exc, tb)

    async def run(self) -> None:
        self.attempt, self._restarts, self._legacy_retry = -1, 0, False
        if not self._legacy_checked:
            self._legacy_checked = True
            if self.mode == "auto" and known_legacy(self.home, self.cache_key):
                self.mode = "legacy"  # it exited on the probe in an earlier run
        await super().run()

    # --- the supervisor's parts ---------------------------------------------------------------------------

    def _new_client(self) -> McpConnection:
        return McpConnection(self)

    async def _serve(self, client: McpConnection, ready: Ready) -> str | None:
        session = client.session
        assert session is not None
        self._lost, self._relist = anyio.Event(), anyio.Event()
        try:
            async with anyio.create_task_group() as group:
                if session.needs_listen:  # subscribe before listing, so no change between the two is missed
                    await group.start(self._listen_loop, session)
                await self._list_everything(session)
                self._save_lists(session)
                group.start_soon(self._relist_loop, session)
                self._session, self.protocol_version, self.instructions = (
                    session,
                    session.protocol_version,
                    session.instructions,
                )
                began = anyio.current_time()
                client.serving()
                self.ready_count += 1
                if self._legacy_retry:  # it exited on the probe and served the classic handshake: remembered
                    remember_legacy(self.home, self.cache_key)
                ready()
                await self._notify_listeners()
                if client.closed is not None:
                    group.start_soon(self._watch, client.closed)
                await until_first(self._lost.wait, self._stop_requested.wait)
                self._uptime = anyio.current_time() - began
                group.cancel_scope.cancel()
        finally:
            self._session = None
        return _LOST

    async def _watch(self, closed: asyncio.Event) -> None:
        await closed.wait()
        self._lost.set()

    def _failure(self, client: McpConnection, exc: Exception) -> str:
        cause = _unwrap(exc)
        variable = cause.variable if isinstance(cause, StartError) else None
        self.cause, self.cause_variable = FailureCause.UNSET_VARIABLE if variable else FailureCause.OTHER, variable
        # the connection ended under the handshake (ours or the SDK's error says so by its code, not its text)
        code = cause.code if isinstance(cause, SessionError) else None
        sdk_errors = sys.modules.get("mcp.shared.exceptions")
        if sdk_errors is not None and isinstance(cause, sdk_errors.MCPError):
            code = cause.error.code
        return _LOST if code == CONNECTION_CLOSED else describe_failure(cause, self.config.url)

    def _timed_out(self) -> str:
        self.cause, self.cause_variable = FailureCause.STARTUP_TIMEOUT, None
        return f"did not finish the MCP handshake within {self.config.startup_timeout_sec:g}s (startup_timeout_sec)"

    def _raced(self, client: McpConnection) -> bool:
        return client.sandbox_raced

    def _ended(self, client: McpConnection, failure: str | None, was_ready: bool) -> str | None:
        """The reason a start or a connection ended, with what the process said of it."""
        self._exited = client.exited_by_itself
        if was_ready and failure == _LOST:
            detail = exit_detail(client.exit_code) if client.child is not None else "closed the connection"
            return "the session expired (HTTP 404)" if self._expired else f"the server {detail}"
        if was_ready:
            return failure
        if self._exited and failure in (None, _LOST):
            failure = f"the server {exit_detail(client.exit_code)} before finishing the MCP handshake"
        failure = "Connection closed" if failure == _LOST else failure or "unknown failure"
        if client.channel is not None and client.channel.invalid_lines:
            failure = f"{failure}; its stdout is not JSON-RPC, e.g. {client.channel.invalid_lines[0]!r}"
        if self.confinement_state is not None:
            tail = client.stderr_tail
            refusal = sandbox_refusal(tail)
            if refusal is not None and not client.sandbox_raced:
                # bwrap itself refused (its message names the path): said first, not hidden in the stderr tail
                failure = f"the sandbox could not start it: {refusal}"
            # a server that needs what its profile refuses says so on stderr: name the setting that allows it
            refused = refusal_hint(tail, self.confinement_state, f"mcp_servers.{self.name}")
            if refused is not None:
                failure = f"{failure}; {refused}"
        return failure

    async def _next_start(self, reason: str, was_ready: bool) -> float | None:
        if not was_ready and self.ready_count == 0:
            if self._exited and self.mode == "auto" and not self._legacy_retry:
                # some servers exit on the 2026 discovery probe: the classic handshake once, on the same clock
                self._legacy_retry, self.mode, self._keep_clock = True, "legacy", True
                return 0.0
            if self.from_cache:  # the cached tools were listed: they go with the server that failed
                self.tools, self.resources = (), ()
                await self._notify_listeners()
            self._fail(reason)
            return None
        if self._expired:
            self._expired = False
            self._fail(reason, will_restart=True)
            return 0.0
        if self._uptime >= _STABLE_AFTER_SEC:
            self._restarts = 0  # a crash after a long healthy run starts the backoff afresh
        if self._restarts >= self.config.max_restarts:
            # the server is gone for good: its tools leave the registry with it
            self.tools, self.resources = (), ()
            await self._notify_listeners()
            self._fail(f"{reason}; not restarted again after {self._restarts} restart(s) (max_restarts)")
            return None
        delay = min(_BACKOFF_BASE_SEC * 2.0**self._restarts, _BACKOFF_MAX_SEC)
        self._restarts += 1
        self._fail(reason, will_restart=True)
        self.events.emit(McpServerRestarting(server=self.name, attempt=self._restarts, delay_sec=delay))
        return delay

    _exited = False

    def _starting(self) -> Event:
        self.attempt += 1
        self.cause = self.cause_variable = None
        return McpServerStarting(server=self.name, transport=self.config.transport, attempt=self.attempt)

    def _running(self, client: McpConnection) -> Event:
        return McpServerReady(server=self.name, tools=self.offered_count(), protocol_version=self.protocol_version)

    def _failed(self, reason: str) -> Event:
        return McpServerFailed(
            server=self.name, reason=reason, stderr_tail=self.stderr_tail, will_restart=self.restarting
        )

    def _stopped(self) -> Event:
        return McpServerStopped(server=self.name)

    # --- what the server sends us -------------------------------------------------------------------------

    def relist_soon(self) -> None:
        self._relist.set()

    def violation(self, detail: str) -> None:
        self.events.emit(McpProtocolViolation(server=self.name, detail=detail))

    def invalid_line(self, line: str) -> None:
        # a server that prints without end must not flood the event stream: report the first lines only
        self._violations += 1
        if self._violations <= _VIOLATIONS_REPORTED:
            self.violation(f"stdout line is not JSON-RPC: {line[:200]!r}")
        elif self._violations == _VIOLATIONS_REPORTED + 1:
            self.violation("more stdout lines are not JSON-RPC; no longer reported")

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
        if offers.skills:
            with contextlib.suppress(SessionError, InvalidResult):
                self.skills = tuple(await session.list_skills())

    async def _relist_loop(self, session: McpSession) -> None:
        while True:
            await self._relist.wait()
            # a burst of list_changed collapses into the re-listings that run while it arrives
            self._relist = anyio.Event()
            try:
                self.tools = await session.list_tools()
            except Exception as exc:
                self.violation(f"re-listing tools failed: {exc}")
                continue
            self._save_lists(session)
            self.events.emit(McpToolsChanged(server=self.name, tools=tuple(tool.name for tool in self.tools)))
            await self._notify_listeners()

    async def _listen_loop(
        self, session: McpSession, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            await session.listen(task_status=task_status)
        except Exception as exc:
            if not self._lost.is_set():
                self.violation(f"tool change subscription ended: {_unwrap(exc)}")
            with contextlib.suppress(RuntimeError):
                task_status.started()

    async def _notify_listeners(self) -> None:
        for listener in list(self._listeners):
            outcome = listener(self.tools)
            if outcome is not None:
                await outcome

    async def refresh_tools(self) -> tuple[McpTool, ...]:
        """Re-list the tools now (all pages) and tell the listeners."""
        session = await self.ready_session()
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

    # --- calls --------------------------------------------------------------------------------------------

    async def ready_session(self) -> McpSession | None:
        """The live session; waits while the server is starting or restarting, None once it gave up."""
        if self._session is not None and self.status is ServerStatus.READY and not self._lost.is_set():
            return self._session
        if self.lazy_start is not None:
            async with self._lazy_lock:  # concurrent first calls start the server once
                if self.lazy_start is not None:
                    await self.lazy_start()

        def settled(status: ServerStatus) -> bool:
            if status is ServerStatus.READY:
                return not self._lost.is_set()
            if self.start_pending:
                return False  # listed from the cache, its start scheduled: wait for it
            return status is not ServerStatus.STARTING and not (status is ServerStatus.FAILED and self.restarting)

        with anyio.move_on_after(self.config.startup_timeout_sec + _BACKOFF_MAX_SEC):
            await self.wait_for(settled)
        return self._session if settled(self.status) and self.status is ServerStatus.READY else None

    def _unavailable(self, tool: str) -> ToolResult:
        why = self.reason or str(self.status)
        if self.status.waits_for_trust:  # the reason names the status in words and what to run
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
            session = await self.ready_session()
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
                    await self.wait_for(lambda status: status is not ServerStatus.READY)
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
            connection = self.client
            detail = "the connection closed"
            if connection is not None and connection.child is not None:
                detail = f"the server {exit_detail(await connection.child.wait(1.0))}"
            return ToolResult.error(
                f"MCP server {self.name!r} went away during the call to {tool!r} ({detail}); "
                "Kairox restarts it, so the call can be tried again"
            )
        # an HTTP 404 on our session: the SDK's transport reports it as INVALID_REQUEST, with the server's body
        # when it sent one ("Session not found") or its own stand-in ("Session terminated")
        if (
            self.config.transport == "streamable_http"
            and exc.code == INVALID_REQUEST
            and "session" in exc.message.lower()
        ):
            raise _SessionExpired from exc
        return ToolResult.error(f"{tool} on MCP server {self.name!r} failed: {exc.message} (JSON-RPC error {exc.code})")

    # --- resources ----------------------------------------------------------------------------------------

    async def read_resource(self, uri: str) -> ToolResult:
        session = await self.ready_session()
        if session is None:
            return self._unavailable("resources/read")
        try:
            return await session.read_resource(uri)
        except SessionError as exc:
            return ToolResult.error(f"reading {uri} from MCP server {self.name!r} failed: {exc.message}")
        except InvalidResult as exc:
            return ToolResult.error(f"reading {uri} from MCP server {self.name!r} failed: {exc}")
