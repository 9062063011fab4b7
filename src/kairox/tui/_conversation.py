"""The conversation: the person's prompts, the model's answers as Markdown (streamed as they come), and each tool
call as a collapsible block with its arguments, the gate's decision (rule and file:line), duration and result."""

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Markdown, Static

from kairox.agent import AssistantMessageCompleted, SubagentEvent
from kairox.registry import ToolCallDecided, ToolCallFinished
from kairox.tui._diff import diff_text, edit_diff
from kairox.tui._servers import call_summary, compact_json, verdict

RESULT_CAP = 800
"""Characters of a tool result shown in its block (the model gets the whole result)."""
SUMMARY_CAP = 72
"""Characters of what a call ran in its collapsed line, so that the decision and the outcome stay in view."""


class ToolCallBlock(Collapsible):
    """One tool call. Collapsed by default; the title says the tool, what it ran (its main argument), the decision
    and the outcome, on one line cut to the width."""

    def __init__(
        self, call_id: str, tool: str, arguments: Any, schema: Any = None, workspace: Path | None = None
    ) -> None:
        self.call_id, self.tool = call_id, tool
        self.diff = edit_diff(tool, arguments, workspace) if workspace is not None else None
        """An edit's diff against the file as it was when the model asked (before the call ran)."""
        summary = call_summary(arguments, schema) + (
            f" {self.diff.stats}" if self.diff is not None and self.diff.problem is None else ""
        )
        self.summary = summary if len(summary) <= SUMMARY_CAP else summary[: SUMMARY_CAP - 1] + "…"
        self.arguments_text = compact_json(arguments)
        self.decision = "waiting for the gate"
        self.decided_by = ""
        """The decision as the line shows it: without the file and line of its rule (the body has them)."""
        self.outcome = ""
        self.waited = ""
        self.result = ""
        self._body = Static(self._body_text(), classes="tool-body")
        super().__init__(self._body, collapsed=True, classes="tool-call")
        self._title.label = Content(self.heading)  # plain text: a command's brackets are not markup
        self._title.can_focus = False  # opened with a click or Ctrl+O: Tab and Enter stay with the prompt

    @property
    def heading(self) -> str:
        return (
            f"{self.tool}"
            + (f" {self.summary}" if self.summary else "")
            + f" · {self.decided_by or self.decision}"
            + (f" · {self.outcome}" if self.outcome else "")
        )

    def _body_text(self) -> Text:
        body = Text()
        if self.diff is not None:
            body.append_text(diff_text(self.diff))
        else:
            body.append(f"arguments:\n{self.arguments_text}\n")
        body.append(f"decision: {self.decision}")
        if self.outcome:
            body.append(f"\n{self.outcome}")
        if self.waited:
            body.append(f"\n{self.waited}")
        if self.result:
            body.append(f"\nresult:\n{self.result}")
        return body

    def _refresh(self) -> None:
        self._title.label = Content(self.heading)
        self._body.update(self._body_text())

    def decided(self, event: ToolCallDecided) -> None:
        self.decision = verdict(event)
        self.decided_by = f"{event.decision} by {event.source}" + (f" {event.rule}" if event.rule else "")
        self._refresh()

    def finished(self, event: ToolCallFinished) -> None:
        state = "error" if event.is_error else "ok"
        self.outcome = f"{state} in {event.duration_ms:.0f} ms" + (
            f": {event.error.splitlines()[0][:200]}" if event.is_error and event.error else ""
        )
        self.waited = (
            f"the approval took {event.approval_wait_ms / 1000:.1f} s (not counted in the duration)"
            if event.approval_wait_ms >= 100
            else ""
        )
        self._refresh()

    def earlier(self, is_error: bool, text: str) -> None:
        """A call of a resumed session, as its transcript kept it: the outcome and the result, not the decision."""
        self.decision = self.decided_by = "earlier session"
        self.outcome = "error" if is_error else "ok"
        self.set_result(text)

    def set_result(self, text: str) -> None:
        self.result = (
            text if len(text) <= RESULT_CAP else text[:RESULT_CAP] + f"\n… ({len(text) - RESULT_CAP} more characters)"
        )
        self._refresh()


