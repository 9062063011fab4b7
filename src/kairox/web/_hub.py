"""The GUI's event stream: Kairox events in, the API's events out (``server.status``, ``tool.decided``, ``agent.text``
...), numbered, kept for the trace, fanned out to every open ``/api/events`` stream, and scrubbed of secrets."""

import asyncio
import dataclasses
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from kairox.config import SecretScrubber
from kairox.events import Event, event_to_json

if TYPE_CHECKING:
    from kairox.runtime import ServerBoard

RESULT_CAP = 2000
"""Characters of a tool result a tool card shows (the model gets the whole result)."""
TRACE_SIZE = 2000
"""Events kept for ``/api/trace`` and for a stream that reconnects with ``Last-Event-ID``."""
QUEUE_SIZE = 5000


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class WebEvent:
    seq: int
    time: float
    type: str
    data: dict[str, Any]
    summary: str = ""

    def trace_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "time": self.time, "type": self.type, "summary": self.summary, "data": self.data}

    def sse(self) -> str:
        import json

        return f"event: {self.type}\nid: {self.seq}\ndata: {json.dumps(self.data, ensure_ascii=False, default=str)}\n\n"


def finished_summary(duration_ms: float, size_chars: int, is_error: bool, error: str | None) -> str:
    """A finished call in a few words: ``ok in 12 ms, 113 characters`` or ``error: ...``."""
    return f"ok in {duration_ms:.0f} ms, {size_chars} characters" if not is_error else f"error: {error or 'failed'}"


