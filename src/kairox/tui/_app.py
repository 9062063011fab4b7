"""``KairoxApp``: the conversation and composer on the left, the trace panel (servers, event trace) on the right,
a status line below. The session (or, with no model configured, the extension context alone) lives in one worker
task that enters and leaves it; everything else reacts to its events."""

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, RichLog, Static

from kairox.agent import (
    AssistantMessageCompleted,
    AssistantTextDelta,
    CompactionFailed,
    CompactionStarted,
    ContextCompacted,
    ContextMeasured,
    ModelFailed,
    ModelRequestStarted,
    PlanUpdated,
    Rewound,
    Role,
    SubagentEvent,
    ToolDefinitionsLarge,
    TurnEnded,
    UsageReported,
    plan_text,
    subagent_history,
)
from kairox.events import Event
from kairox.policy import ApprovalAnswer
from kairox.registry import ToolCallDecided, ToolCallFinished
from kairox.runtime import SlashCommand, agent_rows, plugin_rows, skill_rows, toggle_agent, toggle_plugin, toggle_skill
from kairox.tui import _reports
from kairox.tui._approval import ApprovalScreen, TuiApprover
from kairox.tui._commands import BUILTINS, all_commands, find_command, help_text, unknown_reason
from kairox.tui._composer import Composer, Option, workspace_paths
from kairox.tui._conversation import Conversation, result_text
from kairox.tui._panels import McpPanel, SessionPicker, TextPanel
from kairox.tui._servers import MARKS, TraceEntry, describe, load_failures
from kairox.tui._toggles import TogglePanel

if TYPE_CHECKING:
    from kairox.agent import AgentSession, ModelSettings
    from kairox.config import ResolvedConfig
    from kairox.runtime import ExtensionContext, RuntimeOptions

CSS = """
Screen { layout: vertical; }
#main { height: 1fr; }
#left { width: 3fr; }
#conversation { height: 1fr; padding: 0 1; }
#conversation .user { color: $accent; margin-top: 1; }
#conversation .notice { color: $text-muted; margin: 1 0; }
#conversation .assistant { margin: 0; padding: 0; }
#conversation .tool-call { margin: 0; padding: 0; border: none; }
#conversation .subagent-call { margin-left: 4; }
#conversation .tool-call CollapsibleTitle { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
#completions { height: auto; max-height: 9; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
#completions.empty { display: none; }
#plan { height: auto; max-height: 10; padding: 0 1; border: round $panel-lighten-2; }
#composer { height: 5; border: round $accent; }
#trace { width: 2fr; min-width: 40; border-left: solid $panel-lighten-2; }
.section { background: $panel; padding: 0 1; text-style: bold; }
#servers { height: auto; max-height: 14; overflow-x: hidden; }
#events { height: 1fr; }
#status-bar { height: 1; background: $panel; padding: 0 1; }
.panel { align: center middle; }
.panel-box { width: 90%; height: 85%; border: round $accent; background: $surface; }
.panel-title { background: $panel; padding: 0 1; text-style: bold; }
#mcp-servers { width: 36; height: 1fr; }
#mcp-detail { width: 1fr; padding: 0 1; }
#mcp-tools { height: auto; }
.approval { align: center middle; }
#approval-box { width: 80%; height: auto; max-height: 90%; border: thick $warning; background: $surface; padding: 0 1; }
#approval-title { text-style: bold; color: $warning; }
#approval-call { height: auto; max-height: 16; border: round $panel-lighten-2; }
#approval-choices { margin-top: 1; }
.hidden { display: none; }
"""  # noqa: E501

_PANELS = ("mcp", "skills", "plugins", "hooks", "agents", "doctor")
"""Built-in commands that open their panel (``action_panel``)."""


class _AppSink:
    """The session's events into the app: directly on the app's thread, through call_from_thread from others
    (skills are scanned in a worker thread)."""

    def __init__(self, app: "KairoxApp") -> None:
        self.app = app

    def emit(self, event: Event) -> None:
        if threading.get_ident() == self.app.loop_thread:
            self.app.handle_event(event)
        else:
            self.app.call_from_thread(self.app.handle_event, event)