class Conversation(VerticalScroll, can_focus=False):
    """Prompts, answers and tool calls, newest at the bottom."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._stream: Static | None = None
        self._streamed = ""
        self.blocks: dict[str, ToolCallBlock] = {}
        self._tails: dict[str, ToolCallBlock] = {}

    def _add(self, widget: Any) -> None:
        self.mount(widget)
        self.scroll_end(animate=False)

    def notice(self, text: str) -> None:
        self._add(Static(text, classes="notice", markup=False))

    def user(self, text: str) -> None:
        self.end_stream()
        self._add(Static(f"› {text}", classes="user", markup=False))

    def delta(self, text: str) -> None:
        if self._stream is None:
            self._stream = Static("", classes="assistant", markup=False)
            self._streamed = ""
            self._add(self._stream)
        self._streamed += text
        self._stream.update(self._streamed)
        self.scroll_end(animate=False)

    def end_stream(self) -> str:
        """Close the streamed answer; the text it showed."""
        stream, shown, self._stream, self._streamed = self._stream, self._streamed, None, ""
        if stream is not None:
            # plain text while it streams, Markdown once it is complete
            self.mount(Markdown(shown, classes="assistant"), after=stream)
            stream.remove()
        return shown

    def answer(
        self, text: str, tool_calls: tuple[dict[str, Any], ...], schemas: Any = None, workspace: Path | None = None
    ) -> None:
        """A completed model message: its text (when it did not stream) and a block per tool call (``schemas``:
        a tool's input schema by name, or ``None``; ``workspace``: where an edit's file is, for its diff)."""
        if not self.end_stream() and text:
            self._add(Markdown(text, classes="assistant"))
        for call in tool_calls:
            tool = str(call.get("tool") or call.get("name"))
            block = ToolCallBlock(
                str(call.get("id", "")),
                tool,
                call.get("arguments", {}),
                schemas(tool) if schemas is not None else None,
                workspace,
            )
            self.blocks[block.call_id] = block
            self._add(block)

    def subagent_calls(
        self, parent: str, agent_id: str, calls: tuple[dict[str, Any], ...], earlier: bool = False
    ) -> None:
        """A subagent's tool calls, indented under the ``task`` call ``parent`` that runs it (``earlier``: of a
        resumed session)."""
        anchor = self.blocks.get(parent)
        for call in calls if anchor is not None else ():
            block = ToolCallBlock(f"{agent_id}/{call.get('id')}", str(call.get("tool")), call.get("arguments", {}))
            block.add_class("subagent-call")
            if earlier:
                block.earlier(False, "")
            self.mount(block, after=self._tails.get(parent, anchor))
            self.blocks[block.call_id] = self._tails[parent] = block

    def subagent_step(self, event: SubagentEvent) -> None:
        """A subagent's event, live: its calls nest under its task, whose line says how far it is."""
        inner, task = event.inner, self.blocks.get(event.parent_call_id)
        if isinstance(inner, AssistantMessageCompleted):
            self.subagent_calls(event.parent_call_id, event.agent_id, inner.tool_calls)
        block = self.blocks.get(f"{event.agent_id}/{getattr(inner, 'call_id', '')}")
        if block is not None and isinstance(inner, ToolCallDecided):
            block.decided(inner)
        elif block is not None and isinstance(inner, ToolCallFinished):
            block.finished(inner)
            if task is not None and not task.outcome.startswith(("ok", "error")):
                done = sum(1 for b in self.blocks.values() if b.call_id.startswith(event.agent_id) and b.outcome)
                task.outcome = f"{event.agent} running: {done} call(s) done"
                task._refresh()

    def clear(self) -> None:
        self.end_stream()
        self.blocks.clear()
        self._tails.clear()
        self.remove_children()


def result_text(text: str) -> str:
    """A result as the block shows it: JSON pretty-printed, anything else as it is."""
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text
