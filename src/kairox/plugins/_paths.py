"""Paths a plugin names: ``${KAIROX_PLUGIN_ROOT}`` expansion and the rule that every path stays inside."""

import os
import re
from pathlib import Path

ROOT_VARIABLES = ("KAIROX_PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT", "PLUGIN_ROOT")
"""Variables that expand to the plugin's folder in paths, commands, args and env values."""

_ROOT_VAR = re.compile(r"\$\{(" + "|".join(ROOT_VARIABLES) + r")\}|\$(" + "|".join(ROOT_VARIABLES) + r")\b")


class PluginPathError(ValueError):
    """A path named by a plugin leaves the plugin folder (``..``, an absolute path, an escaping symlink)."""


def expand_plugin_root(text: str, root: Path) -> str:
    """Replace ``${KAIROX_PLUGIN_ROOT}`` (and the Claude Code and short spellings) with ``root``."""
    return _ROOT_VAR.sub(lambda _: str(root), text)


_PATH_TAIL = re.compile(r"[^\s\"';|&<>`()]*")


def climbing_root_paths(text: str, root: Path) -> list[str]:
    """Paths in ``text`` that start at a plugin-root variable and lead out of ``root`` (``${ROOT}/../x``)."""
    base = Path(os.path.normpath(root))
    found: list[str] = []
    for match in _ROOT_VAR.finditer(text):
        tail = _PATH_TAIL.match(text, match.end())
        rest = tail.group(0) if tail else ""
        if not is_inside(Path(os.path.normpath(str(base) + rest)), base):
            found.append(match.group(0) + rest)
    return found


def is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def resolve_inside(root: Path, relative: str) -> Path:
    """The real path of ``relative`` under ``root``; raises :class:`PluginPathError` when it leaves ``root``.

    ``relative`` may start with a plugin-root variable. ``..`` segments are refused outright (even when they
    would come back inside), absolute paths are refused unless they name a place inside the plugin, and a
    symlink anywhere on the way must point inside the plugin.
    """
    real_root = root.resolve()
    text = expand_plugin_root(relative, real_root).strip()
    if not text:
        raise PluginPathError("empty path")
    if "\x00" in text:
        raise PluginPathError(f"{relative!r} contains a NUL byte, which no file name can hold")
    candidate = Path(text)
    if ".." in candidate.parts:
        raise PluginPathError(f"{relative!r} uses '..'; plugin paths must stay inside the plugin folder")
    if candidate.is_absolute():
        if not is_inside(Path(os.path.normpath(candidate)), real_root):
            raise PluginPathError(f"{relative!r} is outside the plugin folder")
        target = candidate
    else:
        target = real_root / candidate
    resolved = target.resolve()
    if not is_inside(resolved, real_root):
        raise PluginPathError(f"{relative!r} resolves to {resolved}, outside the plugin folder (symlink)")
    return resolved


def escaping_symlinks(root: Path, *, max_entries: int = 20_000) -> list[tuple[Path, Path]]:
    """Symlinks under ``root`` whose target lies outside it, as ``(link, target)`` pairs.

    Symlinked folders are not followed; the walk stops after ``max_entries`` entries.
    """
    real_root = os.path.realpath(root)
    prefix = real_root.rstrip(os.sep) + os.sep
    found: list[tuple[Path, Path]] = []
    stack = [str(root)]
    seen = 0
    while stack and seen <= max_entries:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if target != real_root and not target.startswith(prefix):
                            found.append((Path(entry.path), Path(target)))
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return sorted(found)
