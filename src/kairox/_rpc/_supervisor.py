"""One server behind a supervisor task: MCP servers, language servers and debug adapters alike.

The supervisor task enters the client (which starts the process or opens the connection) and leaves it in the same
task, so the client's task groups are entered and exited in one task. It moves the :class:`ServerStatus` through
``Starting -> Ready -> Stopped / Failed``, emits an event on each change (the subclass builds them), tells a crash
(the connection closed on its own) from a stop, and after a failure starts the server again when the subclass says
so: MCP servers with backoff, language servers on their next use instead, debug adapters never.
"""

import math
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import anyio
import anyio.abc

from kairox._rpc._status import ServerStatus
from kairox.events import Event, EventSink, NullSink

if TYPE_CHECKING:  # an MCP client's supervisor has no framed connection
    from kairox._rpc._connection import FramedConnection


class SupervisedClient(AbstractAsyncContextManager[Any], Protocol):
    @property
    def stderr_tail(self) -> str: ...


C = TypeVar("C", bound=SupervisedClient)

Ready = Callable[[], None]
"""Called by :meth:`ServerLifecycle._serve` once the server serves: it is Ready from then on."""


async def until_first(*waits: Callable[[], Awaitable[object]]) -> None:
    """Return as soon as one of ``waits`` returns (the others are cancelled)."""
    async with anyio.create_task_group() as group:

        async def wait(fn: Callable[[], Awaitable[object]]) -> None:
            await fn()
            group.cancel_scope.cancel()

        for fn in waits:
            group.start_soon(wait, fn)