def result_json(call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    """A tool result as a card shows it: JSON pretty-printed, capped at :data:`RESULT_CAP` characters."""
    import json

    try:
        shown = json.dumps(json.loads(text), ensure_ascii=False, indent=2) if text.lstrip()[:1] in ("{", "[") else text
    except ValueError:
        shown = text
    return {
        "call_id": call_id,
        "text": shown[:RESULT_CAP],
        "truncated": len(shown) > RESULT_CAP,
        "chars": len(text),
        "is_error": is_error,
    }


def summary(event: Event) -> str:
    """One line for the trace: the event's name and its short scalar fields."""
    fields = []
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if value is True or (isinstance(value, str | int | float) and not isinstance(value, bool)):
            text = str(value)
            fields.append(f"{field.name}={text if len(text) <= 80 else text[:79] + '…'}")
    return f"{type(event).__name__} " + " ".join(fields[:6])


def context_json(measured: Any) -> dict[str, Any]:
    """The agent's ``ContextMeasured`` as the page renders it (``text`` is the TUI's meter)."""
    return {
        "used_tokens": measured.used_tokens,
        "window_tokens": measured.window_tokens,
        "share": measured.share,
        "tools_tokens": measured.tools_tokens,
        "tools": measured.tools,
        "source": measured.source,
        "text": measured.meter(),
    }


def event_fields(event: Event) -> dict[str, Any]:
    """An event's own fields, without the ``event`` and ``kind`` names ``event_to_json`` adds."""
    return {k: v for k, v in event_to_json(event).items() if k not in ("event", "kind")}


def status_data(view: dict[str, Any]) -> dict[str, Any]:
    """A ``server.status`` event's data: from a server's view (``ServerView.to_json``), what the dot needs."""
    return {key: view[key] for key in ("kind", "name", "status", "label", "reason")}


class EventHub:
    """The sink the session writes to, and the source of ``/api/events``. Safe to emit from any thread."""

    def __init__(self, redactor: SecretScrubber) -> None:
        self.redactor = redactor
        self.trace: deque[WebEvent] = deque(maxlen=TRACE_SIZE)
        self.sent: deque[WebEvent] = deque(maxlen=TRACE_SIZE)
        """The stream's own events (not ``trace`` ones), for a page that connects again with ``Last-Event-ID``."""
        self.turn: str | None = None
        """The turn the session runs (``agent.*`` events carry it)."""
        self._seq = 0
        self._subscribers: set[asyncio.Queue[WebEvent]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.listeners: list[Any] = []
        """Called with every Kairox event on the loop's thread."""
        self.board: ServerBoard | None = None
        """The servers' views: each event is applied to it first, and a change is sent as ``server.status``."""
        self.streamed = ""
        """The answer streamed so far in the running model request (a page that loads mid-answer starts from it)."""

    def bind(self) -> None:
        """Remember the running loop: events from other threads (the skill scan) are handed to it."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    # --- in -----------------------------------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        if self._loop is not None and threading.get_ident() != self._thread:
            try:
                self._loop.call_soon_threadsafe(self._take, event)
            except RuntimeError:  # the loop has closed: the GUI is gone
                pass
            return
        self._take(event)

    def _take(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)
        translated = self._translate(event)
        for kind, data in translated:
            self.publish(kind, data, keep=False)
        if getattr(event, "inner", event).kind in ("agent.text.delta", "agent.thought.delta"):  # a subagent's too
            return  # streamed text stays out of the trace (agent.message has the whole answer)
        raw = event_to_json(event)
        raw.pop("event", None)
        # the trace keeps every Kairox event; the stream sends it as `trace` when no other event said it
        self.publish(type(event).__name__, raw, summary=summary(event), send_as_trace=not translated)

    def _translate(self, event: Event) -> list[tuple[str, dict[str, Any]]]:
        view = self.board.apply(event) if self.board is not None else None
        if view is not None and event.kind != "tools.changed":  # a count, not a change of status
            return [("server.status", status_data(view.to_json(tool_list=False)))]
        turn = self.turn
        name = event.kind
        data: Any = event
        if name == "agent.subagent.event":  # a subagent's calls: the page nests them under its task's card
            calls = data.inner.kind in ("agent.message.completed", "tool.call.decided", "tool.call.finished")
            nested = [(k, d) for k, d in self._translate(data.inner) if k != "agent.message"] if calls else []
            ids = {"parent_call_id": data.parent_call_id, "agent": data.agent}
            return [(k, {**d, **ids, "call_id": f"{data.agent_id}/{d['call_id']}"}) for k, d in nested]
        if name == "tool.call.decided":
            return [
                (
                    "tool.decided",
                    {"call_id": data.call_id, "tool": data.tool, "decision": data.decision, "reason": data.reason},
                )
            ]
        if name == "tool.call.finished":
            text = finished_summary(data.duration_ms, data.size_chars, data.is_error, data.error)
            return [
                (
                    "tool.finished",
                    {
                        "call_id": data.call_id,
                        "tool": data.tool,
                        "ok": not data.is_error,
                        "summary": text,
                        "duration_ms": data.duration_ms,
                    },
                )
            ]
        if name == "agent.text.delta":
            self.streamed += data.text
            return [("agent.text", {"turn": turn, "delta": data.text})]
        if name == "user.message.submitted":
            return [("user.message", {"turn": turn, "text": data.text, "rewind_turn": data.turn})]
        if name in ("agent.plan", "agent.rewind"):
            return [(name, event_fields(event))]
        if name == "agent.message.completed":
            self.streamed = ""
            tool_calls = [
                (
                    "agent.tool_call",
                    {
                        "turn": turn,
                        "call_id": call.get("id"),
                        "tool": call.get("tool") or call.get("name"),
                        "arguments": call.get("arguments"),
                    },
                )
                for call in data.tool_calls
            ]
            return [("agent.message", {"turn": turn, "text": data.text}), *tool_calls]
        if name == "agent.turn.ended":
            self.streamed = ""
            return [("agent.turn_ended", {"turn": turn, "reason": str(data.reason), "message": data.message})]
        if name == "agent.model.failed":
            return [("agent.error", {"turn": turn, "message": data.message})]
        if name == "agent.context":
            return [("agent.context", context_json(data))]
        if name == "agent.context.tools_warning":
            return [("agent.context_warning", event_fields(data))]
        if name.startswith("agent.compaction."):
            return [("agent.compaction", {"turn": turn, "state": name.rpartition(".")[2], **event_fields(event)})]
        return []

    @property
    def seq(self) -> int:
        """The number of the last event published."""
        return self._seq

    def publish(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        summary: str = "",
        keep: bool = True,
        send_as_trace: bool | None = None,
    ) -> WebEvent:
        """Number, scrub, keep (for the trace) and send one event. ``send_as_trace`` marks a Kairox event: it is
        sent as a ``trace`` event when true, kept only when false."""
        self._seq += 1
        item = WebEvent(
            seq=self._seq,
            time=time.time(),
            type=kind,
            data=self.redactor.scrub(data),
            summary=self.redactor.text(summary),
        )
        if keep:
            self.trace.append(item)
        if send_as_trace is None:
            self._send(item)
        elif send_as_trace:
            self._send(dataclasses.replace(item, type="trace", data=item.trace_json()))
        return item

    def _send(self, item: WebEvent) -> None:
        if item.type != "trace":
            self.sent.append(item)
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(item)
            except asyncio.QueueFull:  # a stream that stopped reading is dropped; the page reconnects
                self._subscribers.discard(queue)

    # --- out ----------------------------------------------------------------------------------------------------

    def subscribe(self) -> "asyncio.Queue[WebEvent]":
        queue: asyncio.Queue[WebEvent] = asyncio.Queue(maxsize=QUEUE_SIZE)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: "asyncio.Queue[WebEvent]") -> None:
        self._subscribers.discard(queue)

    def subscribed(self, queue: "asyncio.Queue[WebEvent]") -> bool:
        return queue in self._subscribers

    def call_facts(self) -> dict[str, dict[str, Any]]:
        """Per tool call id, what the trace still holds of it: the gate's decision and how it finished."""
        facts: dict[str, dict[str, Any]] = {}
        for item in self.trace:
            if item.type not in ("ToolCallDecided", "ToolCallFinished"):
                continue
            data = item.data
            fact = facts.setdefault(str(data.get("call_id")), {})
            if item.type == "ToolCallDecided" and (data.get("decision") != "ask" or "decision" not in fact):
                fact["decision"], fact["decision_reason"] = data.get("decision"), data.get("reason")
            elif item.type == "ToolCallFinished":
                is_error = bool(data.get("is_error"))
                duration = float(data.get("duration_ms") or 0)
                fact["finished"] = {
                    "ok": not is_error,
                    "duration_ms": duration,
                    "summary": finished_summary(
                        duration, int(data.get("size_chars") or 0), is_error, data.get("error")
                    ),
                }
        return facts

    def recent(self, limit: int) -> list[dict[str, Any]]:
        items = list(self.trace)[-limit:] if limit > 0 else []
        return [item.trace_json() for item in items]
