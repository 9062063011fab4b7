"""Whether a repository's history may hold what read rules hide: only then is it hidden (``_gitstores``), so that
``fs.read(**/.env)`` on a never-committed, ignored ``.env`` leaves ``git status``, ``diff`` and ``log`` working.

The history may hold a hidden path when git can name it there (the path, or a path inside a hidden folder, or one
matching a name rule, checked with the rules' own matcher against paths relative to the work tree):

- in the index of any worktree of the repository (``git ls-files``);
- in any commit reachable from a ref (another worktree's own refs too, such as ``refs/bisect/*``), a worktree's
  ``HEAD``, the reflogs (the stash's older entries among them) or
  the state files of a merge, rebase or bisect (``ORIG_HEAD``, ``FETCH_HEAD`` ...): ``git rev-list --all --reflog``
  and every path each of those commits adds, changes or removes (``git diff-tree -r -m --root``: a root commit
  against the empty tree, a merge against each parent, no rename detection, so a file renamed to a hidden name is
  seen under that name), or in a tree a ref names;
- or when the current content of a hidden file is in the object store by its id (a secret ``git add``-ed then
  ``git reset``: no name is left, the blob is), as it is or with CRLF line ends made LF as git stores them, or
  among the Git LFS objects.

Fail closed, the history is hidden, when the check cannot answer: git is missing or fails (a corrupt repository, one
git refuses to read), a ref names a blob (content with no name), grafts rewrite what a walk sees, objects are
borrowed from other stores (``objects/info/alternates``: their histories are not walked), another worktree keeps
its own refs in a reftable (binary: not read), ``git am``
patches wait in ``rebase-apply``, more than ``CONTENT_LIMIT`` hidden files (or
``_CONTENT_BYTES``) to look up, or the check runs past its
time budget (``HISTORY_BUDGET``, for all its git commands together: a history too long to walk). Replace refs are
ignored (``GIT_NO_REPLACE_OBJECTS``): the replaced commits are walked as stored, and the replacements as refs. A
shallow clone is walked like any other: the commits past its boundary are not in it, and any left there anyway are
unreachable objects (below).

What it cannot see: an earlier content of a hidden file that no commit, index or ref names any more (added then
reset, then changed; a dropped stash or an expired reflog before ``git gc``) is still in the object store, where
only a scan of every unreachable object could find it, and nothing says whose content it was.

Only plumbing commands run, with no pager, hook, filter, signature check, fsmonitor or transport (a partial clone's
missing objects are not fetched), so a repository's own configuration - a command may have written it, in a
repository it made - cannot make the check run a program. The answer is kept per repository with a fingerprint of what
could change it (``HEAD``, the index, refs, packed refs, reflogs, grafts, the object folders, the hidden files), so a
session walks a history once, not per command: the statuses prove nothing changed only once they had settled
(``kairox._util._filestate``), so the check runs again while any of them is newer than that.
"""

import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kairox._util._filestate import SETTLE_NS, state_of
from kairox._util._pathglob import PathPattern, is_within, split_literal
from kairox.sandbox._gitstores import alternates, common_dir, worktree_dirs

HISTORY_BUDGET = 2.0
"""Seconds the check of one repository may take, all its git commands together; past it the history is hidden."""
CONTENT_LIMIT = 1_000
"""Hidden files whose content is looked up in the object store; more and the history is hidden."""
_CONTENT_BYTES = 64 << 20
"""Bytes of those files, all together; more and the history is hidden."""
_STATE_REFS = (
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_HEAD",
    "AUTO_MERGE",
)
"""Files in a worktree's repository folder that name commits (or a tree) outside the refs."""
_WORKTREE_REFS = ("refs/bisect", "refs/worktree", "refs/rewritten")
"""Refs each worktree keeps for itself (in its own repository folder; the main worktree's in the common one)."""
RuleRef = Hashable
"""What a pattern stands for (the policy's rule reference), named in the findings."""
_OBJECT_ID = re.compile(rb"^([0-9a-f]{40}|[0-9a-f]{64})\b", re.MULTILINE)
_SAFE_CONFIG = (
    "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "log.showSignature=false",
    "-c", "protocol.allow=never",  # a partial clone's missing object is not fetched (through its own sshCommand ...)
)  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class HistoryFinding:
    """What the check found about one repository's history."""

    hide: bool
    rule: RuleRef | None = None
    """The rule covering a path the history holds (None when it holds none, or could not be checked)."""
    unchecked: str | None = None
    """Why the history could not be checked (it is hidden: fail closed), or None."""

    @classmethod
    def holds(cls, rule: RuleRef) -> "HistoryFinding":
        return cls(hide=True, rule=rule)

    @classmethod
    def cannot_tell(cls, reason: str) -> "HistoryFinding":
        return cls(hide=True, unchecked=reason)


