"""The composer: a multi-line prompt (Enter sends, Ctrl+J or Shift+Enter breaks the line), Up/Down through
earlier prompts, and a completion menu that opens as you type ``/`` (the commands) or ``@`` (the workspace's
files): Up/Down choose, Tab (or Enter) takes the chosen one, Esc closes it."""

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache"}


def workspace_paths(root: Path, limit: int = 5000) -> list[str]:
    """Relative paths of the workspace's files and folders (folders end in ``/``), without VCS and caches."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        rel = Path(folder).relative_to(root)
        for name in dirs:
            found.append(f"{(rel / name).as_posix()}/")
        for name in sorted(files):
            found.append((rel / name).as_posix())
        if len(found) >= limit:
            break
    return found


def path_matches(word: str, paths: Sequence[str], limit: int = 200) -> list[str]:
    """Paths for ``@word``: those starting with it, then those with a part starting with it, then containing it."""
    lowered = word.lower()
    starts = [p for p in paths if p.lower().startswith(lowered)]
    if not word:
        return starts[:limit]
    parts = [p for p in paths if p not in starts and any(part.startswith(lowered) for part in p.lower().split("/"))]
    inside = [p for p in paths if lowered in p.lower() and p not in starts and p not in parts]
    return (starts + parts + inside)[:limit]


@dataclass(frozen=True, slots=True)
class Option:
    """One line of the completion menu: the text it puts in place of the word, and what it says."""

    value: str
    note: str = ""


class Composer(TextArea):
    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Completions(Message):
        """The menu changed: its options (empty: closed) and the highlighted one."""

        def __init__(self, options: list[Option], highlighted: int) -> None:
            super().__init__()
            self.options = options
            self.highlighted = highlighted

    def __init__(self, paths: Callable[[], list[str]], commands: Callable[[], list[Option]], **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]
        self.prompts: list[str] = []
        self._index: int | None = None
        self._paths = paths
        self._commands = commands
        self.options: list[Option] = []
        self.highlighted = 0
        self._word = ""
        self._closed_at: str | None = None
        """The text when Esc closed the menu: it stays closed until the text changes."""

    # --- the menu ---------------------------------------------------------------------------------------------

    def _current_word(self) -> tuple[str, str] | None:
        """``("/", word)`` for a command being typed, ``("@", word)`` for a path, else ``None``."""
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        word = line.split(" ")[-1] if line else ""
        if row == 0 and word == line and word.startswith("/"):
            return "/", word
        if word.startswith("@"):
            return "@", word
        return None

    def refresh_menu(self) -> None:
        current = None if self.text == self._closed_at else self._current_word()
        options: list[Option] = []
        if current is not None:
            kind, word = current
            self._word = word
            if kind == "/":
                typed = word[1:].lower()
                every = self._commands()
                options = [o for o in every if o.value[1:].lower().startswith(typed)]
                options += [o for o in every if typed and typed in o.value[1:].lower() and o not in options]
            else:
                options = [
                    Option("@" + p) for p in path_matches(word[1:], self._paths()) if p != word[1:]
                ]  # a folder taken: its files
        if [o.value for o in options] != [o.value for o in self.options]:
            self.highlighted = 0
        self.options = options
        self.post_message(self.Completions(options, self.highlighted))

    def close_menu(self) -> None:
        self._closed_at = self.text
        self.options = []
        self.post_message(self.Completions([], 0))

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self.text != self._closed_at:
            self._closed_at = None
        self.refresh_menu()

    def _move(self, step: int) -> None:
        self.highlighted = (self.highlighted + step) % len(self.options)
        self.post_message(self.Completions(self.options, self.highlighted))

    def take(self) -> str:
        """Put the highlighted option in place of the word; a command gets a space after it, a folder stays open."""
        chosen = self.options[self.highlighted].value
        row, column = self.cursor_location
        self.replace(chosen + ("" if chosen.endswith("/") else " "), (row, column - len(self._word)), (row, column))
        return chosen

    # --- keys -------------------------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        menu = bool(self.options)
        if menu and (key in ("up", "down", "tab", "escape") or (key == "enter" and self._word.startswith("@"))):
            event.stop()
            event.prevent_default()
            if key in ("up", "down"):
                self._move(-1 if key == "up" else 1)
            elif key == "escape":
                self.close_menu()
            else:
                self.take()
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            if menu and self._word.startswith("/") and self.text.strip() == self._word:
                self.take()  # Enter on a command being typed runs the highlighted one
            text = self.text.strip()
            if text:
                self.prompts.append(text)
                self._index = None
                self.load_text("")
                self.close_menu()
                self._closed_at = None
                self.post_message(self.Submitted(text))
            return
        if key in ("ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "tab":
            event.stop()
            event.prevent_default()
            return  # nothing to complete: Tab stays in the prompt
        if key == "up" and self.cursor_location[0] == 0 and self.prompts:
            event.stop()
            event.prevent_default()
            self._index = len(self.prompts) - 1 if self._index is None else max(0, self._index - 1)
            self.load_text(self.prompts[self._index])
            self.close_menu()
            return
        if key == "down" and self._index is not None and self.cursor_location[0] == self.document.line_count - 1:
            event.stop()
            event.prevent_default()
            self._index += 1
            if self._index >= len(self.prompts):
                self._index = None
                self.load_text("")
            else:
                self.load_text(self.prompts[self._index])
            self.close_menu()
            return
        await super()._on_key(event)
