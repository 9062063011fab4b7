"""The Debug Adapter Protocol on a framed stream: requests correlated by ``seq`` / ``request_seq``, events kept
in order (each waiter reads from its own cursor), and the adapter's reverse requests answered."""

import asyncio
import contextlib
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from kairox._rpc import (
    FramingProblem,
    MessageReader,
    MessageWriter,
    RpcConnectionClosedError,
    RpcTimeoutError,
)
from kairox._util import JsonObject
from kairox.dap._errors import DapRequestError


class DapConnection:
    """``async with DapConnection(reader, writer, peer="debugpy") as dap:``; enter and exit in the same task."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        peer: str,
        timeout: float = 30.0,
        closed_reason: Callable[[], str] | None = None,
    ) -> None:
        self.peer = peer
        self.timeout = timeout
        self._reader = MessageReader(reader)
        self._writer = MessageWriter(writer)
        self._closed_reason = closed_reason or (lambda: "end of stream")
        self._seq = 0
        self._pending: dict[int, tuple[str, asyncio.Future[JsonObject]]] = {}
        self.events: list[JsonObject] = []
        """Every event the adapter sent, in order."""
        self._new_event = anyio.Event()
        self._closed = anyio.Event()
        self.close_reason = ""
        self.problems: list[FramingProblem] = []
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._read_loop)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        self._close("the client closed the connection")
        self._writer.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def _close(self, reason: str) -> None:
        if self._closed.is_set():
            return
        self.close_reason = reason
        self._closed.set()
        self._new_event.set()
        for command, future in self._pending.values():
            if not future.done():
                future.set_exception(RpcConnectionClosedError(self.peer, command, reason))
        self._pending.clear()

    # --- requests ------------------------------------------------------------------------------------------------

    async def send(self, command: str, arguments: JsonObject | None = None) -> "asyncio.Future[JsonObject]":
        """Send a request; the future resolves to the whole response (use it when the answer comes late)."""
        if self.closed:
            raise RpcConnectionClosedError(self.peer, command, self.close_reason)
        self._seq += 1
        seq = self._seq
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._pending[seq] = (command, future)
        message: JsonObject = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        await self._write(message, command)
        return future

    async def response(
        self, command: str, future: "asyncio.Future[JsonObject]", timeout: float | None = None
    ) -> Any:
        """The ``body`` of a response; raises :class:`DapRequestError` when the adapter says it failed."""
        limit = self.timeout if timeout is None else timeout
        try:
            reply = await asyncio.wait_for(asyncio.shield(future), limit)
        except TimeoutError:
            raise RpcTimeoutError(self.peer, command, limit) from None
        if not reply.get("success", False):
            raise DapRequestError(self.peer, command, _failure(reply))
        return reply.get("body") or {}

    async def request(
        self, command: str, arguments: JsonObject | None = None, *, timeout: float | None = None
    ) -> Any:
        return await self.response(command, await self.send(command, arguments), timeout)

    async def _write(self, message: JsonObject, command: str | None) -> None:
        try:
            await self._writer.write(message)
        except (ConnectionError, RuntimeError, OSError) as exc:
            self._close(f"writing failed: {exc}")
            raise RpcConnectionClosedError(self.peer, command, self.close_reason) from exc

    # --- events --------------------------------------------------------------------------------------------------

    async def wait_event(
        self, names: set[str], *, since: int, timeout: float
    ) -> tuple[int, JsonObject] | None:
        """The first event named in ``names`` at index ``since`` or later, waiting up to ``timeout``; ``None``
        when none came (or the connection closed)."""
        with anyio.move_on_after(timeout):
            while True:
                for index in range(since, len(self.events)):
                    if self.events[index].get("event") in names:
                        return index, self.events[index]
                since = len(self.events)
                if self.closed:
                    return None
                await self._new_event.wait()
        return None

    # --- reading -------------------------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            while (message := await self._reader.read()) is not None:
                if isinstance(message, FramingProblem):
                    self.problems.append(message)
                elif isinstance(message, dict):
                    await self._dispatch(message)
        except (ConnectionError, OSError) as exc:
            self._close(f"reading failed: {exc}")
        self._close(self._closed_reason())

    async def _dispatch(self, message: JsonObject) -> None:
        kind = message.get("type")
        if kind == "response":
            entry = self._pending.pop(int(message.get("request_seq", -1)), None)
            if entry is not None and not entry[1].done():
                entry[1].set_result(message)
        elif kind == "event":
            self.events.append(message)
            self._new_event.set()
            self._new_event = anyio.Event()
        elif kind == "request":
            # reverse requests (runInTerminal, startDebugging): Kairox runs programs through the adapter only
            self._seq += 1
            reply = {
                "seq": self._seq,
                "type": "response",
                "request_seq": message.get("seq"),
                "command": message.get("command"),
                "success": False,
                "message": f"Kairox does not support the reverse request {message.get('command')!r}",
            }
            with contextlib.suppress(RpcConnectionClosedError):
                await self._write(reply, None)


def _failure(reply: JsonObject) -> str:
    body = reply.get("body")
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("format"), str):
        text = error["format"]
        for key, value in (error.get("variables") or {}).items():
            text = text.replace("{" + key + "}", str(value))
        return str(text)
    return str(reply.get("message") or "the request failed")
