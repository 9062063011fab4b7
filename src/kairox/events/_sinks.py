import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from kairox._util._logfile import LOG_LIMIT_BYTES, RotatingLog
from kairox.events._events import Event, event_to_json

E = TypeVar("E", bound=Event)


@runtime_checkable
class EventSink(Protocol):
    """Where events go. ``emit`` must not block and must not raise."""

    def emit(self, event: Event) -> None: ...


class NullSink:
    def emit(self, event: Event) -> None:
        return None


RECORDING_LIMIT = 10_000
"""Events a ``RecordingSink`` keeps by default: the newest, so a long session (``kairox serve``, the GUI) does not
hold every tool call it ever made."""


class RecordingSink:
    """Keeps events in memory, in order: for tests, the TUI and ``kairox context``. Past ``limit`` events the
    oldest are dropped, a quarter of the limit at a time (so the list holds between ``limit`` and 1.25 times
    ``limit`` of the newest); ``limit=None`` keeps every event."""

    def __init__(self, *, limit: int | None = RECORDING_LIMIT) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"a recording limit must be at least 1, not {limit}")
        self.events: list[Event] = []
        self.limit = limit

    def emit(self, event: Event) -> None:
        events, limit = self.events, self.limit
        events.append(event)
        if limit is not None and len(events) >= limit + max(limit // 4, 1):
            del events[: len(events) - limit]

    def of_type(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]


class JsonLinesSink:
    """Writes one JSON object per event (with a ``ts`` in seconds since the epoch) to a file, capped and rotated."""

    def __init__(self, path: Path, *, limit: int = LOG_LIMIT_BYTES) -> None:
        self.path = path
        self._file = RotatingLog(path, limit=limit)  # capped: at the limit it moves to NAME.1 and starts anew
        self._lock = threading.Lock()

    def emit(self, event: Event) -> None:
        record = {"ts": round(time.time(), 6), **event_to_json(event)}
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock:
            self._file.write(line.encode("utf-8") + b"\n", whole=True)

    def close(self) -> None:
        with self._lock:
            self._file.close()


class FanoutSink:
    """Sends every event to several sinks; a failing sink never stops the others."""

    def __init__(self, sinks: Iterable[EventSink] = ()) -> None:
        self.sinks: list[EventSink] = list(sinks)

    def add(self, sink: EventSink) -> None:
        self.sinks.append(sink)

    def emit(self, event: Event) -> None:
        for sink in self.sinks:
            try:
                sink.emit(event)
            except Exception:
                continue
