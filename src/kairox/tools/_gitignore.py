"""Enough of ``.gitignore`` to list and search a workspace the way git sees it."""

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kairox._util._glob import glob_to_regex

ALWAYS_SKIPPED = frozenset({".git"})


def compile_glob(glob: str) -> re.Pattern[str]:
    """A path glob (``src/**/*.py``) as a regex over ``/``-separated relative paths."""
    return re.compile(glob_to_regex(glob.lstrip("/")) + r"\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    base: str
    """Folder of the .gitignore, relative to the walk's root ('' at the root)."""


def _parse(text: str, base: str) -> list[_Pattern]:
    patterns = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        line = line.removeprefix("\\")
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = glob_to_regex(line.lstrip("/"))
        regex = re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.DOTALL)
        patterns.append(_Pattern(regex=regex, negated=negated, dir_only=dir_only, base=base))
    return patterns


class GitIgnore:
    """Ignore patterns of a tree: the root's ``.git/info/exclude`` and every ``.gitignore`` met on the way."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._patterns: list[_Pattern] = []
        exclude = root / ".git" / "info" / "exclude"
        if exclude.is_file():
            self._patterns += _parse(exclude.read_text(errors="replace"), "")

    def load(self, folder_rel: str) -> None:
        file = self.root / folder_rel / ".gitignore"
        if file.is_file():
            self._patterns += _parse(file.read_text(errors="replace"), folder_rel)

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        if rel.rsplit("/", 1)[-1] in ALWAYS_SKIPPED:
            return True
        verdict = False
        for pattern in self._patterns:
            if pattern.dir_only and not is_dir:
                continue
            if pattern.base:
                if not rel.startswith(pattern.base + "/"):
                    continue
                local = rel[len(pattern.base) + 1 :]
            else:
                local = rel
            if pattern.regex.match(local):
                verdict = not pattern.negated
        return verdict


def walk_files(root: Path, *, respect_gitignore: bool = True, ignore_root: Path | None = None) -> Iterator[str]:
    """Paths of files under ``root``, relative to it with ``/``, in sorted order, ignored ones left out.

    With ``ignore_root`` (the workspace) above ``root``, the ``.gitignore`` files between the two apply too.
    """
    ignore = None
    prefix = ""
    if respect_gitignore:
        base = root
        if ignore_root is not None and ignore_root != root and ignore_root in root.parents:
            base = ignore_root
            prefix = root.relative_to(ignore_root).as_posix()
        ignore = GitIgnore(base)
        if prefix:
            parts = prefix.split("/")
            for depth in range(len(parts)):
                ignore.load("/".join(parts[:depth]))
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root).replace(os.sep, "/")
        rel_folder = "" if rel_folder == "." else rel_folder
        seen_folder = "/".join(p for p in (prefix, rel_folder) if p)
        if ignore is not None:
            ignore.load(seen_folder)

        def keep(name: str, is_dir: bool, seen_folder: str = seen_folder) -> bool:
            if name in ALWAYS_SKIPPED:
                return False
            rel = f"{seen_folder}/{name}" if seen_folder else name
            return ignore is None or not ignore.ignored(rel, is_dir=is_dir)

        dirs[:] = sorted(d for d in dirs if keep(d, True))
        for name in sorted(files):
            if keep(name, False):
                yield f"{rel_folder}/{name}" if rel_folder else name
