"""One server behind a client, owned by a supervisor task: the part the LSP and DAP lifecycles share.

The supervisor enters the client (which starts the process or opens the connection) in its own task and
leaves it there, so the client's task groups are entered and exited in one task. It reports each status
change (:class:`ServerStatus`) as an event, and tells a crash (the connection closed on its own) from a stop.
"""

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import anyio
import anyio.abc

from kairox._rpc._connection import FramedConnection
from kairox._rpc._status import ServerStatus
from kairox.events import Event, EventSink, NullSink


class SupervisedClient(AbstractAsyncContextManager[Any], Protocol):
    @property
    def stderr_tail(self) -> str: ...


C = TypeVar("C", bound=SupervisedClient)


async def until_first(*waits: Callable[[], Awaitable[object]]) -> None:
    """Return as soon as one of ``waits`` returns (the others are cancelled)."""
    async with anyio.create_task_group() as group:

        async def wait(fn: Callable[[], Awaitable[object]]) -> None:
            await fn()
            group.cancel_scope.cancel()

        for fn in waits:
            group.start_soon(wait, fn)


class ServerSupervisor(Generic[C]):
    """Status, reason, stderr tail and the running client of one server; subclasses build the client and the
    events. :meth:`_start_in` runs a supervisor in a task group and waits until the server runs or failed."""

    startup_error: ClassVar[type[Exception]]
    """The client's start-up error; its ``reason`` becomes the failure reason."""
    keep_client: ClassVar[bool] = False
    """Keep :attr:`client` after the server ended (its last events stay readable)."""

    def __init__(self, *, events: EventSink | None, stop_wait: float) -> None:
        self.events: EventSink = events or NullSink()
        self.status = ServerStatus.STOPPED
        self.reason: str | None = None
        self.stderr_tail = ""
        self.client: C | None = None
        self._stop_wait = stop_wait
        self._stop_requested = anyio.Event()
        self._done: anyio.Event | None = None

    # --- what subclasses say -------------------------------------------------------------------------------------

    def _new_client(self) -> C:
        raise NotImplementedError

    def _connection(self, client: C) -> FramedConnection | None:
        raise NotImplementedError

    def _crash_reason(self, client: C, connection: FramedConnection) -> str | None:
        """Why the server failed once its connection ended or a stop was asked; None for a clean end."""
        return connection.close_reason if connection.closed else None

    def _starting(self) -> Event:
        raise NotImplementedError

    def _running(self, client: C) -> Event:
        raise NotImplementedError

    def _failed(self, reason: str) -> Event:
        raise NotImplementedError

    def _stopped(self) -> Event:
        raise NotImplementedError

    # --- running -------------------------------------------------------------------------------------------------

    @property
    def winding_down(self) -> bool:
        """A supervisor runs (or is ending) for this server."""
        return self._done is not None and not self._done.is_set()

    def _raced(self, client: C) -> bool:
        """Whether a start that failed did nothing because the sandbox could not be set up in time (a path it was
        to cover went away after the masks were worked out): such a start is made once more, with fresh masks."""
        return False

    async def _start_in(self, group: anyio.abc.TaskGroup) -> bool:
        """Start a supervisor in ``group``; True once the server runs, False when it failed to start."""
        for attempt in range(2):
            ready = anyio.Event()
            self._stop_requested = anyio.Event()
            self._done = done = anyio.Event()
            self._start_raced = False
            group.start_soon(self._supervise, ready, done)
            await ready.wait()
            if self.status is ServerStatus.RUNNING and self.client is not None:
                return True
            await done.wait()
            if attempt or not self._start_raced:
                return False
        return False

    _start_raced = False

    async def stop(self) -> None:
        """Ask the supervisor to stop the server and wait (up to its stop wait) until it did."""
        done = self._done
        if done is None:
            return
        self._stop_requested.set()
        with anyio.move_on_after(self._stop_wait):
            await done.wait()

    async def _supervise(self, ready: anyio.Event, done: anyio.Event) -> None:
        self.status, self.reason = ServerStatus.STARTING, None
        self.events.emit(self._starting())
        client = self._new_client()
        failure: str | None = None
        try:
            async with client:
                self.client = client
                self.status = ServerStatus.RUNNING
                self.events.emit(self._running(client))
                ready.set()
                connection = self._connection(client)
                assert connection is not None
                await until_first(connection.wait_closed, self._stop_requested.wait)
                failure = self._crash_reason(client, connection)
        except self.startup_error as exc:
            failure = str(getattr(exc, "reason", exc))
            self._start_raced = not ready.is_set() and self._raced(client)
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            if not self.keep_client:
                self.client = None
            self.stderr_tail = client.stderr_tail
            if failure is not None:
                self.status, self.reason = ServerStatus.FAILED, failure
                self.events.emit(self._failed(failure))
            else:
                self.status = ServerStatus.STOPPED
                self.events.emit(self._stopped())
            ready.set()
            done.set()
