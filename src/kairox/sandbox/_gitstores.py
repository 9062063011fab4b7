"""Where a git repository keeps file contents, for read rules: a rule that hides ``secrets/key`` must also hide the
repository's history, or ``git show HEAD:secrets/key`` (or zlib on ``.git/objects``) prints what it was.

Which repositories: those whose work tree holds a path a rule names (whether the path exists now or not: a file
removed and ignored may still be in the history), those whose work tree holds the workspace or a searched root when a
name rule (``**/.env``) applies there, and those found inside the searched folders.

What is hidden of each: always rerere's recorded conflicts, the patches of a rebase or ``git am`` in progress, and
the message files a commit or merge leaves behind (``git commit -v`` keeps the diff there), which no git command
that reads the repository needs; and the history itself - the object store (loose objects, packs, and the stores
it borrows from through ``objects/info/alternates``) and Git LFS objects - only when it may hold what a rule hides
(``_githistory`` tells). That is for the repository and each of its linked worktrees, and for the repositories of
its submodules kept in its ``modules`` folder (a deinitialized or
removed submodule's stays there). ``HEAD``, refs and the index
stay, so git still finds the repository and its commands that need objects fail ("bad object HEAD") rather than
find another repository above.
"""

import os
from dataclasses import dataclass
from pathlib import Path

_HISTORY_FOLDERS = ("objects", "lfs")
"""Kept once per repository (in its common folder): the history, hidden only when it may hold a hidden path."""
_STORE_FOLDERS = ("rr-cache",)
"""Kept once per repository too: recorded conflicts, hidden whenever a rule reaches the repository."""
_STATE_FOLDERS = ("rebase-apply", "rebase-merge")
_STATE_FILES = ("COMMIT_EDITMSG", "MERGE_MSG", "SQUASH_MSG", "TAG_EDITMSG")
"""Kept per worktree (the main one and each in ``worktrees/``)."""
_MODULES_LIMIT = 1_000
"""Submodule repositories looked at per repository."""
_ALTERNATES_DEPTH = 5
"""Git itself follows alternates five levels deep."""


def git_dir(entry: Path) -> Path | None:
    """The repository folder a ``.git`` entry stands for: the folder itself (or the one a symlink leads to), or
    where a ``.git`` file points (linked worktrees and submodules); None when it is neither."""
    if entry.is_dir():  # a folder, or a symlink to one (`.git -> ../store/project.git`): git follows the link
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


@dataclass(frozen=True, kw_only=True, slots=True)
class ContentStores:
    """The existing folders and files of a repository that hold file contents (see the module)."""

    history: tuple[Path, ...]
    """The object stores and LFS objects: hidden when the history may hold what a rule hides."""
    folders: tuple[Path, ...]
    files: tuple[Path, ...]
    """Always hidden when a rule reaches the repository."""


def common_dir(repo: Path) -> Path:
    """The folder that holds what the worktrees of repository folder ``repo`` share (objects, refs)."""
    try:
        pointer = (repo / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return repo  # a main worktree's repository is its own common folder
    return Path(os.path.realpath(repo / pointer))


def worktree_dirs(repo: Path) -> list[Path]:
    """The repository folders of every worktree sharing ``repo``'s history: ``repo``, the main one, the linked ones."""
    common = common_dir(repo)
    found = [repo, common]
    try:
        found += sorted(p for p in (common / "worktrees").iterdir() if p.is_dir())
    except OSError:
        pass
    return list(dict.fromkeys(found))


def content_stores(repo: Path) -> ContentStores:
    """The existing stores of repository folder ``repo`` that hold file contents (see the module)."""
    common = common_dir(repo)
    history = [common / name for name in _HISTORY_FOLDERS]
    history += alternates(common / "objects")
    worktrees = worktree_dirs(repo)
    folders = [common / name for name in _STORE_FOLDERS]
    folders += [tree / name for tree in worktrees for name in _STATE_FOLDERS]
    files = [tree / name for tree in worktrees for name in _STATE_FILES]

    def real(found: list[Path]) -> tuple[Path, ...]:
        return tuple(dict.fromkeys(Path(os.path.realpath(f)) for f in found if os.path.isdir(f)))

    return ContentStores(
        history=real(history),
        folders=real(folders),
        files=tuple(f for f in files if os.path.isfile(f) and not os.path.islink(f)),
    )


def module_repositories(repo: Path) -> list[tuple[str, Path]]:
    """The repositories of ``repo``'s submodules kept in its ``modules`` folder, with their names (a name is the
    submodule's path unless it was given another): checked out, deinitialized or removed alike. A submodule's own
    submodules are in its repository folder, found when that one is looked at."""
    top = common_dir(repo) / "modules"
    found: list[tuple[str, Path]] = []
    todo = [top]
    while todo and len(found) < _MODULES_LIMIT:
        folder = todo.pop()
        try:
            entries = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            continue
        for entry in entries:
            if (entry / "HEAD").is_file() and (entry / "objects").is_dir():
                found.append((str(entry.relative_to(top)), Path(os.path.realpath(entry))))
            else:  # a name with a slash (`vendor/lib`)
                todo.append(entry)
    return found


def alternates(objects: Path) -> list[Path]:
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
