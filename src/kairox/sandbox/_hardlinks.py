"""Other names of the files read rules hide: a hard link made before the rule (``ln secrets/key notes.txt``) is the
same file under a name no rule covers, so it is hidden too.

The hidden files and every file inside the hidden folders are looked at (their link count); those with more than one
name are looked for by inode in the workspace and the configured roots, the same roots the name rules search
(``.git`` folders included: a link can be made anywhere a command can read). A name found there is hidden with the
file; a name that is not found lies elsewhere on the machine, where a command could read it through the read-only
root: the command is refused (fail closed), and the reason says which file and what to do.
"""

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kairox._util._pathglob import is_within

Inode = tuple[int, int]
"""``(st_dev, st_ino)``: what names the same file."""


@dataclass(slots=True)
class Linked:
    """A hidden file with more than one name."""

    links: int
    """Its link count: how many names it has in all."""
    names: set[Path] = field(default_factory=set)
    """The names found so far."""


@dataclass(slots=True)
class LinkSearch:
    """The outcome: the linked files by inode, and why the search stopped short (or None)."""

    linked: dict[Inode, Linked] = field(default_factory=dict)
    problem: str | None = None


def find_links(files: Iterable[Path], folders: Iterable[Path], roots: Iterable[Path], *, limit: int) -> LinkSearch:
    """The files among ``files`` and inside ``folders`` that have other names, with every name found in ``roots``."""
    folders = tuple(folders)
    search = LinkSearch()
    for file in files:
        _note(search, file)
    # not their repositories' objects: a local clone links those to its origin's, which is a copy of the history
    # like any other clone (the history is hidden for what it holds, see _gitstores)
    seen = _walk(folders, lambda path, _: _note(search, Path(path)), skip=(), skip_names=(".git",), limit=limit)
    if seen is None:
        search.problem = f"more than {limit} files in the folders they hide to check for other names (hard links)"
        return search
    if not search.linked:
        return search  # the common case: no hidden file has another name, nothing more to look at
    wanted = {ino for _, ino in search.linked}

    def found(path: str, inode: int) -> None:
        if inode in wanted:
            _note(search, Path(path), only_known=True)

    if _walk(tuple(roots), found, skip=folders, limit=limit) is None:
        search.problem = (
            f"more than {limit} files and folders to search for other names (hard links) of the files they hide"
        )
    return search


def _note(search: LinkSearch, path: Path, *, only_known: bool = False) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return
    key = (info.st_dev, info.st_ino)
    linked = search.linked.get(key)
    if linked is None:
        if only_known:
            return
        linked = search.linked[key] = Linked(links=info.st_nlink)
    linked.names.add(path)


def _walk(
    starts: tuple[Path, ...],
    visit: Callable[[str, int], None],
    *,
    skip: tuple[Path, ...],
    skip_names: tuple[str, ...] = (),
    limit: int,
) -> int | None:
    """Calls ``visit(path, inode)`` for each file below ``starts`` (no symlink followed, nothing inside ``skip`` or
    in a folder named one of ``skip_names``); the number of entries looked at, or None past ``limit``."""
    seen = 0
    stack = [str(s) for s in starts if os.path.isdir(s) and not os.path.islink(s)]
    visited: set[str] = set()
    while stack:
        folder = stack.pop()
        if folder in visited or any(is_within(Path(folder), s) for s in skip):
            continue
        visited.add(folder)
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue  # unreadable for Kairox, and for a command run as the same user
        seen += len(entries)
        if seen > limit:
            return None
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in skip_names:
                    stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                visit(entry.path, entry.inode())  # the inode comes with the listing: no stat per file
    return seen
