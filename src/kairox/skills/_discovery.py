"""Finding skills under their roots (S3): bounded depth, dot-folders skipped, escaping symlinks refused.

A folder holding ``SKILL.md`` is an Agent Skill; its other files are what it bundles, though a deeper folder
may hold a nested ``SKILL.md`` of its own. A markdown file with frontmatter outside any skill folder is a
Kairox skill. A markdown file without frontmatter there is just a note and is passed over in silence.
"""

import enum
import operator
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kairox.errors import Diagnostic, Severity
from kairox.skills._cache import Listing, Placement, SkillCache, digest, outcome_from_plain, outcome_to_plain
from kairox.skills._model import SKILL_FILE, SkillDef, SkillScope
from kairox.skills._parse import parse_skill_text

_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
_by_name = operator.attrgetter("name")


class LooseFiles(enum.Enum):
    """Which markdown files outside skill folders are read as Kairox skills."""

    ALL = "all"
    """Every ``*.md`` with frontmatter (a configured skill root)."""
    SKILLS_DIRS = "skills-dirs"
    """Only those directly in a folder named ``skills`` (validating an arbitrary tree)."""
    NONE = "none"


@dataclass(frozen=True, slots=True)
class SkillRoot:
    """A folder searched for skills, and the scope its skills get."""

    path: Path
    scope: SkillScope
    plugin: str | None = None
    """The plugin whose skills these are: they are named ``<plugin>:<name>``."""
    label: str | None = None
    """Where the root came from, for messages (``[skills] dirs``, ``.claude/skills``)."""


@dataclass(slots=True)
class DiscoveryStats:
    roots: int = 0
    files: int = 0
    """Candidate skill files looked at."""
    parsed: int = 0
    """Files read and parsed in this scan."""
    cached: int = 0
    """Files whose parse came from the cache."""
    folders_listed: int = 0
    """Folders read from disk in this scan."""
    folders_cached: int = 0
    """Folders whose names came from the cache (unchanged since they were last read)."""
    seconds: float = 0.0


