"""Frozen event records and the sinks they go to (in memory, JSON lines, fan-out).

Feature packages define their own events by subclassing :class:`Event`; every event serialises to a JSON
object whose ``event`` field is the class name.
"""

from kairox.events._events import ConfigLoaded, Event, event_to_json
from kairox.events._sinks import EventSink, FanoutSink, JsonLinesSink, NullSink, RecordingSink

__all__ = [
    "ConfigLoaded",
    "Event",
    "EventSink",
    "FanoutSink",
    "JsonLinesSink",
    "NullSink",
    "RecordingSink",
    "event_to_json",
]