CLEAR = HistoryFinding(hide=False)

_Fingerprint = tuple[tuple[str, tuple[int, ...] | None], ...]


class _UncheckedError(Exception):
    """The check cannot answer (its reason says why): the history is hidden."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HistoryCheck:
    """Tells, for the rules of one read mask, whether a repository's history may hold what they hide; answers are
    kept until what could change them changes (see the module)."""

    def __init__(self, patterns: tuple[tuple[PathPattern, RuleRef], ...]) -> None:
        self.patterns = patterns
        self.budget = HISTORY_BUDGET
        self.walks = 0
        """Checks run (not answered from the cache): what a session paid."""
        self.settle_ns = SETTLE_NS
        self._kept: dict[tuple[Path, Path], tuple[_Fingerprint, HistoryFinding]] = {}

    def __call__(self, repo: Path, tree: Path, hidden_files: Mapping[Path, RuleRef] | None = None) -> HistoryFinding:
        """Whether the history of repository folder ``repo`` (work tree ``tree``) may hold a hidden path;
        ``hidden_files`` are the files the rules hide now, with their rule (those inside ``tree`` are looked up by
        content)."""
        files = {f: r for f, r in sorted((hidden_files or {}).items()) if is_within(f, tree)}
        key = (repo, tree)
        mark, settled = _fingerprint(repo, tuple(files), self.settle_ns)
        kept = self._kept.get(key)
        if kept is not None and kept[0] == mark:
            return kept[1]
        self.walks += 1
        finding = self._check(repo, tree, files)
        if settled:
            self._kept[key] = (mark, finding)
        else:
            self._kept.pop(key, None)
        return finding

    def _check(self, repo: Path, tree: Path, files: Mapping[Path, RuleRef]) -> HistoryFinding:
        git = shutil.which("git")
        if git is None:
            return HistoryFinding.cannot_tell("git is not installed, so its history could not be checked")
        common = common_dir(repo)
        if (common / "info" / "grafts").exists():
            return HistoryFinding.cannot_tell("grafts (info/grafts) change what a walk of its history sees")
        if alternates(common / "objects"):
            return HistoryFinding.cannot_tell(
                "it borrows objects from other stores (objects/info/alternates), whose histories are not walked"
            )
        if any((d / "rebase-apply").exists() for d in worktree_dirs(repo)):
            return HistoryFinding.cannot_tell(
                "patches of a `git am` or rebase (rebase-apply) may not be in its history yet"
            )
        run = _Git(git, repo, tree, deadline=time.monotonic() + self.budget, budget=self.budget)
        try:
            found = self._by_content(run, common, files)
            if found is None:
                found = self._by_name(run, repo, tree)
        except _UncheckedError as exc:
            return HistoryFinding.cannot_tell(exc.reason)
        return CLEAR if found is None else HistoryFinding.holds(found)

    def _by_content(self, run: "_Git", common: Path, files: Mapping[Path, RuleRef]) -> RuleRef | None:
        """The rule of a hidden file whose current content is in the object store (or among the LFS objects)."""
        if len(files) > CONTENT_LIMIT:
            raise _UncheckedError(f"more than {CONTENT_LIMIT} hidden files in its work tree to look up in its history")
        ids: dict[str, Path] = {}
        size = 0
        for file in files:
            try:
                size += os.stat(file).st_size
                if size > _CONTENT_BYTES:
                    raise _UncheckedError(
                        f"its hidden files hold more than {_CONTENT_BYTES >> 20} MiB to look up in its history"
                    )
                data = file.read_bytes()
            except OSError:
                continue  # unreadable for Kairox: git, run as the same user, could not have stored it either
            run.in_time()
            # as stored: the bytes, or with CRLF line ends made LF (core.autocrlf, the `text` attribute); git runs
            # no other conversion the check could repeat without running a program the repository names
            for stored in dict.fromkeys((data, data.replace(b"\r\n", b"\n"))):
                header = b"blob %d\0" % len(stored)
                ids[hashlib.sha1(header + stored, usedforsecurity=False).hexdigest()] = file
                ids[hashlib.sha256(header + stored).hexdigest()] = file  # a repository with SHA-256 object names
            lfs = hashlib.sha256(data).hexdigest()
            if (common / "lfs" / "objects" / lfs[:2] / lfs[2:4] / lfs).exists():
                return files[file]
        if not ids:
            return None
        listed = run(
            "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin="".join(f"{i}\n" for i in ids).encode()
        )
        for line in listed.decode("ascii", errors="replace").splitlines():
            name, _, kind = line.partition(" ")
            if kind and kind != "missing" and name in ids:
                return files[ids[name]]
        return None

    def _by_name(self, run: "_Git", repo: Path, tree: Path) -> RuleRef | None:
        """The rule covering a path named by an index, a commit reachable from a ref, a reflog or a state file,
        or a tree a ref names."""
        pathspec = self._pathspec(tree)
        if pathspec == []:
            return None  # no rule can cover a path of this work tree
        spec = ["--", *(pathspec or [])]
        for index in (d / "index" for d in worktree_dirs(repo)):
            if index.is_file():
                found = self._named(tree, run("ls-files", "-z", *spec, index=index))
                if found is not None:
                    return found
        commits, trees = self._tips(run, repo)
        walked = run("rev-list", "--all", "--reflog", "--stdin", stdin="".join(f"{c}\n" for c in commits).encode())
        if walked.strip():
            changed = run(
                "diff-tree",
                "--stdin",
                "-r",
                "-m",
                "--root",
                "--no-renames",
                "--name-only",
                "-z",
                "--no-commit-id",
                *spec,
                stdin=walked,
            )
            found = self._named(tree, changed)
            if found is not None:
                return found
        for named in trees:
            found = self._named(tree, run("ls-tree", "-r", "-z", "--name-only", named))
            if found is not None:
                return found
        return None

    def _tips(self, run: "_Git", repo: Path) -> tuple[list[str], list[str]]:
        """Commits to walk besides refs and reflogs (the state files), and the trees that refs and state files name;
        raises ``_UncheckedError`` for a blob they name (content without a name)."""
        listed = run("for-each-ref", "--format=%(objectname) %(objecttype) %(*objectname) %(*objecttype)").decode(
            "ascii", errors="replace"
        )
        named: list[str] = []
        for line in listed.splitlines():
            fields = line.split()
            if len(fields) >= 4:
                fields = fields[2:]  # a tag: what it points to in the end
            if len(fields) == 2 and fields[1] != "commit":
                named.append(fields[0])
        for folder in worktree_dirs(repo):
            for name in _STATE_REFS:
                try:
                    named += [m.decode("ascii") for m in _OBJECT_ID.findall((folder / name).read_bytes())]
                except OSError:
                    continue
        named += _worktree_refs(repo)
        if not named:
            return [], []
        kinds = run(
            "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin="".join(f"{n}\n" for n in named).encode()
        )
        commits: list[str] = []
        trees: list[str] = []
        for line in kinds.decode("ascii", errors="replace").splitlines():
            name, _, kind = line.partition(" ")
            if kind == "commit":
                commits.append(name)
            elif kind == "tree":
                trees.append(name)
            elif kind == "blob":
                raise _UncheckedError("a ref names a file's content directly, with no path to check")
            elif kind == "tag":
                raise _UncheckedError("a tag names another tag, which the check does not follow")
        return commits, trees

    def _pathspec(self, tree: Path) -> list[str] | None:
        """Pathspecs that hold every path of ``tree`` a rule may cover (a superset: the rules' own matcher decides);
        None when a rule may cover any path; [] when none may cover one.

        A rule whose literal folder lies inside the tree: that folder (``:(literal)``). A name rule, or one whose
        literal folder holds the tree: the paths with a part like its last name (``**/.env`` -> ``:(glob)**/.env``
        and what is inside such a folder), when that name has no character class and the tree itself is not covered.
        """
        specs: list[str] = []
        for pattern, _ in self.patterns:
            if pattern.anywhere:
                name = pattern.glob
            else:
                literal = Path(split_literal(pattern.glob)[0])
                if is_within(literal, tree) and literal != tree:
                    specs.append(":(literal)" + str(literal.relative_to(tree)))
                    continue
                if not is_within(tree, literal):
                    continue  # it covers nothing in this tree
                rest = split_literal(pattern.glob)[1].removesuffix("/**").split("/")
                name = rest[-1] if rest != [""] else "**"
            if "**" in name or "[" in name or "\\" in name or any(pattern.matches(p) for p in (tree, *tree.parents)):
                return None
            specs += [f":(glob)**/{name}", f":(glob)**/{name}/**"]
        return list(dict.fromkeys(specs))

    def _named(self, tree: Path, listed: bytes) -> RuleRef | None:
        for raw in set(listed.split(b"\0")):
            if raw:
                found = self._rule_for(tree / os.fsdecode(raw), tree)
                if found is not None:
                    return found
        return None

    def _rule_for(self, path: Path, tree: Path) -> RuleRef | None:
        """The rule covering ``path`` or a folder on its way below ``tree``."""
        at = path
        while at != tree and is_within(at, tree):
            for pattern, ref in self.patterns:
                if pattern.matches(at):
                    return ref
            at = at.parent
        return None


class _Git:
    """Runs plumbing commands for one repository within one time budget."""

    def __init__(self, git: str, repo: Path, tree: Path, *, deadline: float, budget: float) -> None:
        self.git, self.repo, self.tree, self.deadline, self.budget = git, repo, tree, deadline, budget
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # not the caller's repository
        self.env = {
            **env,
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        }

    def in_time(self) -> float:
        """The time left; raises ``_UncheckedError`` when there is none."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _UncheckedError(f"its history could not be checked within {self.budget:g} s")
        return left

    def __call__(self, *args: str, stdin: bytes = b"", index: Path | None = None) -> bytes:
        left = self.in_time()
        env = self.env if index is None else {**self.env, "GIT_INDEX_FILE": str(index)}
        argv = [self.git, "--no-pager", *_SAFE_CONFIG, f"--git-dir={self.repo}", f"--work-tree={self.tree}", *args]
        try:
            cwd = self.tree if os.path.isdir(self.tree) else self.repo  # a removed submodule's work tree is gone
            done = subprocess.run(argv, input=stdin, cwd=cwd, env=env, capture_output=True, timeout=left, check=False)
        except subprocess.TimeoutExpired:
            raise _UncheckedError(f"its history could not be checked within {self.budget:g} s") from None
        except OSError as exc:
            raise _UncheckedError(f"git could not run: {exc}") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
            raise _UncheckedError(f"`git {args[0]}` failed: {said[-1] if said else f'exit code {done.returncode}'}")
        return done.stdout


def _worktree_refs(repo: Path) -> list[str]:
    """The objects the per-worktree refs of every worktree name (``refs/bisect/*``, ``refs/worktree/*``,
    ``refs/rewritten/*``): ``for-each-ref`` and ``--all`` see only the current worktree's, while any worktree's
    can be read (``git show $(cat .git/worktrees/x/refs/bisect/bad):path``)."""
    found: list[str] = []
    for folder in worktree_dirs(repo):
        if (
            folder != repo and (folder / "reftable").is_dir()
        ):  # binary tables: git reads them, for its own worktree only
            raise _UncheckedError(
                "another worktree keeps its own refs (refs/bisect, "
                "refs/worktree) in a reftable, which the check does not read"
            )
        for prefix in _WORKTREE_REFS:
            for path in _tree(os.path.join(folder, prefix), depth=32):
                try:
                    with open(path, "rb") as ref:
                        found += [m.decode("ascii") for m in _OBJECT_ID.findall(ref.read(4096))]
                except OSError:
                    continue  # a folder, or gone
    return found


def _fingerprint(repo: Path, files: tuple[Path, ...], settle_ns: int) -> tuple[_Fingerprint, bool]:
    """What could change the answer for ``repo``: the status of its HEADs, indexes, refs, reflogs, object folders
    and configuration, and of the hidden files (a path that is gone counts as such); and whether every status had
    settled."""
    now = time.time_ns()
    common = str(common_dir(repo))
    paths = [
        os.path.join(common, name)
        for name in ("packed-refs", "shallow", "config", "info/grafts", "objects/info/alternates")
    ]
    for folder in worktree_dirs(repo):
        paths += [os.path.join(folder, name) for name in ("HEAD", "index", "rebase-apply", "logs/HEAD", *_STATE_REFS)]
        if str(folder) != common:  # a linked worktree's own refs (the main one's are in the common refs below)
            paths += _tree(os.path.join(folder, "refs"), depth=32)
    for top in ("refs", "logs", "reftable", "objects", "lfs/objects"):
        paths += _tree(os.path.join(common, top), depth={"objects": 1, "lfs/objects": 2}.get(top, 32))
    paths += map(str, files)
    marks: list[tuple[str, tuple[int, ...] | None]] = []
    settled = True
    for path in paths:  # strings, not Paths: this runs as each command starts
        try:
            state = state_of(os.stat(path), now, settle_ns)
        except OSError:
            marks.append((path, None))
            continue
        marks.append((path, state.key))
        settled = settled and state.settled
    return tuple(marks), settled


def _tree(top: str, *, depth: int) -> list[str]:
    """``top`` and what is below it, ``depth`` levels down (the object store: its fan-out folders, which change
    when an object is added)."""
    found = [top]
    level = [top]
    for _ in range(depth):
        below: list[str] = []
        for folder in level:
            try:
                with os.scandir(folder) as listing:
                    for entry in listing:
                        found.append(entry.path)
                        if entry.is_dir(follow_symlinks=False):
                            below.append(entry.path)
            except OSError:
                continue
        level = below
    return found
