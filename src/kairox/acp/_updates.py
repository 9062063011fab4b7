"""What the editor sees of a session: its events as ``session/update`` notifications, sent in order by one task.

Text and reasoning summaries stream as message and thought chunks; each tool call the model asks for is announced
with its kind, title, locations and (for edits) a diff, moves to in progress and done as the gate reports it, and
gets its result as content once the session has it (a command run in the editor's terminal keeps the terminal).
A transcript is replayed the same way for ``session/load``."""

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import helpers, schema

from kairox.agent import (
    AssistantMessageCompleted,
    AssistantTextDelta,
    Message,
    ModelRequestStarted,
    PlanUpdated,
    Role,
    TurnEnded,
)
from kairox.agent._events import AssistantThoughtDelta
from kairox.events import Event
from kairox.registry import ToolCallFinished, ToolCallRequested

if TYPE_CHECKING:
    from acp.interfaces import Client

    from kairox.agent import AgentSession

KINDS: dict[str, schema.ToolKind] = {
    "fs.read": "read",
    "fs.list": "read",
    "fs.write": "edit",
    "fs.edit": "edit",
    "shell.exec": "execute",
    "search.ripgrep": "search",
    "tool_search": "search",
    "web.fetch": "fetch",
}
_VERBS = {"fs.read": "Read", "fs.list": "List", "fs.write": "Write", "fs.edit": "Edit"}


def tool_call(call_id: str, tool: str, arguments: dict[str, Any], workspace: Path) -> schema.ToolCallStart:
    """A tool call as the editor shows it: ``shell.exec``'s command line, ``fs.*``'s file (with a diff for a change)."""
    path = arguments.get("path")
    where = workspace / path if isinstance(path, str) and path else None
    title = f"{_VERBS[tool]} {path}" if tool in _VERBS and where is not None else tool
    content: list[Any] = []
    if tool == "shell.exec":
        title = f"`{arguments.get('command', '')}`"
    elif where is not None and tool == "fs.write":
        content = [helpers.tool_diff_content(str(where), str(arguments.get("content", "")))]
    elif where is not None and tool == "fs.edit":
        old, new = str(arguments.get("old_string", "")), str(arguments.get("new_string", ""))
        content = [helpers.tool_diff_content(str(where), new, old)]
    line = arguments.get("start_line")
    locations = [schema.ToolCallLocation(path=str(where), line=line if isinstance(line, int) else None)]
    return helpers.start_tool_call(
        call_id,
        title,
        kind=KINDS.get(tool, "other"),
        status="pending",
        content=content or None,
        locations=locations if where is not None else None,
        raw_input=arguments,
    )


def _result_updates(message: Message, terminals: set[str]) -> list[schema.ToolCallProgress]:
    return [
        helpers.update_tool_call(
            result.call_id,
            status="failed" if result.is_error else "completed",
            content=None
            if result.call_id in terminals
            else [helpers.tool_content(helpers.text_block(f"```\n{result.text}\n```"))],
        )
        for result in message.tool_results
    ]


def history_updates(messages: Sequence[Message], workspace: Path, registry_name: Any) -> list[Any]:
    """A transcript's conversation as the updates that would have shown it (``session/load``)."""
    out: list[Any] = []
    for message in messages:
        if message.role is Role.USER:
            out.append(helpers.update_user_message_text(message.text))
        elif message.role is Role.ASSISTANT:
            if message.text:
                out.append(helpers.update_agent_message_text(message.text))
            out += [
                tool_call(c.id, registry_name(c.name) or c.name, c.arguments, workspace) for c in message.tool_calls
            ]
        else:
            out += _result_updates(message, set())
    return out


class EditorUpdates:
    """An EventSink for one session: the events the editor shows, queued in order and sent by :meth:`pump`."""

    def __init__(self, conn: "Client", workspace: Path) -> None:
        self.conn = conn
        self.workspace = workspace
        self.session_id = ""
        self.session: AgentSession | None = None
        self.stop_reason: str | None = None
        """The provider's stop reason of the last answer (``max_tokens``, ``refusal`` ... say why a turn ended)."""
        self.terminals: set[str] = set()
        """Tool calls that ran in the editor's terminal: their content is the terminal."""
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._sent: set[str] = set()

    def emit(self, event: Event) -> None:
        if threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self.emit, event)
            return
        if isinstance(event, AssistantTextDelta):
            self.send(helpers.update_agent_message_text(event.text))
        elif isinstance(event, AssistantThoughtDelta):
            self.send(helpers.update_agent_thought_text(event.text))
        elif isinstance(event, AssistantMessageCompleted):
            self.stop_reason = event.stop_reason
            for call in event.tool_calls:
                self.send(tool_call(call["id"], call["tool"], call["arguments"], self.workspace))
        elif isinstance(event, ToolCallRequested):
            self.send(helpers.update_tool_call(event.call_id, status="in_progress"))
        elif isinstance(event, PlanUpdated):  # the whole plan each time, as ACP's `plan` update is
            self.send(helpers.update_plan(helpers.plan_entry(e.content, status=e.status.value) for e in event.entries))
        elif isinstance(event, ToolCallFinished):
            self.send(helpers.update_tool_call(event.call_id, status="failed" if event.is_error else "completed"))
        elif isinstance(event, ModelRequestStarted | TurnEnded) and self.session is not None:
            # the results of a step are in the conversation before the next request or the turn's end
            for message in self.session.messages[-1:]:
                if message.role is Role.TOOL and message.tool_results[0].call_id not in self._sent:
                    self._sent.update(r.call_id for r in message.tool_results)
                    for update in _result_updates(message, self.terminals):
                        self.send(update)

    def send(self, update: Any) -> None:
        self._queue.put_nowait(update)

    async def pump(self) -> None:
        """Send the queued updates in order, until cancelled."""
        while True:
            update = await self._queue.get()
            try:
                await self.conn.session_update(session_id=self.session_id, update=update)
            except Exception:  # the editor went away: the session ends with the connection
                pass
            finally:
                self._queue.task_done()

    async def flush(self) -> None:
        """Wait until everything queued so far has been sent (before a prompt's or a load's answer)."""
        await self._queue.join()
