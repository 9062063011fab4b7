"""An edit as a unified diff: what ``fs.write`` or ``fs.edit`` would change in the workspace's file, computed from
the file as it is now and the call's arguments, shown in the approval dialog and in the conversation."""

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text

EDIT_TOOLS = ("fs.write", "fs.edit")
MAX_FILE_BYTES = 1_000_000
"""Larger files are not read for a diff (the dialog shows the arguments instead)."""
MAX_DIFF_LINES = 400
_STYLES = ((("+++", "---"), "bold"), ("+", "green"), ("-", "red"), ("@@", "cyan"))
"""A diff line's style by how it starts, the first that fits: file names, additions, removals, hunk headers."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EditDiff:
    path: str
    """As the workspace names it (``shop/cart.py``)."""
    text: str = ""
    """The unified diff; empty when the call changes nothing (or there is a ``problem``)."""
    added: int = 0
    removed: int = 0
    created: bool = False
    problem: str | None = None
    """Why there is no diff (``old_string`` not found, the file too large ...): the call will say so too."""

    @property
    def stats(self) -> str:
        return "new file" if self.created else f"+{self.added} −{self.removed}"


def _target(arguments: Any, workspace: Path) -> Path | None:
    path = arguments.get("path") if isinstance(arguments, dict) else None
    if not isinstance(path, str) or not path:
        return None
    root = workspace.resolve()
    target = (root / Path(path).expanduser()).resolve()
    return target if target.is_relative_to(root) else None  # outside the workspace the tool refuses: nothing to show


def edit_diff(tool: str, arguments: Any, workspace: Path) -> EditDiff | None:
    """The diff an ``fs.write`` / ``fs.edit`` call would make, or ``None`` for other calls and paths outside
    ``workspace``."""
    if tool not in EDIT_TOOLS:
        return None
    target = _target(arguments, workspace)
    if target is None:
        return None
    shown = target.relative_to(workspace.resolve()).as_posix()
    exists = target.is_file()
    if exists and target.stat().st_size > MAX_FILE_BYTES:
        return EditDiff(path=shown, problem=f"{shown} is larger than {MAX_FILE_BYTES // 1000} kB: no diff shown")
    try:
        old = target.read_text(encoding="utf-8", errors="replace") if exists else ""
    except OSError as exc:
        return EditDiff(path=shown, problem=f"{shown} cannot be read: {exc.strerror or exc}")
    if tool == "fs.write":
        new = arguments.get("content")
        if not isinstance(new, str):
            return None
    else:
        before, after = arguments.get("old_string"), arguments.get("new_string")
        if not isinstance(before, str) or not isinstance(after, str) or not before:
            return None
        count = old.count(before)
        if count == 0 or (count > 1 and not arguments.get("replace_all")):
            problem = (
                "old_string is not in the file"
                if count == 0
                else f"old_string occurs {count} times (replace_all is not set)"
            )
            return EditDiff(path=shown, problem=f"{shown}: {problem}; the edit will fail")
        new = old.replace(before, after) if arguments.get("replace_all") else old.replace(before, after, 1)
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile="/dev/null" if not exists else f"a/{shown}",
            tofile=f"b/{shown}",
        )
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return EditDiff(path=shown, text=text, added=added, removed=removed, created=not exists)


def diff_text(diff: EditDiff) -> Text:
    """The diff coloured: additions green, removals red, hunk headers cyan; cut after ``MAX_DIFF_LINES``."""
    out = Text()
    if diff.problem is not None:
        out.append(diff.problem + "\n", style="yellow")
        return out
    if not diff.text:
        out.append(f"{diff.path}: no change\n", style="dim")
        return out
    lines = diff.text.splitlines()
    for line in lines[:MAX_DIFF_LINES]:
        style = next((style for prefix, style in _STYLES if line.startswith(prefix)), "")
        out.append(line + "\n", style=style)
    if len(lines) > MAX_DIFF_LINES:
        out.append(f"… {len(lines) - MAX_DIFF_LINES} more lines\n", style="dim")
    return out
