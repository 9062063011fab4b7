"""Paths a command must not change to give later sessions more authority (Y7), found at any depth."""

import asyncio
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kairox.sandbox._gitstores import common_dir

PROTECTED_DIRS = frozenset(
    {".git", ".kairox", ".claude", ".codex", ".agents", ".kairox-plugin", ".claude-plugin", ".codex-plugin"}
)
"""The repository, Kairox's and other hosts' project folders, and plugin manifest folders."""
PROTECTED_FILES = frozenset({"kairox.toml", ".mcp.json", "hooks.json", ".lsp.json"})
"""Project configuration, and a plugin's hooks and servers."""
SHELL_RC_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".inputrc",
        "config.fish",
    }
)
"""Start-up files of shells: a write there runs code in every future terminal;
kept read-only in every sandbox, as the gate always asks before a write there (with ``~/.config/fish``)."""
MAX_WALKED_FOLDERS = 200_000
"""A walk stops here; what lies beyond is covered by trust pins, not by the sandbox."""
_SOCKET_DEPTH = 2


def protected_inside(roots: Iterable[Path]) -> set[Path]:
    """Every protected folder and file under ``roots``, at any depth (symlinks are neither followed nor listed),
    and the repository folders that ``.git`` symlinks and ``gitdir:`` files there lead to (``.git`` files too).

    Protected folders are not walked into: they are kept read-only whole.
    """
    roots = tuple(roots)
    found: set[Path] = set()
    walked = 0
    for root in sorted(set(roots), key=lambda p: len(p.parts)):
        if any(root == f or f in root.parents for f in found):
            continue
        for folder, dirs, files in os.walk(root):
            walked += 1
            if walked > MAX_WALKED_FOLDERS:
                return found
            here = Path(folder)
            keep = []
            for name in dirs:
                path = here / name
                if os.path.islink(path):
                    if name == ".git":  # `.git -> store/project.git`: the repository is kept where it lies
                        found.update(_linked_repository(path, roots))
                    continue
                if name in PROTECTED_DIRS:
                    found.add(path)
                else:
                    keep.append(name)
            dirs[:] = sorted(keep)
            found.update(
                here / name
                for name in files
                if (name in PROTECTED_FILES or name in SHELL_RC_FILES) and not os.path.islink(here / name)
            )
            if here.name == ".config" and "fish" in dirs:
                found.add(here / "fish")
                dirs.remove("fish")
            if (
                ".git" in files
            ):  # a `gitdir:` file (a linked worktree, a submodule, --separate-git-dir) and where it points
                if not os.path.islink(here / ".git"):
                    found.add(here / ".git")
                found.update(_linked_repository(here / ".git", roots))
    return found


def _linked_repository(entry: Path, roots: Iterable[Path]) -> list[Path]:
    """The repository folders a ``.git`` symlink or ``gitdir:`` file leads to: that folder and the common one it
    shares with other worktrees (hooks and config are there); none that holds a root (a link to the workspace
    itself must not make it read-only) or that is not a repository."""
    real = Path(os.path.realpath(entry))
    if real.is_file():
        try:
            text = real.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        if not text.startswith("gitdir:"):
            return []
        real = Path(os.path.realpath(entry.parent / text.removeprefix("gitdir:").strip()))
    found: list[Path] = []
    for folder in (real, common_dir(real)):
        if (
            (folder / "HEAD").is_file()
            and not any(r == folder or folder in r.parents for r in roots)
            and folder not in found
        ):
            found.append(folder)
    return found


def sockets_under(folder: Path, depth: int = _SOCKET_DEPTH) -> list[Path]:
    """Unix sockets in ``folder`` and its sub-folders down to ``depth`` (an ssh agent's, tmux's, X11's)."""
    found: list[Path] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        # the kind the folder listing gives (no system call): only an entry that is neither a folder, a file nor
        # a link is looked at closer (the listing's kind is unknown on some file systems: then DirEntry asks)
        try:
            if entry.is_dir(follow_symlinks=False):
                if depth > 1:
                    found += sockets_under(Path(entry.path), depth - 1)
                continue
            if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                continue
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISSOCK(mode):
            found.append(Path(entry.path))
    return found


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfigurationWatch:
    """The protected paths under ``roots`` (``protected_roots``) when a command or debuggee started: what it creates
    there cannot be refused by the sandbox, so it is found afterwards and reported (trust pins keep it inert)."""

    roots: tuple[Path, ...] = ()
    before: frozenset[Path] = frozenset()

    @classmethod
    async def start(cls, roots: Iterable[Path]) -> "ConfigurationWatch":
        roots = tuple(roots)
        return cls(roots=roots, before=frozenset(await asyncio.to_thread(protected_inside, roots)))

    async def created(self) -> list[Path]:
        return sorted(await asyncio.to_thread(protected_inside, self.roots) - self.before) if self.roots else []


def created_note(created: Iterable[Path], what: str = "the program") -> str:
    """What ``what`` created (``ConfigurationWatch.created``), told to the model."""
    return (
        f"[{what} created project configuration: {', '.join(map(str, created))}; "
        "Kairox does not act on it until the user reviews it with `kairox trust`]"
    )
