"""Panels over the main screen: a read-only text panel, and /mcp, which acts on the running servers through the
runtime's operations (the same ones every front end uses). A toggle that writes into a file of an untrusted
workspace asks first, through the approval dialog, as the GUI and the command line do."""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from kairox.errors import KairoxError
from kairox.tui._servers import MARKS

if TYPE_CHECKING:
    from kairox.policy import Approver
    from kairox.runtime import ExtensionContext, ServerBoard


class TextPanel(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__(classes="panel")
        self.panel_title, self.text = title, text

    def compose(self) -> ComposeResult:
        with Vertical(classes="panel-box"):
            yield Static(f"{self.panel_title}   (Esc closes)", classes="panel-title", markup=False)
            with VerticalScroll():
                yield Static(self.text, markup=False, id="panel-text")


class SessionPicker(ModalScreen[str | None]):
    """/resume: the workspace's earlier sessions, newest first; Enter continues the highlighted one, Esc closes.
    /rewind: the same with what a rewind would do (``text``) and its two choices."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "close")]

    def __init__(
        self,
        sessions: list[tuple[str, str]],
        current: str | None = None,
        *,
        title: str = "Resume a session   ↑↓ choose · Enter resumes · Esc closes",
        text: str = "",
    ) -> None:
        """``sessions``: ``(id, line)`` newest first."""
        super().__init__(classes="panel")
        self.sessions, self.current, self.title_text, self.text = sessions, current, title, text

    def compose(self) -> ComposeResult:
        with Vertical(classes="panel-box"):
            yield Static(self.title_text, classes="panel-title", markup=False)
            if self.text:
                yield Static(self.text, id="picker-text", markup=False)
            if not self.sessions:
                yield Static("No earlier sessions in this workspace.", id="picker-empty", markup=False)
            yield OptionList(
                *(
                    Option(line + ("   (this session)" if sid == self.current else ""), id=sid)
                    for sid, line in self.sessions
                ),
                id="sessions",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class McpPanel(ModalScreen[None]):
    """Servers on the left; the highlighted one's details, stderr tail and tools on the right.
    r restarts it, e turns it on or off, t turns the highlighted tool on or off (both written to its config layer,
    after asking ``approver`` when that file is one of an untrusted workspace)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "close"),
        Binding("r", "restart", "restart"),
        Binding("e", "toggle_server", "enable/disable"),
        Binding("t", "toggle_tool", "tool on/off"),
        Binding("tab", "switch", "servers/tools", show=False),
    ]

    def __init__(
        self,
        context: "ExtensionContext",
        board: "ServerBoard",
        *,
        approver: "Approver",
        on_change: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(classes="panel")
        self.context = context
        self.board = board
        self.approver = approver
        self.on_change = on_change
        self.selected: str | None = None
        self.status_line = ""
        self.busy: str | None = None
        """The action running now (restart, enable ...), or None."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="panel-box"):
            yield Static(
                "MCP servers   r restart · e enable/disable · t tool on/off · Tab servers/tools · Esc close",
                classes="panel-title",
                markup=False,
            )
            with Horizontal():
                yield DataTable(id="mcp-servers", cursor_type="row", zebra_stripes=False)
                with VerticalScroll(id="mcp-detail"):
                    yield Static("", id="mcp-info", markup=False)
                    yield DataTable(id="mcp-tools", cursor_type="row")
            yield Static("", id="mcp-status", markup=False)

    def on_mount(self) -> None:
        servers = self.query_one("#mcp-servers", DataTable)
        servers.add_columns("server", "status", "tools")
        tools = self.query_one("#mcp-tools", DataTable)
        tools.add_columns("on", "tool")
        self.refresh_servers()
        servers.focus()

    def _names(self) -> list[str]:
        return [view.name for view in self.board.views("mcp") if self.context.mcp_config(view.name) is not None]

    def refresh_servers(self) -> None:
        table = self.query_one("#mcp-servers", DataTable)
        keep = table.cursor_row
        table.clear()
        for name in self._names():
            view = self.board.get("mcp", name)
            assert view is not None
            mark, color = MARKS[view.status]
            table.add_row(
                f"[{color}]{mark}[/] {name}",
                view.label,
                str(view.tool_count) if view.status == "ready" else "",
                key=name,
            )
        if self._names():
            table.move_cursor(row=min(keep, len(self._names()) - 1))
            self.selected = self._names()[table.cursor_row]
        self.refresh_detail()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "mcp-servers" and event.row_key.value:
            self.selected = str(event.row_key.value)
            self.refresh_detail()

    def refresh_detail(self) -> None:
        info = self.query_one("#mcp-info", Static)
        tools = self.query_one("#mcp-tools", DataTable)
        tools.clear()
        if self.selected is None or self.context.mcp_config(self.selected) is None:
            info.update("No MCP servers are configured." if not self._names() else "")
            return
        view = self.board.get("mcp", self.selected)
        if view is None:
            info.update("")
            return
        lines = [
            f"{view.name}: {view.label}",
            f"transport: {view.transport}   {view.target}",
            f"declared at: {view.origin.where() if view.origin is not None else 'unknown'}",
        ]
        if view.reason:
            lines.append(f"reason: {view.reason}")
        tail = (view.stderr_tail or "").strip().splitlines()[-8:]
        lines.append("stderr (last lines):" if tail else "stderr: (empty)")
        lines += [f"  {line}" for line in tail]
        if view.confinement_text:
            lines.append(view.confinement_text)
        if self.status_line:
            lines += ["", self.status_line]
        info.update("\n".join(lines))
        for tool in view.tools:
            tools.add_row("[green]✓[/]" if tool.enabled else "[grey50]✗[/]", tool.name, key=tool.name)

    def action_switch(self) -> None:
        servers, tools = self.query_one("#mcp-servers", DataTable), self.query_one("#mcp-tools", DataTable)
        (tools if servers.has_focus else servers).focus()

    def _act(self, what: str, work: Callable[[], Awaitable[object]]) -> None:
        """Run ``work`` in a worker, one at a time: it may wait for a server or for the approval dialog, and a key
        handler that waited would hold this screen's messages (and its answer) back."""
        if self.busy is not None:
            self.status_line = f"{what}: wait until {self.busy} is finished"
            self.refresh_detail()
            return
        self.busy = what
        self.status_line = f"{what}: …"
        self.refresh_detail()
        self.run_worker(self._run(what, work), name=what, exit_on_error=False)

    async def _run(self, what: str, work: Callable[[], Awaitable[object]]) -> None:
        try:
            result = await work()
            self.status_line = f"{what}: done" + (f" (saved in {result})" if result else "")
        except (KairoxError, ValueError, TimeoutError) as exc:
            self.status_line = f"{what}: {exc}"
        finally:
            self.busy = None
        if self.on_change is not None:
            self.on_change()
        else:
            self.board.sync(self.context)
        self.refresh_servers()

    def action_restart(self) -> None:
        from kairox.runtime import restart_mcp_server

        if self.selected is not None:
            name = self.selected
            self._act(f"restart {name}", lambda: restart_mcp_server(self.context, name))

    async def _write(self, name: str, change: str, write: Callable[[Path], Awaitable[Path]]) -> Path:
        """``write`` into the file of the layer that declares server ``name``, once the write is authorized: a
        refusal raises before any byte is written."""
        from kairox.runtime import authorize_config_write, server_layer_file

        file = server_layer_file(self.context.resolved, "mcp_servers", name)
        await authorize_config_write(self.context.resolved, file, change, approver=self.approver)
        return await write(file)

    def action_toggle_server(self) -> None:
        from kairox.runtime import set_mcp_server_enabled

        config = None if self.selected is None else self.context.mcp_config(self.selected)
        if self.selected is not None and config is not None:
            name = self.selected
            enable = not config.enabled
            change = f"mcp_servers.{name}.enabled = {str(enable).lower()}"
            self._act(
                f"{'enable' if enable else 'disable'} {name}",
                lambda: self._write(
                    name, change, lambda file: set_mcp_server_enabled(self.context, name, enable, file=file)
                ),
            )

    def action_toggle_tool(self) -> None:
        from kairox.runtime import set_mcp_tool_enabled

        tools = self.query_one("#mcp-tools", DataTable)
        config = None if self.selected is None else self.context.mcp_config(self.selected)
        if self.selected is None or config is None or tools.row_count == 0:
            return
        tool = str(tools.coordinate_to_cell_key(tools.cursor_coordinate).row_key.value)
        name = self.selected
        enable = tool in (config.disabled_tools or [])
        change = f"mcp_servers.{name}.disabled_tools: {tool} {'enable' if enable else 'disable'}d"
        self._act(
            f"{'enable' if enable else 'disable'} tool {tool}",
            lambda: self._write(
                name, change, lambda file: set_mcp_tool_enabled(self.context, name, tool, enable, file=file)
            ),
        )

    async def action_dismiss(self, result: None = None) -> None:
        if self.busy is not None:  # closing would cancel the worker halfway through a write or a restart
            self.status_line = f"{self.busy}: still running; Esc closes the panel once it is finished"
            self.refresh_detail()
            return
        self.dismiss(None)
