"""Kairox's own MCP session over a stdio server's pipes: JSON-RPC with one future per request, no SDK types.

It speaks both protocol eras. In ``auto`` mode it first sends the 2026 ``server/discover`` probe, as the SDK does: a
server that answers it is served in the 2026 era (every request carries the protocol version and the client's
identity in ``_meta``; a result that asks for input is answered and the request sent again; tool changes come on a
``subscriptions/listen`` stream), any other with ``initialize`` (protocol 2024-11-05 to 2025-11-25). Either way it
lists with pagination, calls tools with progress and cancellation, reads resources, answers ``ping``,
``roots/list``, elicitation and sampling, and reports log messages and tool list changes. One reader task runs in
the session's task group; a request the server sends is answered in a task of that group, under a cancel scope of
its own that ``notifications/cancelled`` cancels. A process whose servers all run over stdio never loads the SDK.
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from kairox._rpc._process import ChildProcess
from kairox._rpc._replies import RequestHandler, reply_to
from kairox.mcp._callbacks import ClientCallbacks
from kairox.mcp._session import (
    CONNECTION_CLOSED,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
    InvalidResult,
    McpSession,
    ProgressHandler,
    ServerOffers,
    SessionError,
)

log = logging.getLogger(__name__)

DISCOVER_TIMEOUT_SEC = 10.0
"""How long the ``server/discover`` probe waits before taking the server for a handshake-era one."""
_WRITE_BUFFER_HIGH = 256 * 1024
_META = "io.modelcontextprotocol/"
"""The prefix of the ``_meta`` keys a 2026-era request carries: protocolVersion, clientInfo, clientCapabilities,
logLevel (log messages are asked for per request in that era)."""
_NEVER_CANCELLED = frozenset({"initialize", "server/discover"})
CANCEL_NOTICE_SEC = 1.0
"""How long a cancelled request may take to tell the server (``notifications/cancelled``), shielded."""


def jsonrpc_shape(message: Any) -> bool:
    """True for a JSON-RPC 2.0 request, notification, result or error object."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    ident = message.get("id")
    if "method" in message:
        return (
            isinstance(message["method"], str)
            and isinstance(ident, (str, int, type(None)))
            and not isinstance(ident, bool)
            and isinstance(message.get("params"), (dict, type(None)))
        )
    if not isinstance(ident, (str, int, type(None))) or isinstance(ident, bool) or "id" not in message:
        return False
    if "result" in message:
        return "error" not in message and isinstance(message["result"], dict)
    error = message.get("error")
    return isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)


