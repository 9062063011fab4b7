"""Kairox's own MCP client session for the handshake era: JSON-RPC over a message channel, no SDK types.

It does what a client of protocol 2024-11-05 to 2025-11-25 does (``initialize``, paginated listings,
``tools/call`` with progress and cancellation, ``resources/read``; answers ``ping``, ``roots/list``,
``elicitation/create`` and ``sampling/createMessage``; reports log messages and tool list changes) with one
future per request and one reader task in the session's task group (a request the server sends is answered in a
task of that group, under a cancel scope of its own that ``notifications/cancelled``
cancels), so a process that only talks to such servers never loads the SDK. In
``auto`` mode it first sends the 2026 ``server/discover`` probe as the SDK does; a server that answers it is
modern, and :meth:`NativeSession.open` returns its answer so the caller can hand the connection to the SDK.

Channels: :class:`StdioChannel` reads and writes JSON lines on a child's pipes; :class:`SdkStreamChannel` runs
over the SDK's SSE and Streamable HTTP transports (which the conformance suite exercises).
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

import anyio
import anyio.abc

from kairox._rpc import ChildProcess
from kairox._rpc._replies import RequestHandler, reply_to
from kairox.mcp._callbacks import ClientCallbacks
from kairox.mcp._content import (
    McpResource,
    McpTool,
    prompts_page,
    resource_contents_from_wire,
    resources_page,
    result_from_wire,
    tools_page,
)
from kairox.mcp._session import (
    CONNECTION_CLOSED,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
    InvalidResult,
    PageFetch,
    ProgressHandler,
    ServerOffers,
    SessionError,
    T,
    every_page,
)
from kairox.tools import ToolResult

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

DISCOVER_TIMEOUT_SEC = 10.0
"""How long the ``server/discover`` probe waits before taking the server for a handshake-era one."""
_WRITE_BUFFER_HIGH = 256 * 1024
_PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
_CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
_CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
_PROTOCOL_VERSION_HEADER = "mcp-protocol-version"
_NEVER_CANCELLED = frozenset({"initialize", "server/discover"})
CANCEL_NOTICE_SEC = 1.0
"""How long a cancelled request may take to tell the server (``notifications/cancelled``), shielded."""


class Channel(Protocol):
    """Whole JSON-RPC messages in and out of one connection."""

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message; None once the connection ended."""

    async def send(self, message: dict[str, Any]) -> None: ...

    def negotiated(self, version: str) -> None:
        """The handshake settled on ``version`` (HTTP sends it as a header from now on)."""


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

    def negotiated(self, version: str) -> None:
        return None


class Incoming(Protocol):
    """What the channel reads of an SDK transport's read stream (the SDK's own protocol for it is private)."""

    async def receive(self) -> "SessionMessage | Exception": ...


class Outgoing(Protocol):
    """What the channel writes to an SDK transport's write stream."""

    async def send(self, item: "SessionMessage", /) -> None: ...


