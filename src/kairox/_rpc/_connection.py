"""What every framed connection to a server does, whatever the protocol on top (JSON-RPC for LSP, DAP):
read messages in a task until the stream ends, write them with a time limit, and fail the requests still
waiting when the connection closes."""

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Hashable
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from kairox._rpc._errors import RpcConnectionClosedError, RpcTimeoutError
from kairox._rpc._framing import FramingProblem, MessageReader, MessageWriter

log = logging.getLogger(__name__)


class FramedConnection:
    """``async with connection:`` reads until the stream ends; subclasses say what a message means
    (:meth:`_dispatch`). Enter and exit in the same task; send from any task.

    ``closed_reason`` says why the stream ended (it may be a coroutine, to wait a moment for the exit code of
    the process behind it); the requests still waiting fail with it."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        peer: str,
        timeout: float = 30.0,
        closed_reason: Callable[[], str | Awaitable[str]] | None = None,
    ) -> None:
        self.peer = peer
        self.timeout = timeout
        self._reader = MessageReader(reader)
        self._writer = MessageWriter(writer)
        self._closed_reason = closed_reason or (lambda: "end of stream")
        self._pending: dict[Hashable, tuple[str, asyncio.Future[Any]]] = {}
        self._closed = anyio.Event()
        self._close_reason = ""
        self._tg: anyio.abc.TaskGroup | None = None
        self.problems: list[FramingProblem] = []
        """Messages that could not be read as JSON (the stream went on)."""

    # --- lifetime ------------------------------------------------------------------------------------------------

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
        await self._tg.__aexit__(None, None, None)  # the body's exception is not the reader's business
        self._close("the client closed the connection")

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def close_reason(self) -> str:
        return self._close_reason

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def _close(self, reason: str) -> None:
        if self._closed.is_set():
            return
        self._close_reason = reason
        self._closed.set()
        for method, future in self._pending.values():
            if not future.done():
                future.set_exception(RpcConnectionClosedError(self.peer, method, reason))
                # a request whose write failed has already raised to its caller, who never awaits the future; marking
                # it read keeps asyncio from logging it again, and a caller still waiting on it gets it all the same
                future.exception()
        self._pending.clear()
        self._closing()

    def _closing(self) -> None:
        """Called once when the connection closes, after the pending requests failed."""

    # --- sending -------------------------------------------------------------------------------------------------

    def _expect(self, key: Hashable, method: str) -> "asyncio.Future[Any]":
        """A future for the answer that will carry ``key``; the connection's end fails it."""
        if self.closed:
            raise RpcConnectionClosedError(self.peer, method, self._close_reason)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[key] = (method, future)
        return future

    async def _send(
        self, message: Any, method: str | None = None, *, timeout: float | None = None, action: str = "answer"
    ) -> None:
        """Write one message; a peer that does not read it within ``timeout`` fails it with
        :class:`RpcTimeoutError` (the message stays queued whole, so later frames are not corrupted)."""
        if self.closed:
            raise RpcConnectionClosedError(self.peer, method, self._close_reason)
        limit = self.timeout if timeout is None else timeout
        try:
            await asyncio.wait_for(self._writer.write(message), limit)
        except TimeoutError:
            raise RpcTimeoutError(self.peer, method or "a reply", limit, action=action) from None
        except (ConnectionError, RuntimeError, OSError) as exc:
            if not self.closed:  # the peer is gone: say how it went (its exit, its last stderr), not only the write
                why = self._closed_reason()
                self._close(f"writing failed ({exc}): {why if isinstance(why, str) else await why}")
            raise RpcConnectionClosedError(self.peer, method, self._close_reason) from exc

    # --- receiving -----------------------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            while (message := await self._reader.read()) is not None:
                if isinstance(message, FramingProblem):
                    self.problems.append(message)
                    log.warning("%s sent an unreadable message: %s", self.peer, message.reason)
                    continue
                for item in message if isinstance(message, list) else [message]:
                    if isinstance(item, dict):
                        await self._dispatch_safely(item)
        except (ConnectionError, OSError) as exc:
            self._close(f"reading failed: {exc}")
        except ValueError as exc:  # a line longer than the stream's limit: nothing readable follows
            self._close(f"reading failed: the peer wrote a header line longer than the stream takes ({exc})")
        if not self.closed:
            reason = self._closed_reason()
            self._close(reason if isinstance(reason, str) else await reason)

    async def _dispatch_safely(self, message: dict[str, Any]) -> None:
        """A message the subclass cannot make sense of is kept as a problem; reading goes on."""
        try:
            await self._dispatch(message)
        except Exception as exc:
            reason = f"cannot handle the message: {type(exc).__name__}: {exc}"
            self.problems.append(FramingProblem(reason=reason, body=json.dumps(message).encode()))
            log.warning("%s sent a message that %s", self.peer, reason)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        raise NotImplementedError
