"""/skills and /plugins: a list of things that can be turned on or off (Space or e), the highlighted one's details
beside it. A toggle is written with the functions ``kairox skills enable`` and ``kairox plugins disable`` use,
into the user layer."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from kairox.errors import KairoxError

if TYPE_CHECKING:
    from kairox.runtime import ExtensionContext


@dataclass(frozen=True, kw_only=True, slots=True)
class ToggleRow:
    key: str
    label: str
    enabled: bool
    state: str
    """What the row's state means (``offered``, ``hidden: shadowed by ...``)."""
    detail: str


def skill_rows(context: "ExtensionContext") -> list[ToggleRow]:
    """Every skill by scope (the shadowed duplicates too, each saying what wins over it)."""
    rows = []
    for entry in sorted(context.skills.entries(include_shadowed=True), key=lambda e: (str(e.skill.scope), e.skill.qualified_name)):
        skill = entry.skill
        detail = [f"{skill.qualified_name} [{skill.scope}]", str(skill.path), "", skill.description or ""]
        if entry.shadowed:
            detail += ["", "shadows:"] + [f"  [{s.scope}] {s.path}" for s in entry.shadowed]
        if entry.shadowed_by is not None:
            detail += ["", f"shadowed by [{entry.shadowed_by.scope}] {entry.shadowed_by.path}"]
        rows.append(
            ToggleRow(
                key=skill.qualified_name, label=f"[{skill.scope}] {skill.qualified_name}", enabled=entry.enabled,
                state="offered" if entry.offered else f"hidden: {entry.hidden_reason}", detail="\n".join(detail),
            )
        )
    return rows


def toggle_skill(context: "ExtensionContext", name: str, enabled: bool) -> Path:
    from kairox.skills import EnableScope, persist_enabled

    file = persist_enabled(context.resolved, name, enabled, EnableScope.USER)
    context.skills.set_enabled(name, enabled)
    return file


def plugin_rows(context: "ExtensionContext") -> list[ToggleRow]:
    """Each plugin, then each of its contributions (``plugin/kind:name``)."""
    rows = []
    for plugin in context.plugins.plugins:
        compat = "compatible" if plugin.compatibility.compatible else "incompatible: " + "; ".join(plugin.compatibility.reasons)
        detail = f"{plugin.name} {plugin.manifest.version or ''}\n{plugin.root}\norigin {plugin.origin}, trust {plugin.trust}\n{compat}"
        rows.append(
            ToggleRow(
                key=plugin.name, label=plugin.name, enabled=plugin.enabled,
                state="active" if plugin.enabled and plugin.compatibility.compatible else plugin.disabled_reason or ("disabled" if not plugin.enabled else "inactive"),
                detail=detail,
            )
        )
        for item in plugin.contributions():
            rows.append(
                ToggleRow(
                    key=f"{plugin.name}/{item.key}", label=f"  {item.key}", enabled=item.enabled, state="on" if item.enabled else "off",
                    detail="\n".join(x for x in (f"{item.key} of plugin {plugin.name}", item.path or "", item.detail or "") if x),
                )
            )
    return rows


def toggle_plugin(context: "ExtensionContext", key: str, enabled: bool) -> Path:
    from kairox.config import Layer
    from kairox.plugins import set_contribution_enabled, set_plugin_enabled

    file = context.resolved.layer_file(Layer.USER)
    plugin, _, contribution = key.partition("/")
    if contribution:
        set_contribution_enabled(file, plugin, contribution, enabled)
    else:
        set_plugin_enabled(file, plugin, enabled)
    return file


class TogglePanel(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "close"),
        Binding("q", "dismiss", "close", show=False),
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
            yield Static(f"{self.panel_title}   Space/e on-off · Esc close   {self.note}", classes="panel-title", markup=False)
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

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
