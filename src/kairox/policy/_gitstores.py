"""Where a git repository keeps file contents, for read rules: a rule that hides ``secrets/key`` must also hide the
repository's history, or ``git show HEAD:secrets/key`` (or zlib on ``.git/objects``) prints what it was.

Which repositories: those whose work tree holds a path a rule names (whether the path exists now or not: a file
removed and ignored may still be in the history), those whose work tree holds the workspace or a searched root when a
name rule (``**/.env``) applies there, and those found inside the searched folders. No cheap test tells that a
history holds no such path (a blob added and then reset leaves no name behind), so every one of them is hidden whole.

What is hidden: the object store (loose objects, packs, and the stores it borrows from through
``objects/info/alternates``), Git LFS objects, rerere's recorded conflicts, the patches of a rebase or ``git am``
in progress, and the message files a commit or merge leaves behind (``git commit -v`` keeps the diff there) - for
the repository and each of its linked worktrees. ``HEAD``, refs and the index stay, so git still finds the
repository and its commands that need objects fail ("bad object HEAD") rather than find another repository above.
"""

import os
from pathlib import Path

_STORE_FOLDERS = ("objects", "lfs", "rr-cache")
"""Kept once per repository (in its common folder)."""
_STATE_FOLDERS = ("rebase-apply", "rebase-merge")
_STATE_FILES = ("COMMIT_EDITMSG", "MERGE_MSG", "SQUASH_MSG", "TAG_EDITMSG")
"""Kept per worktree (the main one and each in ``worktrees/``)."""
_ALTERNATES_DEPTH = 5
"""Git itself follows alternates five levels deep."""


def git_dir(entry: Path) -> Path | None:
    """The repository folder a ``.git`` entry stands for: the folder itself, or where a ``.git`` file points
    (linked worktrees and submodules); None when it is neither."""
    if entry.is_dir() and not entry.is_symlink():
        return Path(os.path.realpath(entry))
    try:
        text = entry.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(os.path.realpath(entry.parent / text.removeprefix("gitdir:").strip()))
    return target if target.is_dir() else None


def enclosing_git_entries(path: Path) -> list[Path]:
    """The ``.git`` entries of every repository whose work tree holds ``path`` (nested ones too), from the nearest
    existing folder up to ``/``."""
    found: list[Path] = []
    folder = path
    while not os.path.isdir(folder) and folder != folder.parent:
        folder = folder.parent
    for at in (folder, *folder.parents):
        if os.path.lexists(at / ".git"):
            found.append(at / ".git")
    return found


def content_stores(repo: Path) -> tuple[list[Path], list[Path]]:
    """The existing (folders, files) of repository folder ``repo`` that hold file contents (see the module)."""
    common = repo
    try:
        pointer = (repo / "commondir").read_text(encoding="utf-8", errors="replace").strip()
        common = Path(os.path.realpath(repo / pointer))
    except OSError:
        pass  # a main worktree's repository is its own common folder
    folders = [common / name for name in _STORE_FOLDERS]
    folders += _alternates(common / "objects")
    worktrees = [repo, common]
    try:
        worktrees += [p for p in (common / "worktrees").iterdir() if p.is_dir()]
    except OSError:
        pass
    for tree in dict.fromkeys(worktrees):
        folders += [tree / name for name in _STATE_FOLDERS]
    files = [tree / name for tree in dict.fromkeys(worktrees) for name in _STATE_FILES]
    real_folders = [Path(os.path.realpath(f)) for f in folders if os.path.isdir(f)]
    return list(dict.fromkeys(real_folders)), [f for f in files if os.path.isfile(f) and not os.path.islink(f)]


def _alternates(objects: Path) -> list[Path]:
    """The object stores ``objects`` borrows from, and theirs in turn."""
    found: list[Path] = []
    todo = [(objects, 0)]
    while todo:
        store, depth = todo.pop()
        if depth >= _ALTERNATES_DEPTH:
            continue
        try:
            lines = (store / "info" / "alternates").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            other = Path(os.path.realpath(store / line.strip('"')))  # relative entries are relative to the store
            if other not in found and other.is_dir():
                found.append(other)
                todo.append((other, depth + 1))
    return found