@dataclass(slots=True)
class Discovery:
    skills: list[SkillDef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stats: DiscoveryStats = field(default_factory=DiscoveryStats)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Scanner:
    def __init__(
        self, root: SkillRoot, *, max_depth: int, cache: SkillCache | None, loose: LooseFiles, result: Discovery
    ) -> None:
        self.root = root
        self.max_depth = max_depth
        self.cache = cache
        self.loose = loose
        self.result = result
        self.real_root = os.path.realpath(root.path)
        self.visited: set[str] = set()
        self.cut_off = 0
        self.folder_stat: os.stat_result | None = None
        """The stat of the folder being listed, taken before the listing (a change after it moves its times)."""
        self.placement: Placement = (root.scope, root.plugin, root.path)

    def _note(self, reason: str, path: str, *, severity: Severity = Severity.WARNING, hint: str | None = None) -> None:
        self.result.diagnostics.append(
            Diagnostic(
                kind="skill", name=os.path.basename(path), reason=reason, severity=severity, source=path, hint=hint
            )
        )

    def _refuse_link(self, path: str, real: str) -> None:
        self._note(
            f"symlink points outside its skill root {self.root.path} (to {real}); refused",
            path,
            hint="copy the skill into the root instead of linking to it",
        )

    def scan(self) -> None:
        # Each entry carries its real path, worked out from its parent's without a realpath() call unless the
        # entry is a symlink, so a tree without links costs no extra system calls; a folder reached twice
        # (through a link) is scanned once. Folders are plain strings: a Path is made only for a skill file.
        # The loop runs once per folder of every root (tens of thousands): what it uses is held in locals.
        stack: list[tuple[str, str, int, bool, bool]] = [(str(self.root.path), self.real_root, 0, False, False)]
        pop, push = stack.pop, stack.append
        visited = self.visited
        cached_listing, candidate_file, wanted = self._cached_listing, self._candidate_file, self._wanted
        max_depth, sep = self.max_depth, os.sep
        folders_cached = 0
        while stack:
            directory, real, depth, in_skill, linked = pop()
            if real in visited:
                continue
            visited.add(real)
            prefix = directory if directory.endswith(sep) else directory + sep
            listing = cached_listing(directory, linked)
            if listing is not None:
                folders_cached += 1
                is_skill_dir, md_names, subdir_names = listing
                for name in md_names:
                    if name == SKILL_FILE:
                        candidate_file(prefix + name, loose=False)
                    elif wanted(name, directory, is_skill_dir=is_skill_dir, in_skill=in_skill):
                        candidate_file(prefix + name, loose=True)
                if depth >= max_depth:
                    self.cut_off += 0 if (in_skill or is_skill_dir) else len(subdir_names)
                    continue
                real_prefix, below = real + sep, in_skill or is_skill_dir
                for name in reversed(subdir_names):
                    push((prefix + name, real_prefix + name, depth + 1, below, linked))
                continue
            read = self._read_folder(directory, real, in_skill=in_skill, linked=linked)
            if read is None:
                continue
            is_skill_dir, subdirs = read
            if depth >= max_depth:
                self.cut_off += 0 if (in_skill or is_skill_dir) else len(subdirs)
                continue
            for sub, sub_real, sub_linked in reversed(subdirs):
                push((prefix + sub, sub_real, depth + 1, in_skill or is_skill_dir, linked or sub_linked))
        self.result.stats.folders_cached += folders_cached
        if self.cut_off:
            self._note(
                f"{self.cut_off} folder(s) deeper than skills.max_depth={self.max_depth} were not searched",
                str(self.root.path),
                severity=Severity.INFO,
                hint="raise skills.max_depth or move the skills up",
            )

    def _cached_listing(self, directory: str, linked: bool) -> Listing | None:
        """The folder's names from the cache when its stat proves them unchanged (never through a symlink:
        where a link leads can change without the folder changing)."""
        self.folder_stat = None
        if self.cache is None or linked:
            return None
        try:
            st = os.stat(directory)
        except OSError:
            return None  # listing it reports the error
        self.folder_stat = st
        return self.cache.listing(directory, st)

    def _read_folder(
        self, directory: str, real: str, *, in_skill: bool, linked: bool
    ) -> tuple[bool, list[tuple[str, str, bool]]] | None:
        """List the folder, handle its entries, and remember its names when nothing in it needs a fresh look
        each time (a symlink, an unreadable entry)."""
        cache = None if linked else self.cache
        st = self.folder_stat if cache is not None else None
        self.folder_stat = None
        listed_at = time.time_ns()
        self.result.stats.folders_listed += 1
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=_by_name)
        except OSError as exc:
            self._note(f"cannot read the folder: {exc.strerror or exc}", directory)
            return None
        is_skill_dir = any(e.name == SKILL_FILE for e in entries)
        subdirs: list[tuple[str, str, bool]] = []  # (name, real path, reached through a link)
        md_names: list[str] = []
        cacheable = st is not None
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                entry_real = real + os.sep + name
                link = entry.is_symlink()
                if link:
                    cacheable = False
                    entry_real = os.path.realpath(entry.path)
                    if not _inside(entry_real, self.real_root):
                        self._refuse_link(entry.path, entry_real)
                        continue
                if entry.is_dir():
                    if name not in _SKIPPED_DIRS:
                        subdirs.append((name, entry_real, link))
                    continue
                if not name.endswith(".md") or not entry.is_file():
                    continue
                md_names.append(name)
                if self._wanted(name, directory, is_skill_dir=is_skill_dir, in_skill=in_skill):
                    self._candidate(entry.path, entry.stat(), loose=name != SKILL_FILE)
            except OSError as exc:
                cacheable = False
                self._note(f"cannot read: {exc.strerror or exc}", entry.path)
        if cache is not None and st is not None:
            if cacheable:
                cache.put_listing(
                    directory, st, listed_at, (is_skill_dir, tuple(md_names), tuple(n for n, _, _ in subdirs))
                )
            else:
                cache.forget_listing(directory)
        return is_skill_dir, subdirs

    def _loose_allowed(self, directory: str) -> bool:
        if self.loose is LooseFiles.ALL:
            return True
        return self.loose is LooseFiles.SKILLS_DIRS and os.path.basename(directory) == "skills"

    def _wanted(self, name: str, directory: str, *, is_skill_dir: bool, in_skill: bool) -> bool:
        """``SKILL.md`` always; another markdown file only outside skill folders, where loose files are read."""
        return name == SKILL_FILE or (not is_skill_dir and not in_skill and self._loose_allowed(directory))

    def _candidate_file(self, path: str, *, loose: bool) -> None:
        try:
            st = os.stat(path)
        except OSError as exc:
            self._note(f"cannot read: {exc.strerror or exc}", path)
            return
        self._candidate(path, st, loose=loose)

    def _candidate(self, path: str, st: os.stat_result, *, loose: bool) -> None:
        stats = self.result.stats
        stats.files += 1
        root = self.root
        cache = self.cache
        data: bytes | None = None
        read_at = 0
        if cache is not None:
            entry = cache.lookup(path, st)
            if entry is not None:
                read_at, file_digest, payload = entry[4], entry[5], entry[6]
                if not cache.settled(st.st_ctime_ns, read_at):
                    # Read too soon after its last change for the stat alone to prove it unchanged: compare the bytes.
                    read_at = time.time_ns()
                    data = _read(path)
                    if digest(data) != file_digest:
                        payload = _STALE
                    else:
                        cache.put(path, st, read_at, file_digest, payload)
                if payload is not _STALE:
                    stats.cached += 1
                    if payload is not None:
                        scope, plugin, found_in = self.placement
                        cached = outcome_from_plain(payload, Path(path), scope=scope, plugin=plugin, root=found_in)
                        self.result.diagnostics.extend(cached.diagnostics)
                        if cached.skill is not None:
                            self.result.skills.append(cached.skill)
                    return
        stats.parsed += 1
        if data is None:
            read_at = time.time_ns()
            data = _read(path)
        text = data.decode("utf-8", errors="replace")
        if loose and not text.lstrip("\ufeff").startswith("---"):
            if cache is not None:
                cache.put(path, st, read_at, digest(data), None)
            return
        outcome = parse_skill_text(
            text, Path(path), scope=root.scope, plugin=root.plugin, root=root.path
        )  # placed as found
        if cache is not None:
            cache.put(path, st, read_at, digest(data), outcome_to_plain(outcome))
        self.result.diagnostics.extend(outcome.diagnostics)
        if outcome.skill is not None:
            self.result.skills.append(outcome.skill)


