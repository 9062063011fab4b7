"""The Debug Adapter Protocol on a framed stream: requests correlated by ``seq`` / ``request_seq``, events kept
in order (each waiter reads from its own cursor), and the adapter's reverse requests answered.

Reading, writing with a time limit and failing what waits when the stream ends are
:class:`kairox._rpc._connection.FramedConnection`'s; DAP's own are its message shapes (``seq`` instead of JSON-RPC ids,
``success`` instead of ``error``) and the event log, which JSON-RPC does not keep.
"""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import anyio

from kairox._rpc._connection import FramedConnection
from kairox._rpc._errors import RpcConnectionClosedError, RpcTimeoutError
from kairox._util._json import JsonObject
from kairox.dap._errors import DapRequestError


class DapConnection(FramedConnection):
    """``async with DapConnection(reader, writer, peer="debugpy") as dap:``; enter and exit in the same task."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        peer: str,
        timeout: float = 30.0,
        closed_reason: Callable[[], str | Awaitable[str]] | None = None,
    ) -> None:
        super().__init__(reader, writer, peer=peer, timeout=timeout, closed_reason=closed_reason)
        self._seq = 0
        self.events: list[JsonObject] = []
        """Every event the adapter sent, in order."""
        self._new_event = anyio.Event()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await super().__aexit__(exc_type, exc, tb)
        self._writer.close()  # a TCP connection has no process whose stop closes it

    def _closing(self) -> None:
        self._new_event.set()  # event waiters see the end

    # --- requests ------------------------------------------------------------------------------------------------

    async def send(self, command: str, arguments: JsonObject | None = None) -> "asyncio.Future[JsonObject]":
        """Send a request; the future resolves to the whole response (use it when the answer comes late)."""
        self._seq += 1
        seq = self._seq
        future: asyncio.Future[JsonObject] = self._expect(seq, command)
        message: JsonObject = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        try:
            await self._send(message, command)
        except BaseException:
            self._pending.pop(seq, None)
            future.cancel()
            raise
        return future

    async def response(self, command: str, future: "asyncio.Future[JsonObject]", timeout: float | None = None) -> Any:
        """The ``body`` of a response; raises :class:`DapRequestError` when the adapter says it failed.

        The request stays pending after a timeout: a late answer (``launch``) can be waited for again."""
        limit = self.timeout if timeout is None else timeout
        try:
            reply = await asyncio.wait_for(asyncio.shield(future), limit)
        except TimeoutError:
            raise RpcTimeoutError(self.peer, command, limit) from None
        if not reply.get("success", False):
            raise DapRequestError(self.peer, command, _failure(reply))
        return reply.get("body") or {}

    async def request(self, command: str, arguments: JsonObject | None = None, *, timeout: float | None = None) -> Any:
        return await self.response(command, await self.send(command, arguments), timeout)

    # --- events --------------------------------------------------------------------------------------------------

    async def wait_event(self, names: set[str], *, since: int, timeout: float) -> tuple[int, JsonObject] | None:
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

    async def _dispatch(self, message: JsonObject) -> None:
        kind = message.get("type")
        if kind == "response":
            request_seq = message.get("request_seq")
            entry = self._pending.pop(request_seq, None) if isinstance(request_seq, int) else None
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
            with contextlib.suppress(RpcConnectionClosedError, RpcTimeoutError):
                await self._send(reply)


def _failure(reply: JsonObject) -> str:
    body = reply.get("body")
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("format"), str):
        text = error["format"]
        for key, value in (error.get("variables") or {}).items():
            text = text.replace("{" + key + "}", str(value))
        return str(text)
    return str(reply.get("message") or "the request failed")
