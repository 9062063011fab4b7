"""What ``fs.read`` deny and ask rules hide from sandboxed commands (``shell.exec``, plugin command tools, hooks).

A command cannot be asked about mid-run, so ask rules hide as deny rules do (fail closed). Each rule's path pattern
is listed as the files and folders it covers that exist when a command starts:

- a pattern whose literal folder it covers whole (``secrets/**``, ``~/.ssh/**``) or a literal path: that path,
  without any search;
- any other anchored glob (``config/*.key``, ``**/.env``): a search below its literal folder;
- a name glob (``*.pem``, ``.env``): a search of the workspace and the configured writable roots (not the shared
  temp folder: see ``protected_roots`` of the sandbox).

Searches skip ``.git`` folders, follow no symlink (a link is not what a rule names: it is hidden where it points)
and stop after ``SEARCH_LIMIT`` entries in all; past it the list may be incomplete and the command is refused.
"""

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from kairox.policy._paths import PathPattern, glob_regex, is_within, split_literal
from kairox.policy._rules import RuleAction, RuleLike, parse_rule
from kairox.tools import HiddenPaths

SEARCH_LIMIT = 100_000
"""Folder entries looked at per command, over every search: past it, the command is refused."""
_SKIPPED = frozenset({".git"})


def read_mask(
    rules: tuple[RuleLike, ...], *, workspace: Path, home: Path, roots: tuple[Path, ...] = ()
) -> Callable[[], HiddenPaths] | None:
    """What the rules on reading hide, as a function run when each command starts; None when no ``fs.read``
    deny or ask rule names a path (the common case: nothing to work out)."""
    patterns: list[PathPattern] = []
    for rule in rules:
        try:
            parsed = parse_rule(rule)
        except ValueError:
            continue  # the engine reports it
        if parsed.tool == "fs.read" and parsed.specifier is not None and parsed.ref.action is not RuleAction.ALLOW:
            patterns.append(PathPattern.parse(parsed.specifier, base=workspace, home=home))
    if not patterns:
        return None
    temp = {Path(os.path.realpath(tempfile.gettempdir())), Path("/tmp")}
    found_roots = [workspace, *(r for r in roots if r not in temp)]
    search_roots = tuple(dict.fromkeys(Path(os.path.realpath(r)) for r in found_roots))
    found = tuple(dict.fromkeys(patterns))
    return lambda: hidden_paths(found, search_roots)


def hidden_paths(patterns: tuple[PathPattern, ...], roots: tuple[Path, ...], *, limit: int = SEARCH_LIMIT) -> HiddenPaths:
    """The existing files and folders ``patterns`` cover: by name below ``roots``, anchored ones where they point."""
    files: set[Path] = set()
    folders: set[Path] = set()
    starts: list[Path] = []
    walked: list[PathPattern] = []
    for pattern in patterns:
        if pattern.anywhere:
            starts += roots
            walked.append(pattern)
            continue
        literal = Path(split_literal(pattern.glob)[0])  # an anchored glob is absolute: its literal folders
        if not os.path.lexists(literal):
            continue
        if pattern.matches(literal):  # `secrets/**` covers the folder itself, a literal path is itself
            (folders if os.path.isdir(literal) else files).add(literal)
        elif os.path.isdir(literal) and not os.path.islink(literal):
            starts.append(literal)
            walked.append(pattern)
    if not walked:
        return HiddenPaths(files=tuple(sorted(files)), folders=tuple(sorted(folders)))
    named = [glob_regex(p.glob) for p in walked if p.anywhere]
    anchored = [glob_regex(p.glob) for p in walked if not p.anywhere]
    seen = 0
    stack = [str(p) for p in sorted(set(starts), key=lambda p: (len(p.parts), str(p)), reverse=True)]
    visited: set[str] = set()
    while stack:
        folder = stack.pop()
        if folder in visited or any(is_within(Path(folder), f) for f in folders):
            continue
        visited.add(folder)
        if Path(folder) in roots and any(p.anywhere and p.matches(Path(folder), any_part=True) for p in walked):
            folders.add(Path(folder))  # a folder on the way to the root has a hidden name: all of it is hidden
            continue
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue  # unreadable for Kairox: the command runs as the same user and cannot read it either
        seen += len(entries)
        if seen > limit:
            return HiddenPaths(
                problem=f"more than {limit} files and folders to search for fs.read rules ({', '.join(p.glob for p in walked)})"
            )
        for entry in entries:
            if entry.is_symlink():
                continue
            name, path = entry.name, entry.path
            is_dir = entry.is_dir(follow_symlinks=False)
            if any(r.match(name) for r in named) or any(r.match(path) for r in anchored):
                (folders if is_dir else files).add(Path(path))
            elif is_dir and name not in _SKIPPED:
                stack.append(path)
    return HiddenPaths(files=tuple(sorted(files)), folders=tuple(sorted(folders)))

