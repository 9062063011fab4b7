"""Finding skills under their roots (S3): bounded depth, dot-folders skipped, escaping symlinks refused.

A folder holding ``SKILL.md`` is an Agent Skill; its other files are what it bundles, though a deeper folder
may hold a nested ``SKILL.md`` of its own. A markdown file with frontmatter outside any skill folder is a
Kairox skill. A markdown file without frontmatter there is just a note and is passed over in silence.
"""

import enum
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kairox.errors import Diagnostic, Severity
from kairox.skills._cache import SkillCache, outcome_from_json, outcome_to_json
from kairox.skills._model import SKILL_FILE, SkillDef, SkillScope
from kairox.skills._parse import parse_skill_text

_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})


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
    seconds: float = 0.0


@dataclass(slots=True)
class Discovery:
    skills: list[SkillDef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stats: DiscoveryStats = field(default_factory=DiscoveryStats)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Scanner:
    def __init__(self, root: SkillRoot, *, max_depth: int, cache: SkillCache | None, loose: LooseFiles, result: Discovery) -> None:
        self.root = root
        self.max_depth = max_depth
        self.cache = cache
        self.loose = loose
        self.result = result
        self.real_root = os.path.realpath(root.path)
        self.visited: set[str] = set()
        self.cut_off = 0

    def _note(self, reason: str, path: str, *, severity: Severity = Severity.WARNING, hint: str | None = None) -> None:
        self.result.diagnostics.append(Diagnostic(kind="skill", name=os.path.basename(path), reason=reason, severity=severity, source=path, hint=hint))

    def _refuse_link(self, path: str, real: str) -> None:
        self._note(f"symlink points outside its skill root {self.root.path} (to {real}); refused", path, hint="copy the skill into the root instead of linking to it")

    def scan(self) -> None:
        # Each entry carries its real path, worked out from its parent's without a realpath() call unless the
        # entry is a symlink, so a tree without links costs no extra system calls; a folder reached twice
        # (through a link) is scanned once.
        stack: list[tuple[Path, str, int, bool]] = [(self.root.path, self.real_root, 0, False)]
        while stack:
            folder, real, depth, in_skill = stack.pop()
            directory = str(folder)
            if real in self.visited:
                continue
            self.visited.add(real)
            try:
                with os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                self._note(f"cannot read the folder: {exc.strerror or exc}", directory)
                continue
            is_skill_dir = any(e.name == SKILL_FILE for e in entries)
            subdirs: list[tuple[str, str]] = []  # (name, real path)
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    entry_real = real + os.sep + name
                    if entry.is_symlink():
                        entry_real = os.path.realpath(entry.path)
                        if not _inside(entry_real, self.real_root):
                            self._refuse_link(entry.path, entry_real)
                            continue
                    if entry.is_dir():
                        if name not in _SKIPPED_DIRS:
                            subdirs.append((name, entry_real))
                        continue
                    if not name.endswith(".md") or not entry.is_file():
                        continue
                    if name == SKILL_FILE:
                        self._candidate(entry, folder / name, loose=False)
                    elif not is_skill_dir and not in_skill and self._loose_allowed(directory):
                        self._candidate(entry, folder / name, loose=True)
                except OSError as exc:
                    self._note(f"cannot read: {exc.strerror or exc}", entry.path)
            if depth >= self.max_depth:
                self.cut_off += 0 if (in_skill or is_skill_dir) else len(subdirs)
                continue
            for sub, sub_real in reversed(subdirs):
                stack.append((folder / sub, sub_real, depth + 1, in_skill or is_skill_dir))
        if self.cut_off:
            self._note(
                f"{self.cut_off} folder(s) deeper than skills.max_depth={self.max_depth} were not searched",
                str(self.root.path),
                severity=Severity.INFO,
                hint="raise skills.max_depth or move the skills up",
            )

    def _loose_allowed(self, directory: str) -> bool:
        if self.loose is LooseFiles.ALL:
            return True
        return self.loose is LooseFiles.SKILLS_DIRS and os.path.basename(directory) == "skills"

    def _candidate(self, entry: os.DirEntry[str], file: Path, *, loose: bool) -> None:
        stats = self.result.stats
        stats.files += 1
        st = entry.stat()
        path = entry.path
        root = self.root
        if self.cache is not None:
            hit, payload = self.cache.get(path, st.st_mtime_ns, st.st_size)
            if hit:
                stats.cached += 1
                if payload is not None:
                    cached = outcome_from_json(payload, file, scope=root.scope, plugin=root.plugin, root=root.path)
                    self.result.diagnostics.extend(cached.diagnostics)
                    if cached.skill is not None:
                        self.result.skills.append(cached.skill)
                return
        stats.parsed += 1
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
        if loose and not text.lstrip("\ufeff").startswith("---"):
            if self.cache is not None:
                self.cache.put(path, st.st_mtime_ns, st.st_size, None)
            return
        outcome = parse_skill_text(text, file)
        if self.cache is not None:
            self.cache.put(path, st.st_mtime_ns, st.st_size, outcome_to_json(outcome))
        self.result.diagnostics.extend(outcome.diagnostics)
        if outcome.skill is not None:
            self.result.skills.append(outcome.skill.placed(scope=root.scope, plugin=root.plugin, root=root.path))


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
                result.diagnostics.append(Diagnostic(kind="skill", name=root.path.name, reason="skill root is not a folder; skipped", source=str(root.path)))
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


def session_roots(paths: Sequence[Path]) -> list[SkillRoot]:
    return [SkillRoot(path=p, scope=SkillScope.SESSION, label="session") for p in paths]
