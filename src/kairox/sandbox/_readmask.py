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

Two more ways to the same bytes are closed: the history of every git repository a rule reaches when that history
may hold what the rule hides (``_gitstores``, ``_githistory``) and the other names of a
hidden file (hard links, ``_hardlinks``). What they add is said to the command's caller
(``HiddenPaths.notes``) and, for the built-in tools that read files themselves, by ``MaskedReads.why``.
"""

import os
import tempfile
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kairox._util._filestate import SETTLE_NS
from kairox._util._pathglob import PathPattern, glob_regex, is_within, split_literal
from kairox.sandbox._filesystems import keep_change_times
from kairox.sandbox._githistory import CONTENT_LIMIT, HistoryCheck
from kairox.sandbox._gitstores import content_stores, enclosing_git_entries, git_dir, module_repositories
from kairox.sandbox._hardlinks import Inode, find_links
from kairox.sandbox._profile import HiddenPaths

RuleRef = Hashable
"""What a pattern stands for (the policy's rule reference): named in the reasons, compared, never looked into."""

SEARCH_LIMIT = 100_000
"""Folder entries looked at per command, per search: past it, the command is refused."""
_SKIPPED = frozenset({".git"})
_SHOWN_LINKS = 3
"""Files named in a refusal for other names outside the roots (the rest are counted)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MaskedReads:
    """Everything a read mask worked out: what to hide, and why each extra path is hidden."""

    hidden: HiddenPaths
    linked: Mapping[Inode, tuple[RuleRef, Path]] = field(default_factory=dict)
    """Hidden files with more than one name: the rule, and the name it covers."""
    stores: Mapping[Path, tuple[RuleRef, Path]] = field(default_factory=dict)
    """Repositories' content stores (folders and files): the rule that reaches the repository, and its work tree."""

    def why(self, path: Path) -> str | None:
        """Why the built-in tools must not read ``path`` (resolved) although no rule names it, or None."""
        try:
            info = os.stat(path)
        except OSError:
            info = None
        if info is not None and info.st_nlink > 1:
            found = self.linked.get((info.st_dev, info.st_ino))
            if found is not None:
                return f"{path} is another name (hard link) of {found[1]}, which {found[0]} covers"
        for store, (rule, tree) in self.stores.items():
            if is_within(path, store):
                return (
                    f"{path} holds the history of the git repository at "
                    f"{tree}, which is hidden because {rule} reaches it"
                )
        return None


class ReadMask:
    """What the rules on reading hide, worked out anew each time it is called (as each command starts)."""

    def __init__(self, patterns: tuple[tuple[PathPattern, RuleRef], ...], roots: tuple[Path, ...]) -> None:
        self.patterns = patterns
        self.roots = roots
        self.limit = SEARCH_LIMIT
        self.history = HistoryCheck(patterns)
        """Whether a reached repository's history may hold what the rules hide; its answers last the session."""
        self.searches = _Searches()
        """The last search of the folders, kept while none of the folders it listed changed (see ``_Searches``)."""

    def __call__(self) -> HiddenPaths:
        return self.work_out().hidden

    def elsewhere(self) -> Callable[[Path], str | None]:
        """For one call of a tool that reads files itself: why a file no rule names must not be read (another name
        of a file the rules on reading hide, the history of a repository they reach), or None. The mask is worked
        out at most once, and only for such a file: one with several names, or inside a ``.git`` folder or a
        repository's hidden stores."""
        worked: list[MaskedReads] = []

        def why(path: Path) -> str | None:
            if ".git" not in path.parts:
                try:
                    if os.stat(path).st_nlink < 2 and not worked:
                        return None
                except OSError:
                    return None
            if not worked:
                worked.append(self.work_out())
            return worked[0].why(path)

        return why

    def work_out(self) -> MaskedReads:
        found = _Found()
        _by_rules(found, self.patterns, self.roots, self.limit, self.searches)
        if found.problem is not None:
            return MaskedReads(hidden=HiddenPaths(problem=found.problem))
        stores = _histories(found, self.history)
        linked, links_problem = _other_names(found, self.roots, self.limit)
        store_folders = {s for s in stores if os.path.isdir(s)}
        hidden = HiddenPaths(
            files=tuple(sorted({*found.files, *(set(stores) - store_folders)})),
            folders=tuple(sorted({*found.folders, *store_folders})),
            problem=None if links_problem is None else links_problem[0],
            hint=None if links_problem is None else links_problem[1],
            notes=tuple(found.notes),
        )
        return MaskedReads(hidden=hidden, linked=linked, stores=stores)


@dataclass(slots=True)
class _Found:
    files: dict[Path, RuleRef] = field(default_factory=dict)
    folders: dict[Path, RuleRef] = field(default_factory=dict)
    repos: dict[Path, RuleRef] = field(default_factory=dict)
    """``.git`` entries of the repositories the rules reach."""
    notes: list[str] = field(default_factory=list)
    problem: str | None = None


def mask_for(
    patterns: tuple[tuple[PathPattern, RuleRef], ...], *, workspace: Path, roots: tuple[Path, ...] = ()
) -> ReadMask:
    """The read mask of ``patterns`` (each with the rule it stands for), searched below the workspace and
    ``roots`` as they resolve (not the shared temp folder)."""
    temp = {Path(os.path.realpath(tempfile.gettempdir())), Path("/tmp")}
    found_roots = [workspace, *(r for r in roots if r not in temp)]
    search_roots = tuple(dict.fromkeys(Path(os.path.realpath(r)) for r in found_roots))
    return ReadMask(patterns, search_roots)


@dataclass(slots=True)
class _Search:
    key: tuple[object, ...]
    marks: tuple[tuple[str, int, int, int], ...]
    """Every folder the search listed: its path, device, inode and status change time (ns): it changes with every
    entry added, removed or renamed in the folder, and with its permissions, and no program can set it back."""
    files: dict[Path, RuleRef]
    folders: dict[Path, RuleRef]
    repos: dict[Path, RuleRef]
    problem: str | None


class _Searches:
    """The last search below the roots, reused while what decided it holds: the same starting folders and rules,
    and each folder it listed still the same folder, unchanged since (a folder's status change time moves whenever
    an entry is added, removed or renamed in it, which is all a search reads of it, and cannot be set back). A
    search that listed a folder on a file system that may not keep those times (``keep_change_times``), or met a
    folder it could not list, is not kept (its
    permissions may change). Servers that start one after another in a
    session then search once; a file made anywhere the search looked makes the next start search again."""

    __slots__ = ("kept", "runs")

    def __init__(self) -> None:
        self.kept: _Search | None = None
        self.runs = 0
        """Searches run (not answered from ``kept``)."""

    def reuse(self, key: tuple[object, ...]) -> _Search | None:
        kept = self.kept
        if kept is None or kept.key != key:
            return None
        for folder, dev, ino, changed in kept.marks:
            try:
                info = os.stat(folder, follow_symlinks=False)
            except OSError:
                return None
            if (info.st_dev, info.st_ino, info.st_ctime_ns) != (dev, ino, changed):
                return None
        return kept

    def keep(self, search: _Search, began_ns: int) -> None:
        self.kept = None
        marks: list[tuple[str, int, int, int]] = []
        for folder, *_ in search.marks:
            try:
                info = os.stat(folder, follow_symlinks=False)
            except OSError:
                return
            if info.st_ctime_ns > began_ns - SETTLE_NS:
                return  # changed too recently to tell a later change from it
            marks.append((folder, info.st_dev, info.st_ino, info.st_ctime_ns))
        if not keep_change_times({dev for _, dev, _, _ in marks}):
            return  # a network or user-space file system: its change times may not show a change
        search.marks = tuple(marks)
        self.kept = search


def _by_rules(
    found: _Found,
    patterns: tuple[tuple[PathPattern, RuleRef], ...],
    roots: tuple[Path, ...],
    limit: int,
    searches: _Searches | None = None,
) -> None:
    """What the rules name, into ``found``: the files and folders they cover, and the repositories they reach."""
    files, folders, repos = found.files, found.folders, found.repos
    starts: list[Path] = []
    walked: list[tuple[PathPattern, RuleRef]] = []
    for pattern, ref in patterns:
        if pattern.anywhere:
            starts += roots
            walked.append((pattern, ref))
            for root in roots:
                for git in enclosing_git_entries(root):
                    repos.setdefault(git, ref)
            continue
        literal = Path(split_literal(pattern.glob)[0])  # an anchored glob is absolute: its literal folders
        for git in enclosing_git_entries(literal):  # also when it is gone: the history may still hold it
            repos.setdefault(git, ref)
        if not os.path.lexists(literal):
            continue
        if pattern.matches(literal):  # `secrets/**` covers the folder itself, a literal path is itself
            (folders if os.path.isdir(literal) else files).setdefault(literal, ref)
        elif os.path.isdir(literal) and not os.path.islink(literal):
            starts.append(literal)
            walked.append((pattern, ref))
    if not walked:
        return
    key = (
        tuple(sorted(set(starts))),
        tuple(walked),
        tuple(sorted(folders.items())),
        tuple(sorted(files.items())),
        roots,
        limit,
    )
    kept = None if searches is None else searches.reuse(key)
    if kept is not None:
        files.update(kept.files)
        folders.update(kept.folders)
        for entry, ref in kept.repos.items():
            repos.setdefault(entry, ref)
        found.problem = kept.problem
        return
    before = (dict(files), dict(folders), dict(repos))
    began = time.time_ns()
    listed: list[str] = []
    complete = _search(found, walked, starts, roots, limit, listed)
    if searches is not None and complete:
        searches.runs += 1
        added = [
            {p: r for p, r in now.items() if p not in old}
            for now, old in zip((files, folders, repos), before, strict=True)
        ]
        search = _Search(
            key=key,
            marks=tuple((f, 0, 0, 0) for f in listed),
            files=added[0],
            folders=added[1],
            repos=added[2],
            problem=found.problem,
        )
        searches.keep(search, began)


def _search(
    found: _Found,
    walked: list[tuple[PathPattern, RuleRef]],
    starts: list[Path],
    roots: tuple[Path, ...],
    limit: int,
    listed: list[str],
) -> bool:
    """The search below ``starts`` for what the walked patterns name, into ``found``; ``listed`` receives every
    folder whose entries were read. False when a folder could not be listed."""
    complete = True
    files, folders, repos = found.files, found.folders, found.repos
    named = [(glob_regex(p.glob), ref) for p, ref in walked if p.anywhere]
    anchored = [(glob_regex(p.glob), ref) for p, ref in walked if not p.anywhere]
    seen = 0
    stack = [str(p) for p in sorted(set(starts), key=lambda p: (len(p.parts), str(p)), reverse=True)]
    visited: set[str] = set()
    while stack:
        folder = stack.pop()
        if folder in visited or any(is_within(Path(folder), f) for f in folders):
            continue
        visited.add(folder)
        if Path(folder) in roots:
            around = next((ref for p, ref in walked if p.anywhere and p.matches(Path(folder), any_part=True)), None)
            if around is not None:
                folders[Path(folder)] = around  # a folder on the way to the root has a hidden name: all of it is hidden
                continue
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            complete = False
            continue  # unreadable for Kairox: the command runs as the same user and cannot read it either
        listed.append(folder)
        seen += len(entries)
        if seen > limit:
            found.problem = (
                f"more than {limit} files and folders to search for "
                f"fs.read rules ({', '.join(p.glob for p, _ in walked)})"
            )
            return complete
        for entry in entries:
            name, path = entry.name, entry.path
            if entry.is_symlink():
                if name in _SKIPPED:  # `.git -> ../store/lib.git`: git follows the link to the repository
                    _reach_repository(repos, Path(path), walked)
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            matched = next((r for regex, r in named if regex.match(name)), None) or next(
                (r for regex, r in anchored if regex.match(path)), None
            )
            if matched is not None:
                (folders if is_dir else files).setdefault(Path(path), matched)
            elif name in _SKIPPED:
                _reach_repository(repos, Path(path), walked)
            elif is_dir:
                stack.append(path)
    return complete


def _reach_repository(repos: dict[Path, RuleRef], entry: Path, walked: list[tuple[PathPattern, RuleRef]]) -> None:
    """A repository below a searched folder (its ``.git`` entry): the rules that searched there reach its history."""
    reach = next((r for p, r in walked if p.anywhere or is_within(entry, Path(split_literal(p.glob)[0]))), None)
    if reach is not None:
        repos.setdefault(entry, reach)


def _histories(found: _Found, check: HistoryCheck) -> dict[Path, tuple[RuleRef, Path]]:
    """The content stores of the repositories the rules reach that must be hidden, each with its reason: the
    recorded conflicts and message files always, the history when it may hold what the rules hide (``check``);
    notes into ``found``."""
    stores: dict[Path, tuple[RuleRef, Path]] = {}
    done: set[Path] = set()
    todo: list[tuple[Path, Path, RuleRef]] = []
    for entry, ref in found.repos.items():
        if any(is_within(entry, f) for f in found.folders):
            continue  # inside a hidden folder: hidden whole already
        repo = git_dir(entry)
        if repo is not None:
            todo.append((repo, entry.parent, ref))
    at = 0
    while at < len(
        todo
    ):  # the repositories reached, then their submodules' (after them: a checked-out one is reached as itself)
        repo, tree, ref = todo[at]
        at += 1
        if repo in done:
            continue
        done.add(repo)
        # a submodule's repository stays in .git/modules when it is deinitialized or removed, its history with it
        todo += [(module, tree / name, ref) for name, module in module_repositories(repo)]
        kept = content_stores(repo)
        for path in (*kept.folders, *kept.files):
            stores.setdefault(path, (ref, tree))
        if not kept.history:
            continue
        finding = check(repo, tree, _hidden_files(found, tree, CONTENT_LIMIT + 1))
        if not finding.hide:
            continue
        for path in kept.history:
            stores.setdefault(path, (finding.rule or ref, tree))
        why = (
            "and a repository keeps what it ever held"
            if finding.unchecked is None
            else f"and whether its history holds what the rule hides could not be told: {finding.unchecked}"
        )
        found.notes.append(
            f"the history of the git repository at {tree} is hidden "
            f"({finding.rule or ref} reaches it, {why}): git commands "
            "that read objects (status, log, diff, show, clone) fail here; run them outside the sandbox, or narrow the "
            "rule to paths outside the repository"
        )
    # not into `found.folders` / `found.files`: those are what the rules themselves name (their other names are
    # looked for, and a repository's objects are linked to its origin's by a local clone)
    return stores


def _hidden_files(found: _Found, tree: Path, limit: int) -> dict[Path, RuleRef]:
    """The files the rules hide inside work tree ``tree``, named or inside a hidden folder (at most ``limit``)."""
    files = {f: r for f, r in found.files.items() if is_within(f, tree)}
    stack = [(str(f), r) for f, r in found.folders.items() if is_within(f, tree)]
    while stack and len(files) < limit:
        folder, ref = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIPPED:
                    stack.append((entry.path, ref))
            elif entry.is_file(follow_symlinks=False):
                files.setdefault(Path(entry.path), ref)
    return files


def _other_names(
    found: _Found, roots: tuple[Path, ...], limit: int
) -> tuple[dict[Inode, tuple[RuleRef, Path]], tuple[str, str | None] | None]:
    """Hides the other names of the files the rules cover (into ``found``); the linked files with their rule, and
    (problem, hint) when a name could not be found."""
    search = find_links(found.files, found.folders, roots, limit=limit)
    if search.problem is not None:
        rules = sorted({str(r) for r in (*found.files.values(), *found.folders.values())})
        return {}, (f"{search.problem} ({', '.join(rules)})", None)
    linked: dict[Inode, tuple[RuleRef, Path]] = {}
    missing: list[str] = []
    for inode, link in sorted(search.linked.items(), key=lambda item: sorted(item[1].names)):
        names = sorted(link.names)
        covered = next(((n, _rule_for(found, n)) for n in names if _rule_for(found, n) is not None), None)
        if covered is None:
            continue
        name, ref = covered
        assert ref is not None
        linked[inode] = (ref, name)
        others = [n for n in names if n != name and _rule_for(found, n) is None]
        for other in others:
            found.files[other] = ref
        if others:
            found.notes.append(
                f"{', '.join(map(str, others))}: another name (hard link) "
                f"of {name}, which {ref} covers, so it is hidden too"
            )
        if len(names) < link.links:
            missing.append(f"{name} ({ref}) has {link.links - len(names)} other name(s)")
    if not missing:
        return linked, None
    shown = "; ".join(missing[:_SHOWN_LINKS]) + (
        f"; and {len(missing) - _SHOWN_LINKS} more" if len(missing) > _SHOWN_LINKS else ""
    )
    return linked, (
        f"{shown} outside the workspace and the writable roots (hard links), where a command could read it",
        "remove those other names (`find / -xdev -samefile FILE` lists them) or cover them with fs.read rules too",
    )


def _rule_for(found: _Found, path: Path) -> RuleRef | None:
    ref = found.files.get(path)
    if ref is not None:
        return ref
    return next((r for folder, r in found.folders.items() if is_within(path, folder)), None)
