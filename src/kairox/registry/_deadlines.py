"""Call deadlines on one timer per event loop, instead of a timeout context per call.

``asyncio.timeout`` schedules and cancels a timer handle per call and wraps the call in a context object; most
calls end long before their deadline. Here the registry keeps its calls in flight in one table and one timer
handle, set for the nearest deadline: a call adds a small record and removes it, and only a call whose deadline
is nearer than every other moves the timer. When the timer fires, every call at or past its deadline is
cancelled (its task, as ``asyncio.timeout`` does) and the timer moves to the next deadline.

The outcome is ``asyncio.timeout``'s: a call cancelled by its deadline, and by nothing else, ends with
``expired`` true after ``stop``; a cancellation from outside (or both at once) is left to propagate.
"""

import asyncio
import math


class Watch:
    """One call in flight: its task, its deadline (loop time) and whether the deadline cancelled it."""

    __slots__ = ("cancelling", "deadline", "fired", "task")

    def __init__(self, task: "asyncio.Task[object]", deadline: float) -> None:
        self.task = task
        self.deadline = deadline
        self.cancelling = task.cancelling()
        self.fired = False


class Deadlines:
    """The deadlines of the calls one registry has in flight, on the running event loop."""

    __slots__ = ("_at", "_calls", "_handle", "_loop")

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._at = math.inf
        self._calls: dict[Watch, None] = {}

    def start(self, seconds: float) -> Watch | None:
        """Watch the current task for ``seconds``; None when there is nothing to watch (no task, no limit)."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None or seconds == math.inf:
            return None
        if loop is not self._loop:  # a new loop (a registry outlives one asyncio.run): start a fresh table
            self._loop, self._handle, self._at, self._calls = loop, None, math.inf, {}
        watch = Watch(task, loop.time() + seconds)
        self._calls[watch] = None
        if watch.deadline < self._at:
            if self._handle is not None:
                self._handle.cancel()
            self._at = watch.deadline
            self._handle = loop.call_at(watch.deadline, self._fire)
        return watch

    def stop(self, watch: Watch | None) -> bool:
        """The call ended (whatever way): forget it. True when its deadline cancelled it and nothing else did,
        so the ``CancelledError`` it ended with means "timed out"."""
        if watch is None:
            return False
        self._calls.pop(watch, None)
        if not watch.fired:
            return False
        return watch.task.uncancel() <= watch.cancelling

    def _fire(self) -> None:
        now, self._handle, self._at = self._at, None, math.inf
        nearest = math.inf
        for watch in list(self._calls):
            if watch.deadline <= now:
                del self._calls[watch]
                watch.fired = True
                watch.task.cancel()
            elif watch.deadline < nearest:
                nearest = watch.deadline
        if nearest != math.inf and self._loop is not None:
            self._at = nearest
            self._handle = self._loop.call_at(nearest, self._fire)

    @property
    def in_flight(self) -> int:
        """Calls being watched now (for tests)."""
        return len(self._calls)
