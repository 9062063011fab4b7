"""/skills and /plugins: a list of things that can be turned on or off (Space or e), the highlighted one's details
beside it. The rows and the toggles are the runtime's (every front end shares them); a toggle is written into the
user layer."""

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from kairox.errors import KairoxError
from kairox.runtime import ToggleRow


class TogglePanel(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "close"),
        Binding("space", "flip", "on/off"),
        Binding("e", "flip", "on/off", show=False),
    ]

    def __init__(
        self, title: str, rows: Callable[[], list[ToggleRow]], toggle: Callable[[str, bool], Path], *, note: str = ""
    ) -> None:
        super().__init__(classes="panel")
        self.panel_title, self.rows, self.toggle, self.note = title, rows, toggle, note
        self.changed: dict[str, bool] = {}
        """Toggles of this panel that apply from the next session (the row shows them already)."""
        self.status_line = ""
        self._current: list[ToggleRow] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="panel-box"):
            yield Static(
                f"{self.panel_title}   Space/e on-off · Esc close   {self.note}", classes="panel-title", markup=False
            )
            with Horizontal():
                yield DataTable(id="toggle-rows", cursor_type="row")
                with VerticalScroll(id="toggle-detail"):
                    yield Static("", id="toggle-info", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#toggle-rows", DataTable)
        table.add_columns("on", "name", "state")
        self.refresh_rows()
        table.focus()

    def refresh_rows(self) -> None:
        table = self.query_one("#toggle-rows", DataTable)
        keep = table.cursor_row
        table.clear()
        self._current = self.rows()
        for row in self._current:
            on = self.changed.get(row.key, row.enabled)
            state = row.state if row.key not in self.changed else ("on" if on else "off") + " (saved)"
            table.add_row("[green]✓[/]" if on else "[grey50]✗[/]", row.label, state, key=row.key)
        if self._current:
            table.move_cursor(row=min(keep, len(self._current) - 1))
        self.refresh_detail()

    def _highlighted(self) -> ToggleRow | None:
        table = self.query_one("#toggle-rows", DataTable)
        return self._current[table.cursor_row] if self._current and 0 <= table.cursor_row < len(self._current) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.refresh_detail()

    def refresh_detail(self) -> None:
        row = self._highlighted()
        text = row.detail if row is not None else "Nothing here."
        self.query_one("#toggle-info", Static).update(text + (f"\n\n{self.status_line}" if self.status_line else ""))

    def action_flip(self) -> None:
        row = self._highlighted()
        if row is None:
            return
        enabled = not self.changed.get(row.key, row.enabled)
        try:
            file = self.toggle(row.key, enabled)
            self.changed[row.key] = enabled
            self.status_line = f"{'enabled' if enabled else 'disabled'} {row.key} in {file}"
        except (KairoxError, ValueError) as exc:
            self.status_line = f"{row.key}: {exc}"
        self.refresh_rows()