class ServerLifecycle(Generic[C]):
    """Status, reason, stderr tail and the running client of one server; subclasses build the client and the
    events. :meth:`run` is the supervisor task; :meth:`_start_in` runs one in a task group and waits until the
    server is Ready or failed."""

    startup_error: ClassVar[type[Exception]] = Exception
    """The client's start-up error; its ``reason`` becomes the failure reason."""
    keep_client: ClassVar[bool] = False
    """Keep :attr:`client` after the server ended (its last events stay readable)."""
    startup_timeout: float | None = None
    """Seconds from a start to Ready; None when the client keeps its own clock."""

    def __init__(self, *, events: EventSink | None, stop_wait: float) -> None:
        self.events: EventSink = events or NullSink()
        self.status = ServerStatus.STOPPED
        self.reason: str | None = None
        self.stderr_tail = ""
        self.client: C | None = None
        self.restarting = False
        """True between a failure and the start that follows it."""
        self.settled = anyio.Event()
        """Set once the first start has ended in Ready or Failed (or the server was never started)."""
        self._changed = anyio.Event()
        self._stop_wait = stop_wait
        self._stop_requested = anyio.Event()
        self._done: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._deadline = math.inf
        self._keep_clock = False
        self._start_raced = False

    # --- what subclasses say -------------------------------------------------------------------------------------

    def _new_client(self) -> C:
        raise NotImplementedError

    def _connection(self, client: C) -> "FramedConnection | None":
        raise NotImplementedError

    def _crash_reason(self, client: C, connection: "FramedConnection") -> str | None:
        """Why the server failed once its connection ended or a stop was asked; None for a clean end."""
        return connection.close_reason if connection.closed else None

    async def _serve(self, client: C, ready: Ready) -> str | None:
        """Serve a started client until its connection ends or a stop is asked; returns why it failed (None: a
        clean end). Calls ``ready()`` once it serves."""
        ready()
        connection = self._connection(client)
        assert connection is not None
        await until_first(connection.wait_closed, self._stop_requested.wait)
        return self._crash_reason(client, connection)

    def _failure(self, client: C, exc: Exception) -> str:
        """The failure reason of an exception out of the client."""
        if isinstance(exc, self.startup_error):
            return str(getattr(exc, "reason", exc))
        return f"{type(exc).__name__}: {exc}"

    def _ended(self, client: C, failure: str | None, was_ready: bool) -> str | None:
        """The failure as reported, once the client has been left (its process reaped)."""
        return failure

    def _timed_out(self) -> str:
        """The failure reason of a start that did not reach Ready within :attr:`startup_timeout`."""
        return f"did not finish starting within {self.startup_timeout:g}s"

    def _raced(self, client: C) -> bool:
        """Whether a start that failed did nothing because the sandbox could not be set up in time (a path it was
        to cover went away after the masks were worked out): such a start is made once more, with fresh masks."""
        return False

    async def _next_start(self, reason: str, was_ready: bool) -> float | None:
        """After a failure: the delay before the next start, or None to stay Failed (having said so with
        :meth:`_fail`). Language servers and debug adapters stay Failed: their next use starts them again."""
        self._fail(reason)
        return None

    def _starting(self) -> Event:
        raise NotImplementedError

    def _running(self, client: C) -> Event:
        raise NotImplementedError

    def _failed(self, reason: str) -> Event:
        raise NotImplementedError

    def _stopped(self) -> Event:
        raise NotImplementedError

    # --- status --------------------------------------------------------------------------------------------------

    def _set(self, status: ServerStatus) -> None:
        self.status = status
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, predicate: Callable[[ServerStatus], bool]) -> ServerStatus:
        while not predicate(self.status):
            await self._changed.wait()
        return self.status

    def skipped(self, status: ServerStatus, reason: str) -> None:
        """A server that is not started (disabled, held back by trust, started on first use)."""
        self.reason = reason
        self._set(status)
        self.settled.set()

    def _fail(self, reason: str, *, will_restart: bool = False) -> None:
        self.reason, self.restarting = reason, will_restart
        self._set(ServerStatus.FAILED)
        self.events.emit(self._failed(reason))
        if not will_restart:
            self.settled.set()

    @property
    def winding_down(self) -> bool:
        """A supervisor runs (or is ending) for this server."""
        return self._done is not None and not self._done.is_set()

    # --- running -------------------------------------------------------------------------------------------------

    async def _start_in(self, group: anyio.abc.TaskGroup) -> bool:
        """Start a supervisor in ``group``; True once the server is Ready, False when it failed to start."""
        self._prepare()
        group.start_soon(self.run)
        await self.settled.wait()
        return self.status is ServerStatus.READY and self.client is not None

    def _prepare(self) -> None:
        """Fresh events for a new supervisor (the events of one that never ran are kept: someone may wait on them)."""
        if self._done is not None and self._done.is_set():
            self._stop_requested = anyio.Event()  # asked of the supervisor that has ended
        if self._done is None or self._done.is_set():
            self._done = anyio.Event()
        if self.settled.is_set():
            self.settled = anyio.Event()

    def request_stop(self) -> None:
        """Ask the supervisor to stop the server; :meth:`run` returns once it has."""
        self._stop_requested.set()
        if self._scope is not None:  # a start under way ends at once
            self._scope.cancel()

    async def stop(self) -> None:
        """Ask the supervisor to stop the server and wait (up to its stop wait) until it did."""
        done = self._done
        if done is None:
            return
        self.request_stop()
        with anyio.move_on_after(self._stop_wait):
            await done.wait()

    async def run(self) -> None:
        """The supervisor: start, serve, start again after a failure when :meth:`_next_start` says so, stop."""
        if self._done is None or self._done.is_set():
            self._prepare()
        assert self._done is not None
        done = self._done
        raced = False
        try:
            while not self._stop_requested.is_set():
                reason, was_ready = await self._serve_once()
                if self._stop_requested.is_set() or reason is None:
                    break
                if not was_ready and self._start_raced and not raced:
                    # bwrap stopped before the server ran: nothing ran, so it starts once more with fresh masks
                    raced = True
                    self._fail(f"{reason}; started again with the sandbox's masks worked out afresh", will_restart=True)
                    continue
                delay = await self._next_start(reason, was_ready)
                if delay is None:
                    break
                with anyio.move_on_after(delay):
                    await self._stop_requested.wait()
        except Exception as exc:
            # a bug here must not take the other servers' task group down with it
            self._fail(f"internal error in the supervisor: {type(exc).__name__}: {exc}")
        finally:
            if self.status is not ServerStatus.FAILED:
                if self.status in (ServerStatus.READY, ServerStatus.STARTING):
                    self.events.emit(self._stopped())
                self._set(ServerStatus.STOPPED)
            self.settled.set()
            done.set()

    async def _serve_once(self) -> tuple[str | None, bool]:
        """One start, from spawn to the end of its connection: (why it failed or None, whether it was Ready)."""
        self.reason = None
        self._set(ServerStatus.STARTING)
        self.events.emit(self._starting())
        if not self._keep_clock:
            self._deadline = math.inf if self.startup_timeout is None else anyio.current_time() + self.startup_timeout
        self._keep_clock = self._start_raced = False
        client = self._new_client()
        was_ready = False
        failure: str | None = None

        def ready() -> None:
            nonlocal was_ready
            was_ready, scope.deadline, self._scope = True, math.inf, None
            self.client, self.restarting = client, False
            self._set(ServerStatus.READY)
            self.events.emit(self._running(client))
            self.settled.set()

        with anyio.CancelScope(deadline=self._deadline) as scope:
            self._scope = scope
            if self._stop_requested.is_set():
                scope.cancel()
            try:
                async with client:
                    failure = await self._serve(client, ready)
            except Exception as exc:
                failure = self._failure(client, exc)
                self._start_raced = not was_ready and self._raced(client)
            finally:
                self._scope = None
                self.stderr_tail = client.stderr_tail
                if not self.keep_client:
                    self.client = None
        if self._stop_requested.is_set():
            return None, was_ready
        if scope.cancelled_caught and not was_ready:
            failure = self._timed_out()
        return self._ended(client, failure, was_ready), was_ready