class KairoxApp(App[None]):
    CSS = CSS
    TITLE = "Kairox"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "cancel turn / quit", priority=True),
        Binding("q", "quit_app", "quit", show=False),
        Binding("escape", "to_composer", show=False),
        Binding("ctrl+o", "toggle_tools", "tool calls"),
        Binding("pageup", "scroll_conversation(-1)", show=False, priority=True),
        Binding("pagedown", "scroll_conversation(1)", show=False, priority=True),
        Binding("f3", "errors_only", "errors only"),
        Binding("f2", "panel('mcp')", "/mcp"),
    ]

    def __init__(
        self,
        options: "RuntimeOptions",
        resolved: "ResolvedConfig",
        *,
        model: str | None = None,
        provider: str | None = None,
        resume: str | None = None,
        clock: Callable[[], float] = time.time,
        start_session: bool = True,
    ) -> None:
        super().__init__()
        self.options, self.resolved = options, resolved
        self.model, self.provider, self.resume = model, provider, resume
        self.clock = clock
        from kairox.runtime import ServerBoard

        self.board = ServerBoard(resolved, starting=start_session, clock=clock)
        self.approver = TuiApprover(self, resolved.workspace)
        self.entries: list[tuple[float, TraceEntry]] = []
        self.errors_only = False
        self.server_filter: str | None = None
        self.context: ExtensionContext | None = None
        self.session: AgentSession | None = None
        self.settings: ModelSettings | None = None
        self.setup_problem: str | None = None
        self.usage = (0, 0)
        self.context_usage: ContextMeasured | None = None
        """The agent's last measure of the context window: the status bar's meter."""
        self.turn_running = False
        self.loop_thread = threading.get_ident()
        self._start_session = start_session
        self._leave = anyio.Event()
        self._left = anyio.Event()
        self._paths: list[str] | None = None

    # --- layout -----------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Conversation(id="conversation")
                yield Static("", id="plan", classes="hidden", markup=False)
                yield Static("", id="completions", classes="empty", markup=False)
                yield Composer(self._workspace_paths, self._command_options, id="composer")
            with Vertical(id="trace"):
                yield Static("Servers", classes="section")
                yield DataTable(id="servers", cursor_type="row", show_cursor=False)
                yield Static("Trace", id="trace-title", classes="section")
                yield RichLog(id="events", wrap=True, markup=False, auto_scroll=True, min_width=20)
        yield Static("", id="status-bar", markup=False)

    def on_mount(self) -> None:
        self.loop_thread = threading.get_ident()
        table = self.query_one("#servers", DataTable)
        table.add_columns("server", "status", "tools", "started", "last error")
        # the prompt is the one place keys go: Tab from the servers table comes back to it, and the trace and the
        # conversation (scrolled with PageUp/PageDown, tool calls opened with Ctrl+O) never hold the focus
        self.query_one("#events", RichLog).can_focus = False
        self.refresh_servers()
        self.refresh_status()
        self.query_one(Composer).focus()
        if self._start_session:
            # after the first paint: the session's start-up runs on this loop, and the composer should show first
            self.call_after_refresh(lambda: self.run_worker(self._session_main(), name="session", exit_on_error=False))

    def _command_options(self) -> list[Option]:
        skills = self.context.skills if self.context is not None else None
        return [
            Option(f"/{c.name}", (f"{c.argument_hint}  " if c.argument_hint else "") + c.description)
            for c in all_commands(skills)
        ]

    def _workspace_paths(self) -> list[str]:
        if self._paths is None:
            self._paths = workspace_paths(self.resolved.workspace)
        return self._paths

    # --- the session ------------------------------------------------------------------------------------------

    async def _session_main(self) -> None:
        from kairox.agent import open_workspace

        sink = _AppSink(self)
        conversation = self.query_one(Conversation)
        try:
            async with open_workspace(
                cli=self.options,
                resolved=self.resolved,
                approver=self.approver,
                events=[sink],
                model=self.model,
                provider=self.provider,
                resume=self.resume,
            ) as opened:
                self.settings, self.setup_problem, session = opened.settings, opened.setup_problem, opened.session
                if session is None or self.settings is None:
                    conversation.notice(f"{self.setup_problem}\n\n{_reports.NO_MODEL}")
                    await self._context_ready(opened.context)
                else:
                    self.session = session
                    await self._context_ready(session.context)
                    self._show_history(session)
                    conversation.notice(
                        f"session {session.session_id} · {self.settings.provider}"
                        f"/{self.settings.model} · / for commands, Tab completes, @ for files"
                    )
                await self._leave.wait()
        except Exception as exc:  # a start-up failure is shown, not a crash: the person can read it and quit
            conversation.notice(f"kairox could not start the session: {exc}")
            self.trace(TraceEntry(text=f"session: {exc}", error=True))
            await self._leave.wait()
        finally:
            self.context = None
            self.session = None
            self._left.set()

    def _show_history(self, session: "AgentSession") -> None:
        """A resumed session's earlier prompts, answers and tool calls (each with the result it had)."""
        conversation = self.query_one(Conversation)
        registry = session.context.registry
        for message in session.messages:
            if message.summary:
                conversation.notice(f"earlier turns, as compacted:\n{message.text}")
            elif message.role is Role.USER and message.text:
                conversation.user(message.text)
            elif message.role is Role.ASSISTANT:
                calls = tuple(
                    {"id": c.id, "tool": registry.from_wire_name(c.name) or c.name, "arguments": c.arguments}
                    for c in message.tool_calls
                )
                conversation.answer(message.text, calls, self._schema)  # no diff: the file has changed since
            elif message.role is Role.TOOL:
                for part in message.tool_results:
                    block = conversation.blocks.get(part.call_id)
                    if block is not None:
                        block.earlier(part.is_error, result_text(part.text))
        for parent, agent_id, calls in subagent_history(session.transcript.path):
            conversation.subagent_calls(parent, agent_id, calls, earlier=True)

    async def _switch_session(self, session_id: str) -> None:
        """`/resume ID`: leave this session (its servers stop) and open that transcript's session."""
        conversation = self.query_one(Conversation)
        if self.settings is None:
            conversation.notice(
                "no model is configured, so there is no session to resume; /model says how to set one up"
            )
            return
        if self.turn_running:
            conversation.notice("a turn is running; Ctrl+C cancels it, then /resume again")
            return
        self._leave.set()
        await self._left.wait()
        self._leave, self._left = anyio.Event(), anyio.Event()
        self.resume = session_id
        conversation.clear()
        conversation.notice(f"resuming session {session_id} …")
        self.run_worker(self._session_main(), name="session", exit_on_error=False)

    async def _context_ready(self, context: "ExtensionContext") -> None:
        self.context = context
        self.board.sync(context)
        for entry in load_failures(context.diagnostics):
            self.trace(entry)
        self.refresh_servers()
        self.refresh_status()

    # --- events -----------------------------------------------------------------------------------------------

    def handle_event(self, event: Event) -> None:
        if not self.is_running:
            return  # the last events of a session that ends with the app
        if self.board.apply(event) is not None:
            self.refresh_servers()
        entry = describe(event)
        if entry is not None:
            self.trace(entry)
        conversation = self.query_one(Conversation)
        if isinstance(event, SubagentEvent):
            conversation.subagent_step(event)
        elif isinstance(event, AssistantTextDelta):
            conversation.delta(event.text)
        elif isinstance(event, AssistantMessageCompleted):
            conversation.answer(event.text, event.tool_calls, self._schema, self.resolved.workspace)
        elif isinstance(event, ToolCallDecided) and event.call_id in conversation.blocks:
            conversation.blocks[event.call_id].decided(event)
        elif isinstance(event, ToolCallFinished) and event.call_id in conversation.blocks:
            conversation.blocks[event.call_id].finished(event)
        elif isinstance(event, ModelRequestStarted | TurnEnded):
            self._fill_results()
            if isinstance(event, TurnEnded) and event.message:
                conversation.end_stream()
                conversation.notice(f"turn ended ({event.reason}): {event.message}")
        elif isinstance(event, ModelFailed):
            conversation.end_stream()
        elif isinstance(event, UsageReported):
            self.usage = (event.session_input_tokens, event.session_output_tokens)
            self.refresh_status()
        elif isinstance(event, ContextMeasured):
            self.context_usage = event
            self.refresh_status()
        elif isinstance(event, ToolDefinitionsLarge):
            conversation.notice(f"warning: {event.message}")
        elif isinstance(event, CompactionStarted):
            conversation.end_stream()
            conversation.notice(f"compacting ({event.trigger}): the model summarises {event.messages} older messages …")
        elif isinstance(event, ContextCompacted):
            conversation.notice(
                f"compacted: {event.replaced_messages} messages summarised, {event.kept_messages}"
                f" kept; about {event.tokens_before} -> {event.tokens_after} tokens"
            )
        elif isinstance(event, CompactionFailed):
            conversation.notice(f"not compacted: {event.message}")
        elif isinstance(event, PlanUpdated):
            plan = self.query_one("#plan", Static)
            plan.set_class(not event.entries, "hidden")
            plan.border_title = "Plan"
            plan.update(plan_text(event.entries))
        elif isinstance(event, Rewound):
            if event.messages is not None:
                conversation.clear()
            conversation.notice(
                f"rewound to before turn {event.turn}"
                + (" (the conversation too)" if event.messages is not None else "")
                + f"; put back: {', '.join(event.restored) or 'none'}; removed: {', '.join(event.removed) or 'none'}"
                + "".join(f"\ncannot be put back: {note}" for note in event.irreversible)
            )

    def _schema(self, tool: str) -> object:
        spec = self.context.registry.get(tool) if self.context is not None else None
        return spec.input_schema if spec is not None else None

    def _fill_results(self) -> None:
        """Tool results reach the conversation when the session records them (before the next model request)."""
        if self.session is None:
            return
        blocks = self.query_one(Conversation).blocks
        for message in self.session.messages[-4:]:
            if message.role is Role.TOOL:
                for part in message.tool_results:
                    if part.call_id in blocks and not blocks[part.call_id].result:
                        blocks[part.call_id].set_result(result_text(part.text))

    def trace(self, entry: TraceEntry) -> None:
        stamp = self.clock()
        self.entries.append((stamp, entry))
        if self._shown(entry):
            self.query_one("#events", RichLog).write(self._line(stamp, entry))

    def _shown(self, entry: TraceEntry) -> bool:
        return (entry.error or not self.errors_only) and (
            self.server_filter is None or entry.server == self.server_filter
        )

    @staticmethod
    def _line(stamp: float, entry: TraceEntry) -> Text:
        line = Text(time.strftime("%H:%M:%S ", time.localtime(stamp)), style="dim")
        line.append(entry.text, style="red" if entry.error else "")
        return line

    def refresh_trace(self) -> None:
        log = self.query_one("#events", RichLog)
        log.clear()
        for stamp, entry in self.entries:
            if self._shown(entry):
                log.write(self._line(stamp, entry))
        parts = ["errors only"] * self.errors_only + [f"server {self.server_filter}"] * (self.server_filter is not None)
        self.query_one("#trace-title", Static).update(
            "Trace" + (f" ({', '.join(parts)}; /trace all shows every line)" if parts else "")
        )

    def _servers_changed(self) -> None:
        """After an action of the /mcp panel: the configuration and the clients may have changed."""
        if self.context is not None:
            self.board.sync(self.context)
        self.refresh_servers()

    def refresh_servers(self) -> None:
        table = self.query_one("#servers", DataTable)
        table.clear()
        for row in self.board.views():
            mark, color = MARKS[row.status]
            started = time.strftime("%H:%M:%S", time.localtime(row.since)) if row.since else ""
            error = (row.reason or "").replace("\n", " ")
            table.add_row(
                Text.assemble((mark, color), f" {row.kind} {row.name}"),
                Text(row.label, style=color),
                str(row.tool_count) if row.kind == "mcp" and row.status == "ready" else "",
                started,
                Text(
                    error[:40] + ("…" if len(error) > 40 else ""), style="red" if row.status == "failed" else "grey50"
                ),
            )

    def refresh_status(self) -> None:
        resolved = self.resolved
        model = (
            f"{self.settings.provider}/{self.settings.model}"
            if self.settings
            else (resolved.config.model or "no model")
        )
        policy = resolved.config.policy
        parts = [
            f"model {model}",
            f"workspace {resolved.workspace.name}",
            "trusted" if resolved.trusted else "not trusted",
            f"sandbox {policy.sandbox_policy} · approval {policy.approval_policy}",
            f"tokens {self.usage[0]} in / {self.usage[1]} out",
        ]
        if self.context_usage is not None:  # next to the model, where a narrow terminal still shows it
            parts.insert(1, self.context_usage.meter())
        self.query_one("#status-bar", Static).update("  │  ".join(parts))

    # --- the composer -----------------------------------------------------------------------------------------

    def on_composer_completions(self, message: Composer.Completions) -> None:
        menu = self.query_one("#completions", Static)
        menu.set_class(not message.options, "empty")
        if not message.options:
            menu.update("")
            return
        shown = 8
        first = max(0, min(message.highlighted - shown // 2, len(message.options) - shown))
        width = max(len(o.value) for o in message.options[first : first + shown])
        lines = Text()
        for index in range(first, min(first + shown, len(message.options))):
            option = message.options[index]
            style = "reverse" if index == message.highlighted else ""
            lines.append(f"{option.value:<{width}}", style=f"bold {style}".strip())
            if option.note:
                lines.append(f"  {option.note}", style=style or "dim")
            lines.append("\n")
        more = len(message.options) - shown
        lines.append(
            f"{message.highlighted + 1}/{len(message.options)} · ↑↓ choose · Tab takes · Esc closes"
            if more > 0
            else "↑↓ choose · Tab takes · Esc closes",
            style="dim",
        )
        menu.update(lines)

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        text = message.text
        if text.startswith("/"):
            self.command(text)
            return
        self.send(text)

    def send(self, text: str, *, shown: str | None = None) -> bool:
        """``text`` as the user's turn; the conversation shows ``shown`` (a slash command as typed) instead.
        False when no turn can start now (the conversation says why)."""
        conversation = self.query_one(Conversation)
        if self.session is None:
            conversation.notice(
                "no model session: "
                + (self.setup_problem or "the session is still starting")
                + "; /model says how to set one up"
            )
            return False
        if self.turn_running:
            conversation.notice("a turn is running; Ctrl+C cancels it")
            return False
        conversation.user(shown or text)
        self.turn_running = True  # now, not when the worker starts: a second Enter must not start a second turn
        self.run_worker(self._turn(text), name="turn", exit_on_error=False)
        return True

    async def _turn(self, text: str) -> None:
        assert self.session is not None
        try:
            await self.session.run_turn(text)
        except Exception as exc:
            self.query_one(Conversation).notice(f"the turn failed: {exc}")
        finally:
            self.turn_running = False
            self._paths = None  # the turn may have made or removed files: `@` completion walks the workspace again
            self._fill_results()

    async def _compact(self, instructions: str) -> None:
        assert self.session is not None
        self.turn_running = True
        try:
            await self.session.compact(instructions or None)
        except Exception as exc:
            self.query_one(Conversation).notice(f"the compaction failed: {exc}")
        finally:
            self.turn_running = False

    def command(self, text: str) -> None:
        """``/name args``: a built-in command (its ``cmd_`` method, or its panel), else an extension's command."""
        name, _, args = text[1:].strip().partition(" ")
        args = args.strip()
        if name in _PANELS:
            self.action_panel(name)
            return
        if name in BUILTINS:
            getattr(self, "cmd_" + name.replace("-", "_"))(args)
            return
        skills = self.context.skills if self.context is not None else None
        found = find_command(name, skills)
        if found is None:
            problem = (
                unknown_reason(name, skills)
                if self.context is not None
                else f"/{name}: the extensions are still starting; try again in a moment"
            )
            self.query_one(Conversation).notice(problem)
            return
        self.run_command(found, args, text)

    def run_command(self, command: SlashCommand, args: str, typed: str) -> None:
        """An extension's command: its prompt, arguments substituted, sent as the user's turn."""
        from kairox.errors import KairoxError
        from kairox.skills import command_prompt

        context = self.context
        assert context is not None and command.skill is not None
        conversation = self.query_one(Conversation)
        entry = context.skills.require(command.skill)
        try:
            prompt = command_prompt(
                entry.skill, args, registered=lambda: [spec.name for spec in context.registry.tools()]
            )
        except KairoxError as exc:
            conversation.notice(f"/{command.name}: {exc}")  # the error's text ends with its hint
            return
        if self.send(prompt, shown=typed):
            where = (
                entry.skill.path.relative_to(context.resolved.workspace)
                if entry.skill.path.is_relative_to(context.resolved.workspace)
                else entry.skill.path
            )
            conversation.notice(
                f"/{command.skill} ({command.source}, {where}): its prompt is sent, {len(prompt.splitlines())} line(s)"
            )

    # the built-in commands: BUILTINS names them, one method each (or a panel of _PANELS)

    def cmd_help(self, args: str) -> None:
        self.push_screen(TextPanel("Commands", help_text(self.context.skills if self.context is not None else None)))

    def cmd_quit(self, args: str) -> None:
        self.run_worker(self._shutdown(), name="shutdown", exclusive=False)

    def cmd_clear(self, args: str) -> None:
        self.query_one(Conversation).clear()

    def cmd_trace(self, args: str) -> None:
        self.errors_only = args == "errors" or (self.errors_only and args not in ("all", ""))
        self.server_filter = None if args in ("all", "errors", "") else args
        self.refresh_trace()

    def cmd_model(self, args: str) -> None:
        if not args:
            self.push_screen(TextPanel("Model", _reports.model_text(self.settings, self.usage, self.resolved)))
            return
        self.run_worker(self._switch_model(args), name="model", exit_on_error=False)

    async def _switch_model(self, name: str) -> None:
        from kairox.agent import choose_model
        from kairox.errors import KairoxError

        conversation = self.query_one(Conversation)
        if self.session is None:
            conversation.notice(
                "no model session to switch: " + (self.setup_problem or "the session is still starting")
            )
            return
        if self.turn_running:
            conversation.notice("a turn is running; Ctrl+C cancels it, then /model again")
            return
        try:
            # NAME or PROVIDER/NAME as settings, checked by the agent against the configuration
            settings = choose_model(
                self.resolved, name, current_provider=self.settings.provider if self.settings else None
            )
            await self.session.use_model(settings)
        except KairoxError as exc:
            conversation.notice(f"/model {name}: {exc}")  # the error's text ends with its hint
            return
        before = f"{self.settings.provider}/{self.settings.model}" if self.settings else "none"
        self.settings = settings
        from kairox.agent import model_choices

        named = any(choice == f"{settings.provider}/{settings.model}" for choice, _ in model_choices(self.resolved))
        conversation.notice(
            f"model {settings.provider}/{settings.model} for the rest of this session (was {before})"
            + (
                ""
                if named
                else "; it is not named in the configuration: the provider says at the next turn whether it serves it"
            )
        )
        self.refresh_status()

    def cmd_config(self, args: str) -> None:
        self.push_screen(TextPanel("Configuration", _reports.config_text(self.resolved)))

    def cmd_trust(self, args: str) -> None:
        self.push_screen(TextPanel("Trust", _reports.trust_text(self.resolved)))

    def cmd_resume(self, args: str) -> None:
        if args:
            self.run_worker(self._switch_session(args), name="resume", exit_on_error=False)
            return
        if self.context is None:
            self.query_one(Conversation).notice("the extensions are still starting; try again in a moment")
            return
        current = self.session.session_id if self.session is not None else None

        def chosen(session_id: str | None) -> None:
            if session_id is not None and session_id != current:
                self.run_worker(self._switch_session(session_id), name="resume", exit_on_error=False)
            elif session_id is not None:
                self.query_one(Conversation).notice(f"session {session_id} is the one running here")

        self.push_screen(SessionPicker(_reports.session_lines(self.context), current), chosen)

    def cmd_tools(self, args: str) -> None:
        if not args:
            self.action_panel("tools")
        elif self.context is None:
            self.query_one(Conversation).notice("the extensions are still starting; try again in a moment")
        else:
            self.push_screen(TextPanel("Tool search", _reports.tool_search_text(self.context, args)))

    def cmd_compact(self, args: str) -> None:
        conversation = self.query_one(Conversation)
        if self.session is None:
            conversation.notice("no model session to compact")
        elif self.turn_running:
            conversation.notice("a turn is running; /compact after it ends")
        else:
            self.run_worker(self._compact(args), name="compact", exit_on_error=False)

    def cmd_rewind(self, args: str) -> None:
        from kairox.errors import KairoxError

        conversation = self.query_one(Conversation)
        if self.session is None or self.turn_running:
            conversation.notice("no model session, or a turn is running: /rewind between turns")
            return
        session = self.session
        try:
            plan = session.rewind_plan(int(args) if args.strip().isdigit() else None)
        except KairoxError as exc:
            conversation.notice(f"/rewind: {exc}")
            return
        choices = [("files", "put the files back"), ("all", "put the files back and rewind the conversation")]

        def chosen(choice: str | None) -> None:
            if choice is not None:
                self.run_worker(self._rewind(plan.turn, choice == "all"), name="rewind", exit_on_error=False)

        title = "Rewind   ↑↓ choose · Enter rewinds · Esc keeps everything"
        self.push_screen(SessionPicker(choices, title=title, text=plan.text()), chosen)

    async def _rewind(self, turn: int, conversation: bool) -> None:
        assert self.session is not None
        try:
            await self.session.rewind(turn, conversation=conversation)
        except Exception as exc:
            self.query_one(Conversation).notice(f"/rewind: {exc}")

    def action_panel(self, name: str) -> None:
        context = self.context
        if context is None:
            self.query_one(Conversation).notice("the extensions are still starting; try again in a moment")
            return
        if name == "mcp":
            self.push_screen(McpPanel(context, self.board, approver=self.approver, on_change=self._servers_changed))
            return
        toggles = {
            "skills": ("Skills", skill_rows, toggle_skill, "(saved in the user layer)"),
            "agents": ("Agents", agent_rows, toggle_agent, "(the task tool's agents; saved in the user layer)"),
            "plugins": (
                "Plugins",
                plugin_rows,
                toggle_plugin,
                "(saved in the user layer; applies from the next session)",
            ),
        }
        if name in toggles:
            title, rows, toggle, note = toggles[name]
            self.push_screen(
                TogglePanel(title, lambda: rows(context), lambda key, on: toggle(context, key, on), note=note)
            )
            return
        builders: dict[str, tuple[str, Callable[[ExtensionContext], str]]] = {
            "hooks": ("Hooks", _reports.hooks_text),
            "tools": ("Tools", _reports.tools_text),
            "doctor": ("Doctor", _reports.doctor_text),
        }
        title, build = builders[name]
        self.push_screen(TextPanel(title, build(context)))

    # --- keys -------------------------------------------------------------------------------------------------

    def action_errors_only(self) -> None:
        self.errors_only = not self.errors_only
        self.refresh_trace()

    def action_to_composer(self) -> None:
        """Esc: back to the prompt, from anywhere on the main screen."""
        self.query_one(Composer).focus()

    def on_key(self, event: events.Key) -> None:
        """A key typed on the main screen outside the prompt goes into the prompt (no keystroke is lost)."""
        composer = self.query_one(Composer)
        if (
            event.is_printable
            and event.character
            and self.screen is self.screen_stack[0]
            and self.focused is not composer
        ):
            event.stop()
            composer.focus()
            composer.insert(event.character)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("scroll_conversation", "quit_app"):
            # in a panel, keys are the panel's: PageUp/PageDown scroll it, `q` is a letter, none reaches the prompt
            return self.screen is self.screen_stack[0]
        return True

    def action_scroll_conversation(self, direction: int) -> None:
        conversation = self.query_one(Conversation)
        (conversation.scroll_page_down if direction > 0 else conversation.scroll_page_up)(animate=False)

    def action_toggle_tools(self) -> None:
        """Ctrl+O: expand every tool call of the conversation, or collapse them all when one is open."""
        blocks = list(self.query_one(Conversation).blocks.values())
        collapse = any(not block.collapsed for block in blocks)
        for block in blocks:
            block.collapsed = collapse

    def action_interrupt(self) -> None:
        if isinstance(self.screen, ApprovalScreen):
            self.screen.dismiss(ApprovalAnswer.deny("cancelled by the user"))
        if self.turn_running and self.session is not None:
            self.session.cancel()
            self.query_one(Conversation).notice("cancelled; Ctrl+C again quits")
            return
        self.action_quit_app()

    def action_quit_app(self) -> None:
        if isinstance(self.focused, Composer) and self.focused.text and not self._leave.is_set():
            return  # `q` typed in the composer is text, not a command (the composer takes printable keys first)
        self.run_worker(self._shutdown(), name="shutdown", exclusive=False)

    async def _shutdown(self) -> None:
        """Leave the session in its own task (every server stops), then exit."""
        if self.session is not None:
            self.session.cancel()
        self._leave.set()
        if self._start_session:
            with anyio.move_on_after(60):
                await self._left.wait()
        self.exit()


def run_app(options: "RuntimeOptions", resolved: "ResolvedConfig", **kwargs: Any) -> None:
    KairoxApp(options, resolved, **kwargs).run()
