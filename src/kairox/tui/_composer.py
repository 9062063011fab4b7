"""The composer: a multi-line prompt (Enter sends, Ctrl+J or Shift+Enter breaks the line), Up/Down through
earlier prompts, Tab completing ``/`` commands and ``@file`` paths of the workspace."""

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

COMMANDS: dict[str, str] = {
    "/mcp": "MCP servers: details, stderr, restart, enable/disable, tools",
    "/skills": "skills by scope, shadowing, enable/disable",
    "/plugins": "plugins: inventory, contributions, compatibility, trust",
    "/hooks": "configured hooks and plugin hooks",
    "/tools": "what the model sees, and why others are hidden; /tools QUERY searches them",
    "/doctor": "what failed to load and what to do",
    "/config": "the effective configuration with provenance",
    "/trust": "the workspace's trust state",
    "/model": "the model and provider of this session",
    "/trace": "filter the event trace: /trace errors | /trace NAME | /trace all",
    "/clear": "clear the conversation (the transcript keeps it)",
    "/compact": "summarise older turns to free the context window: /compact [what the summary should keep]",
    "/resume": "earlier sessions of this workspace; /resume ID continues one",
    "/quit": "leave",
}

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


def complete(word: str, candidates: Sequence[str]) -> tuple[str, list[str]]:
    """The longest common extension of ``word`` among ``candidates`` that start with it, and those candidates."""
    matches = [c for c in candidates if c.startswith(word)]
    if not matches:
        return word, []
    return os.path.commonprefix(matches), matches  # noqa: RUF071 (completion extends text, not path parts)


class Composer(TextArea):
    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Completions(Message):
        def __init__(self, options: list[str]) -> None:
            super().__init__()
            self.options = options

    def __init__(self, paths: Callable[[], list[str]], **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]
        self.prompts: list[str] = []
        self._index: int | None = None
        self._paths = paths

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text.strip()
            if text:
                self.prompts.append(text)
                self._index = None
                self.load_text("")
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
            self._complete()
            return
        if key == "up" and self.cursor_location[0] == 0 and self.prompts:
            event.stop()
            event.prevent_default()
            self._index = len(self.prompts) - 1 if self._index is None else max(0, self._index - 1)
            self.load_text(self.prompts[self._index])
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
            return
        await super()._on_key(event)

    def _complete(self) -> None:
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        word = line.split(" ")[-1] if line else ""
        if row == 0 and word == line and word.startswith("/"):
            extended, options = complete(word, sorted(COMMANDS))
        elif word.startswith("@"):
            extended, options = complete(word[1:], self._paths())
            extended = "@" + extended
        else:
            return
        if len(extended) > len(word):
            self.insert(extended[len(word) :])
        self.post_message(self.Completions(options[:12] + ([f"… {len(options) - 12} more"] if len(options) > 12 else [])))