_STALE: Any = object()


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def discover_skills(
    roots: Iterable[SkillRoot],
    *,
    max_depth: int = 6,
    cache: SkillCache | None = None,
    loose: LooseFiles = LooseFiles.ALL,
) -> Discovery:
    """Scan every root that exists, in order; missing roots are not an error (most compatibility dirs are)."""
    started = time.perf_counter()
    result = Discovery()
    scanned: list[Path] = []
    for root in roots:
        if not root.path.is_dir():
            if root.path.exists():
                result.diagnostics.append(
                    Diagnostic(
                        kind="skill",
                        name=root.path.name,
                        reason="skill root is not a folder; skipped",
                        source=str(root.path),
                    )
                )
            continue
        result.stats.roots += 1
        if cache is not None and not root.path.is_absolute():  # cache keys must not depend on the cwd
            root = replace(root, path=root.path.absolute())
        scanned.append(root.path)
        _Scanner(root, max_depth=max_depth, cache=cache, loose=loose, result=result).scan()
    if cache is not None:
        cache.prune(scanned)
        cache.save()
    result.stats.seconds = time.perf_counter() - started
    return result


def bundled_files(skill: SkillDef, *, limit: int = 200) -> list[str]:
    """Files an Agent Skill bundles besides ``SKILL.md`` (relative paths, dot-folders left out)."""
    from kairox.skills._model import SkillFormat

    if skill.format is not SkillFormat.AGENT_SKILLS:
        return []
    folder = skill.folder
    found: list[str] = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for name in sorted(files):
            if name.startswith(".") or (current == str(folder) and name == SKILL_FILE):
                continue
            found.append(os.path.relpath(os.path.join(current, name), folder))
            if len(found) >= limit:
                return found
    return found
