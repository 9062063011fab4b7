"""A JSON-RPC 2.0 endpoint over a framed byte stream: requests with correlation and timeouts, notifications,
and handlers for the requests and notifications the other side sends.

Messages are plain JSON values (no typed parsing), so servers that bend the protocol a little still work.
"""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kairox._rpc._connection import FramedConnection
from kairox._rpc._errors import RpcConnectionClosedError, RpcResponseError, RpcTimeoutError
from kairox._rpc._replies import INTERNAL_ERROR, RequestHandler, reply_to

log = logging.getLogger(__name__)

NotificationHandler = Callable[[str, Any], Awaitable[None] | None]
"""Gets ``(method, params)`` of a notification from the peer."""


class JsonRpcEndpoint(FramedConnection):
    """``async with JsonRpcEndpoint(reader, writer, peer="pylsp") as rpc:`` reads messages until the stream ends.

    Enter and exit in the same task (the reader runs in a task group). Requests may be sent from any task.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        peer: str,
        timeout: float = 30.0,
        cancel_method: str | None = None,
        closed_reason: Callable[[], str | Awaitable[str]] | None = None,
    ) -> None:
        super().__init__(reader, writer, peer=peer, timeout=timeout, closed_reason=closed_reason)
        self._cancel_method = cancel_method
        self._next_id = 0
        self._requests: dict[str, RequestHandler] = {}
        self._notifications: dict[str, NotificationHandler] = {}

    # --- handlers ------------------------------------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        self._requests[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        self._notifications[method] = handler

    # --- sending -------------------------------------------------------------------------------------------------

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send a request and wait for its result; raises an :class:`RpcError` subclass otherwise.

        ``timeout`` bounds the whole request: writing it (to a peer that may have stopped reading) and the
        answer."""
        self._next_id += 1
        request_id = self._next_id
        key = str(request_id)
        future = self._expect(key, method)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        limit = self.timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        try:
            await self._send(message, method, timeout=limit)
            return await asyncio.wait_for(asyncio.shield(future), max(deadline - loop.time(), 0))
        except TimeoutError:
            if self._cancel_method and not self.closed and self._tg is not None:
                # best effort, in the background: the caller gets its timeout now
                cancel = {"jsonrpc": "2.0", "method": self._cancel_method, "params": {"id": request_id}}
                self._tg.start_soon(self._send_quietly, cancel)
            raise RpcTimeoutError(self.peer, method, limit) from None
        finally:
            self._pending.pop(key, None)
            if not future.done():
                future.cancel()

    async def notify(self, method: str, params: Any = None, *, timeout: float | None = None) -> None:
        """Send a notification; a peer that does not read it within ``timeout`` fails it."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message, method, timeout=timeout, action="read")

    async def _send_quietly(self, message: Any) -> None:
        with contextlib.suppress(Exception):
            await self._send(message)

    # --- receiving -----------------------------------------------------------------------------------------------

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                assert self._tg is not None
                self._tg.start_soon(self._answer, message["id"], method, message.get("params"))
            else:
                await self._notify_handler(method, message.get("params"))
            return
        entry = self._pending.get(str(message.get("id")))
        if entry is None:
            return  # an answer to a request that timed out, or one we never sent
        name, future = entry
        if future.done():
            return
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            future.set_exception(
                RpcResponseError(
                    self.peer,
                    name,
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))

    async def _notify_handler(self, method: str, params: Any) -> None:
        handler = self._notifications.get(method)
        if handler is None:
            return
        try:
            outcome = handler(method, params)
            if outcome is not None:
                await outcome
        except Exception:
            log.exception("handler of %s from %s failed", method, self.peer)

    async def _answer(self, request_id: Any, method: str, params: Any) -> None:
        reply = await reply_to(request_id, method, params, self._requests.get(method), peer=self.peer)
        with contextlib.suppress(RpcConnectionClosedError, RpcTimeoutError):
            await self._send(reply)
