"""``@path`` imports in memory files (``CLAUDE.md``, ``AGENTS.md``): a line's ``@docs/style.md`` brings that
file's text in, the way those hosts read them.

An import is expanded only when the file lies inside the workspace and the read rules let ``fs.read`` read it;
imports nest up to :data:`MAX_IMPORT_DEPTH` levels, and a file is brought in once. Whatever is not expanded is
replaced by a short note that says why, so the model sees that something was left out.
"""

import os
import re
from collections.abc import Callable
from pathlib import Path

MAX_IMPORT_DEPTH = 5
"""Levels of imports followed from a memory file (the file itself is level 0)."""

Unreadable = Callable[[Path], str | None]
"""Why the read rules keep a file from being read (the rule), or None."""

# `@` at the start of a line or after a space, then a path (no spaces); not an e-mail address, not in code spans
_IMPORT = re.compile(r"(?:(?<=\s)|^)@((?:~/|\.{1,2}/|/)?[\w.\-/]+\w)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def expand_imports(text: str, file: Path, *, workspace: Path, unreadable: Unreadable | None = None) -> str:
    """``text`` (of ``file``) with each ``@path`` import replaced by the imported file's text (nested imports
    expanded too), or by a note saying why it was not read."""
    real_workspace = Path(os.path.realpath(workspace))
    return _expand(text, file, real_workspace, unreadable, depth=1, seen={os.path.realpath(file)})


def _expand(
    text: str, file: Path, workspace: Path, unreadable: Unreadable | None, *, depth: int, seen: set[str]
) -> str:
    lines: list[str] = []
    in_code = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        if in_code or "@" not in line:
            lines.append(line)
            continue
        # `@decorator` in backquotes is code, not an import: hide its @ from the pattern, then put it back
        masked = re.sub(r"`[^`]*`", lambda m: m.group(0).replace("@", "\0"), line)
        expanded = _IMPORT.sub(lambda m: _one(m.group(1), file, workspace, unreadable, depth=depth, seen=seen), masked)
        lines.append(expanded.replace("\0", "@"))
    return "\n".join(lines)


def _one(name: str, file: Path, workspace: Path, unreadable: Unreadable | None, *, depth: int, seen: set[str]) -> str:
    raw = Path(name).expanduser()
    target = raw if raw.is_absolute() else file.parent / raw
    if not target.suffix and not target.is_file():
        return "@" + name  # a handle or a word, not a file
    real = Path(os.path.realpath(target))
    if real != workspace and workspace not in real.parents:
        return f"[@{name} not imported: it is outside the workspace]"
    refusal = unreadable(real) if unreadable is not None else None
    if refusal is not None:
        return f"[@{name} not imported: the read rules refuse it ({refusal})]"
    if str(real) in seen:
        return f"[@{name} already imported above]"
    if depth > MAX_IMPORT_DEPTH:
        return f"[@{name} not imported: imports nest at most {MAX_IMPORT_DEPTH} levels]"
    try:
        imported = real.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as exc:
        return f"[@{name} not imported: {exc.strerror or exc}]"
    seen.add(str(real))
    return _expand(imported, real, workspace, unreadable, depth=depth + 1, seen=seen)