class StdioChannel:
    """JSON lines on a started child's pipes. A line that is not JSON-RPC (a stray ``print``) is reported and
    skipped; it never ends the session. ``eof`` says the child closed its output (it exited, or is about to);
    ``input_closed``, that a message could not be sent because the child's input was closed (it exited, or closed
    it), which can come before the end of its output is read."""

    def __init__(self, child: ChildProcess, *, on_invalid_line: Callable[[str], None] | None = None) -> None:
        self.child = child
        self.eof = False
        self.input_closed = False
        self.invalid_lines: list[str] = []
        self._on_invalid_line = on_invalid_line
        self._stdin = child.stdin
        self._stdout = child.stdout
        self._transport = child.stdin.transport

    def invalid(self, line: str) -> None:
        """Report a line that is not JSON-RPC (its first 200 characters are kept, the last 20 lines)."""
        self.invalid_lines.append(line[:200])
        del self.invalid_lines[:-20]
        if self._on_invalid_line is not None:
            self._on_invalid_line(line)

    async def receive(self) -> dict[str, Any] | None:
        readline, loads = self._stdout.readline, json.loads
        while True:
            try:
                raw = await readline()
            except ValueError:  # one line longer than the reader's limit
                self.invalid("<a line longer than 16 MiB>")
                continue
            except (ConnectionError, OSError):
                return None
            if not raw:
                self.eof = True
                return None
            try:
                message = loads(raw)
            except ValueError:
                message = None
            if jsonrpc_shape(message):
                return message  # type: ignore[no-any-return]
            line = raw.decode("utf-8", errors="replace").strip()
            if line:
                self.invalid(line)

    async def send(self, message: dict[str, Any]) -> None:
        if self._transport.is_closing():
            self.input_closed = True
            raise SessionError(CONNECTION_CLOSED, "Connection closed: the server's input is closed")
        self._stdin.write(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
        if self._transport.get_write_buffer_size() > _WRITE_BUFFER_HIGH:
            try:
                await self._stdin.drain()
            except (ConnectionError, OSError) as exc:
                self.input_closed = True
                raise SessionError(CONNECTION_CLOSED, f"Connection closed: {exc}") from exc


class NativeSession(McpSession):
    """``async with NativeSession(channel, ...) as session:`` reads in a task of its task group; :meth:`open` does
    the handshake.

    Enter and exit in one task (the task group's cancel scope belongs to it); requests may come from any task."""

    def __init__(
        self,
        channel: StdioChannel,
        *,
        server: str,
        callbacks: ClientCallbacks,
        client_info: dict[str, str],
        on_tools_changed: Callable[[], None],
    ) -> None:
        super().__init__(callbacks)
        self.channel = channel
        self.server = server
        self.client_info = client_info
        self.closed = asyncio.Event()
        self._meta: dict[str, Any] | None = None
        """What every request carries in ``_meta`` in the 2026 era (None in the handshake era)."""
        self._on_tools_changed = on_tools_changed
        self._next_id = 0
        self._pending: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[int | str, ProgressHandler] = {}
        self._answering: dict[Any, anyio.CancelScope] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._listening = anyio.Event()
        self._handlers: dict[str, RequestHandler] = {"ping": _pong, **self._inputs}

    @property
    def needs_listen(self) -> bool:
        """2026-era servers announce tool changes only on a ``subscriptions/listen`` stream."""
        return self._meta is not None and self.offers.tools_list_changed

    # --- lifetime -----------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        group = self._group = anyio.create_task_group()
        await group.__aenter__()
        group.start_soon(self._read_loop, name=f"mcp-reader-{self.server}")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        group, self._group = self._group, None
        assert group is not None
        group.cancel_scope.cancel()  # the reader and every answer in flight end with the session
        try:
            await group.__aexit__(exc_type, exc, tb)
        finally:
            self._fail_pending("Connection closed")

    def _fail_pending(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(SessionError(CONNECTION_CLOSED, reason))
        self.closed.set()

    # --- reading ------------------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        receive, pending = self.channel.receive, self._pending
        try:
            while (message := await receive()) is not None:
                if "method" not in message:
                    future = pending.get(message["id"])
                    if future is not None and not future.done():
                        future.set_result(message)
                elif "id" in message:
                    self._answer(message)
                else:
                    await self._notified(message["method"], message.get("params") or {})
        except Exception:  # a broken channel ends this session (its requests fail), never the task group's host
            log.exception("reading from MCP server %s failed", self.server)
        finally:
            self._fail_pending("Connection closed")

    async def _notified(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/progress":
            handler = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
            progress, total, text = params.get("progress"), params.get("total"), params.get("message")
            if handler is not None and isinstance(progress, (int, float)):
                try:
                    await handler(
                        float(progress),
                        float(total) if isinstance(total, (int, float)) else None,
                        text if isinstance(text, str) else None,
                    )
                except Exception:
                    log.exception("progress callback of %s failed", self.server)
        elif method == "notifications/message":
            self.callbacks.log(params)
        elif method == "notifications/tools/list_changed":
            self._on_tools_changed()
        elif method == "notifications/subscriptions/acknowledged":
            self._listening.set()
        elif method == "notifications/cancelled":
            scope = self._answering.get(params.get("requestId"))
            if scope is not None:
                scope.cancel()

    def _answer(self, message: dict[str, Any]) -> None:
        ident = message["id"]
        scope = self._answering[ident] = anyio.CancelScope()
        assert self._group is not None
        self._group.start_soon(self._reply, scope, ident, message["method"], message.get("params"))

    async def _reply(self, scope: anyio.CancelScope, ident: Any, method: str, params: Any) -> None:
        try:
            with scope:  # the server's notifications/cancelled for this request cancels it
                reply = await reply_to(ident, method, params, self._handlers.get(method), peer=self.server)
                with contextlib.suppress(SessionError):
                    await self.channel.send(reply)
        finally:
            if self._answering.get(ident) is scope:
                del self._answering[ident]

    # --- requests -----------------------------------------------------------------------------------------

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """Send a request and wait for its result; a JSON-RPC error or a closed connection is a SessionError.
        Cancelling the caller tells the server (``notifications/cancelled``)."""
        if self.closed.is_set():
            raise SessionError(CONNECTION_CLOSED, "Connection closed")
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if progress is not None or self._meta is not None:
            params = dict(params or {})
            meta = {**(self._meta or {}), **params.get("_meta", {})}
            if progress is not None:
                meta["progressToken"] = ident
                self._progress[ident] = progress
            params["_meta"] = meta
        if params is not None:
            message["params"] = params
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            await self.channel.send(message)
            response = await future
        except anyio.get_cancelled_exc_class():
            if method not in _NEVER_CANCELLED and not self.closed.is_set():
                # shielded, in this task: the caller is being cancelled, and a plain await would be cancelled too
                notice = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": ident, "reason": "cancelled by the client"},
                }
                with anyio.move_on_after(CANCEL_NOTICE_SEC, shield=True), contextlib.suppress(SessionError):
                    await self.channel.send(notice)
            raise
        finally:
            del self._pending[ident]
            if progress is not None:
                del self._progress[ident]
        error = response.get("error")
        if error is not None:
            raise SessionError(error["code"], error["message"], error.get("data"))
        return response["result"]  # type: ignore[no-any-return]

    # --- the handshake ------------------------------------------------------------------------------------

    async def open(self, mode: str) -> None:
        """``initialize`` (``mode`` legacy), or in ``auto`` mode the discovery probe first."""
        if mode == "auto" and await self._probe():
            return
        try:
            result = await self.request(
                "initialize",
                {
                    "protocolVersion": LATEST_HANDSHAKE_VERSION,
                    "capabilities": self.callbacks.capabilities(),
                    "clientInfo": self.client_info,
                },
            )
        except SessionError as exc:
            # a slow server that answered the probe after it timed out here is modern now and says so (-32022)
            if mode == "auto" and _modern_in(exc) and await self._probe():
                return
            raise
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_VERSIONS:
            raise InvalidResult(f"Unsupported protocol version from the server: {version}")
        self._adopt(str(version), result)
        await self.channel.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _probe(self) -> bool:
        """``server/discover``; True once a 2026-era server is adopted. The SDK's rule: only an answer naming a
        modern version we share is modern evidence; every other error, a timeout or an unreadable answer means the
        handshake era. A modern-only server sharing no version with us fails the start."""
        meta = {
            f"{_META}protocolVersion": LATEST_MODERN_VERSION,
            f"{_META}clientInfo": self.client_info,
            f"{_META}clientCapabilities": self.callbacks.capabilities(),
        }
        try:
            with anyio.fail_after(DISCOVER_TIMEOUT_SEC):
                raw = await self.request("server/discover", {"_meta": meta})
        except TimeoutError:
            return False
        except SessionError as exc:
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            speaks = isinstance(supported, list) and any(v in HANDSHAKE_VERSIONS for v in supported)
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(supported, list) and not speaks:
                raise
            if self.closed.is_set():
                raise  # the connection ended (some servers exit on a method they do not know)
            return False
        versions = raw.get("supportedVersions")
        if not (isinstance(versions, list) and LATEST_MODERN_VERSION in versions):
            return False
        if not isinstance(raw.get("capabilities"), dict):
            return False
        self._meta = {**meta, f"{_META}logLevel": "info"}
        self._adopt(LATEST_MODERN_VERSION, raw)
        return True

    def _adopt(self, version: str, result: dict[str, Any]) -> None:
        self.protocol_version = version
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        self.offers = ServerOffers.from_wire(result.get("capabilities"))
        meta = result.get("_meta")
        info = result.get("serverInfo", meta.get(f"{_META}serverInfo") if isinstance(meta, dict) else None)
        self.server_info = info if isinstance(info, dict) else None

    async def listen(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """2026 era: hold the ``subscriptions/listen`` stream for tool list changes open, as a task that counts as
        started once the server acknowledged it (so no change before the listing that follows is missed)."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._acknowledged, task_status)
            try:
                await self.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            finally:
                group.cancel_scope.cancel()

    async def _acknowledged(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        with anyio.move_on_after(DISCOVER_TIMEOUT_SEC):
            await self._listening.wait()
        task_status.started()


def _modern_in(exc: SessionError) -> bool:
    """An unsupported-version error that names a 2026-era version we speak."""
    supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
    return (
        exc.code == UNSUPPORTED_PROTOCOL_VERSION
        and isinstance(supported, list)
        and any(v in MODERN_VERSIONS for v in supported)
    )


async def _pong(params: Any) -> dict[str, Any]:
    return {}