class SdkStreamChannel:
    """The SDK's SSE or Streamable HTTP transport (its read and write streams of ``SessionMessage``) as a channel.

    The transport reports a failed HTTP exchange as an error response to the request (a 404 on an expired
    session among them), or as an exception in the read stream, which goes to ``on_problem``."""

    def __init__(
        self,
        read: "Incoming",
        write: "Outgoing",
        *,
        on_problem: Callable[[str], None],
    ) -> None:
        self._read, self._write = read, write
        self._on_problem = on_problem
        self._headers: dict[str, str] | None = None

    async def receive(self) -> dict[str, Any] | None:
        while True:
            try:
                item = await self._read.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return None
            if isinstance(item, Exception):
                self._on_problem(str(item)[:300])
                continue
            message = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
            if jsonrpc_shape(message):
                return message

    def _wrap(self, message: dict[str, Any]) -> "SessionMessage":
        import mcp_types
        from mcp.shared.message import ClientMessageMetadata, SessionMessage

        wire = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        metadata = ClientMessageMetadata(headers=dict(self._headers)) if self._headers else None
        return SessionMessage(wire, metadata=metadata)

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._write.send(self._wrap(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise SessionError(CONNECTION_CLOSED, "Connection closed") from exc

    def negotiated(self, version: str) -> None:
        self._headers = {_PROTOCOL_VERSION_HEADER: version}


class NativeSession:
    """``async with NativeSession(channel, ...) as session:`` reads in a task of its task group; :meth:`open` does
    the handshake.

    Enter and exit in one task (the task group's cancel scope belongs to it); requests may come from any task."""

    def __init__(
        self,
        channel: Channel,
        *,
        server: str,
        callbacks: ClientCallbacks,
        client_info: dict[str, str],
        on_tools_changed: Callable[[], None],
        on_violation: Callable[[str], None],
    ) -> None:
        self.channel = channel
        self.server = server
        self.callbacks = callbacks
        self.client_info = client_info
        self.protocol_version = ""
        self.instructions: str | None = None
        self.offers = ServerOffers()
        self.server_info: dict[str, Any] | None = None
        """``serverInfo`` of the ``initialize`` result (name, version): part of what the tool-list cache keeps."""
        self.closed = asyncio.Event()
        self._on_tools_changed = on_tools_changed
        self._on_violation = on_violation
        self._next_id = 0
        self._pending: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[int | str, ProgressHandler] = {}
        self._answering: dict[Any, anyio.CancelScope] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._output_schemas: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[str, Validator] = {}
        self._handlers: dict[str, RequestHandler] = {
            "ping": _pong,
            "roots/list": self._roots,
            "elicitation/create": callbacks.elicit,
            "sampling/createMessage": callbacks.sample,
        }

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

    async def _roots(self, params: Any) -> dict[str, Any]:
        return self.callbacks.list_roots()

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
        if progress is not None:
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), "progressToken": ident}
            self._progress[ident] = progress
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

    async def _notify(self, method: str) -> None:
        await self.channel.send({"jsonrpc": "2.0", "method": method})

    # --- the handshake ------------------------------------------------------------------------------------

    async def open(self, mode: str) -> dict[str, Any] | None:
        """``initialize`` (``mode`` legacy), or in ``auto`` mode the discovery probe first. Returns the server's
        ``server/discover`` result when it is a 2026-era server (the caller hands it to the SDK), else None."""
        capabilities = self.callbacks.capabilities()
        if mode == "auto":
            modern = await self._probe(capabilities)
            if modern is not None:
                return modern
        try:
            result = await self.request(
                "initialize",
                {
                    "protocolVersion": LATEST_HANDSHAKE_VERSION,
                    "capabilities": capabilities,
                    "clientInfo": self.client_info,
                },
            )
        except SessionError as exc:
            # a slow server that answered the probe after it timed out here is modern now and says so (-32022):
            # the SDK takes it and probes again, as the SDK's own negotiation does
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            speaks_modern = isinstance(supported, list) and any(version in MODERN_VERSIONS for version in supported)
            if mode == "auto" and exc.code == UNSUPPORTED_PROTOCOL_VERSION and speaks_modern:
                return {"supportedVersions": supported}
            raise
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_VERSIONS:
            raise InvalidResult(f"Unsupported protocol version from the server: {version}")
        self.protocol_version = str(version)
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        self.offers = ServerOffers.from_wire(result.get("capabilities"))
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else None
        self.channel.negotiated(self.protocol_version)
        await self._notify("notifications/initialized")
        return None

    async def _probe(self, capabilities: dict[str, Any]) -> dict[str, Any] | None:
        """The SDK's rule: only an answer naming a modern version we share is modern evidence; every error, a
        timeout or an unreadable answer means the handshake era. A modern-only server sharing no version with
        us fails the start."""
        meta = {
            _PROTOCOL_VERSION_META: LATEST_MODERN_VERSION,
            _CLIENT_INFO_META: self.client_info,
            _CLIENT_CAPABILITIES_META: capabilities,
        }
        try:
            with anyio.fail_after(DISCOVER_TIMEOUT_SEC):
                raw = await self.request("server/discover", {"_meta": meta})
        except TimeoutError:
            return None
        except SessionError as exc:
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(exc.data, dict):
                supported = exc.data.get("supported")
                if isinstance(supported, list) and any(v in MODERN_VERSIONS for v in supported):
                    return {"supportedVersions": supported}  # the SDK re-probes at a version we share
                if isinstance(supported, list) and not any(v in HANDSHAKE_VERSIONS for v in supported):
                    raise
            if self.closed.is_set():
                raise  # the connection ended (some servers exit on a method they do not know)
            return None
        versions = raw.get("supportedVersions")
        if (
            isinstance(versions, list)
            and any(v in MODERN_VERSIONS for v in versions)
            and isinstance(raw.get("capabilities"), dict)
        ):
            return raw
        return None

    # --- what the server offers ---------------------------------------------------------------------------

    def _pages(self, method: str, read: Callable[[Any], tuple[list[T], str | None]]) -> PageFetch[T]:
        """Reads one page of ``method`` at a cursor, for :func:`every_page`."""

        async def fetch(cursor: str | None) -> tuple[list[T], str | None]:
            return read(await self.request(method, {"cursor": cursor} if cursor is not None else None))

        return fetch

    async def list_tools(self) -> tuple[McpTool, ...]:
        tools = await every_page(self._pages("tools/list", tools_page))
        self._output_schemas = {
            tool.name: tool.output_schema for tool in tools if not (tool.problem or "").startswith("the server listed")
        }
        self._validators.clear()
        return tuple(tools)

    async def list_resources(self) -> list[McpResource]:
        found = await every_page(self._pages("resources/list", lambda raw: resources_page(raw, templates=False)))
        return found + await every_page(
            self._pages("resources/templates/list", lambda raw: resources_page(raw, templates=True))
        )

    async def list_prompts(self) -> tuple[str, ...]:
        return tuple(await every_page(self._pages("prompts/list", prompts_page)))

    async def call_tool(self, name: str, arguments: dict[str, Any], on_progress: ProgressHandler) -> ToolResult:
        raw = await self.request("tools/call", {"name": name, "arguments": arguments}, progress=on_progress)
        result = result_from_wire(raw)
        if not result.is_error:
            self._check_output(name, raw)
        return result

    def _check_output(self, name: str, raw: dict[str, Any]) -> None:
        """A tool with an output schema must return structured content that meets it (as the SDK checks)."""
        schema = self._output_schemas.get(name)
        if schema is None:
            return
        if "structuredContent" not in raw:
            raise InvalidResult(f"Tool {name} has an output schema but did not return structured content")
        validator = self._validators.get(name)
        if validator is None:
            from jsonschema import SchemaError
            from jsonschema.validators import validator_for
            from referencing import Registry

            kind = validator_for(schema)
            try:
                kind.check_schema(schema)
            except SchemaError as exc:
                raise InvalidResult(f"Invalid schema for tool {name}: {exc.message}") from exc
            validator = self._validators[name] = kind(schema, registry=Registry())
        from jsonschema.exceptions import best_match
        from referencing.exceptions import Unresolvable

        try:
            error = best_match(validator.iter_errors(raw["structuredContent"]))
        except Unresolvable as exc:
            raise InvalidResult(f"Invalid schema for tool {name}: {exc}") from exc
        if error is not None:
            raise InvalidResult(f"Invalid structured content returned by tool {name}: {error.message}")

    async def read_resource(self, uri: str) -> ToolResult:
        return resource_contents_from_wire(await self.request("resources/read", {"uri": uri}))


async def _pong(params: Any) -> dict[str, Any]:
    return {}
