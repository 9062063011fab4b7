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
    real_root = root.resolve()
    found: list[tuple[Path, Path]] = []
    seen = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            seen += 1
            entry = Path(folder) / name
            if entry.is_symlink():
                target = entry.resolve()
                if not is_inside(target, real_root):
                    found.append((entry, target))
        if seen > max_entries:
            break
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
    return found
