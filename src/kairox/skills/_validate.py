"""Checking skills where they lie (``kairox skills validate PATH``): a file, a skill folder, or a whole tree.

A tree is searched for every ``SKILL.md`` (bounded depth) and for markdown skills directly inside folders named
``skills``; nothing is deduplicated, since two collections may well share a name. Dot-folders are skipped,
except the skill roots hosts read from inside them (``.agents/skills``, ``.claude/skills`` ..., and
``.curated``, ``.system``, ``.experimental`` in a ``skills`` folder); a ``SKILL.md`` in any other dot-folder
is named in an info diagnostic. Every file that does not load is one error diagnostic naming it.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

from kairox._util._json import JsonObject
from kairox.errors import Diagnostic, Severity
from kairox.skills._discovery import LooseFiles, SkillRoot, discover_skills
from kairox.skills._load import parse_skill_file
from kairox.skills._model import SKILL_FILE, SkillDef, SkillScope
from kairox.skills._registry import diagnostic_json
from kairox.skills._roots import COMPAT_DIRS, WORKSPACE_DIR

TREE_MAX_DEPTH = 16

HIDDEN_COLLECTIONS = frozenset({".curated", ".system", ".experimental"})
"""Dot-folders inside a ``skills`` folder that hold skill collections (as Codex lays them out)."""
_HOST_ROOTS = tuple(Path(p) for p in (WORKSPACE_DIR, *COMPAT_DIRS))
"""``.kairox/skills``, ``.agents/skills``, ``.claude/skills`` ...: roots Kairox itself reads in a workspace."""
_NOT_SEARCHED = frozenset({"node_modules", "__pycache__", ".git"})


@dataclass(slots=True)
class ValidationReport:
    path: Path
    skills: list[SkillDef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0
    passed_over: int = 0
    """``SKILL.md`` files in dot-folders that are not skill roots (each has an info diagnostic)."""

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)

    @property
    def skipped(self) -> int:
        """Files that did not load (each has an error diagnostic naming it)."""
        loaded = {str(s.path) for s in self.skills}
        return len(
            {
                d.source
                for d in self.diagnostics
                if d.severity is Severity.ERROR and d.source not in loaded and d.source and d.source.endswith(".md")
            }
        )

    @property
    def ok(self) -> bool:
        return self.count(Severity.ERROR) == 0

    def to_json(self) -> JsonObject:
        return {
            "path": str(self.path),
            "counts": {
                "files": self.files,
                "loaded": len(self.skills),
                "skipped": self.skipped,
                "passed_over": self.passed_over,
                "errors": self.count(Severity.ERROR),
                "warnings": self.count(Severity.WARNING),
                "info": self.count(Severity.INFO),
            },
            "skills": [
                {"name": s.name, "path": str(s.path), "format": str(s.format), "description": s.description}
                for s in self.skills
            ],
            "diagnostics": [diagnostic_json(d) for d in self.diagnostics],
        }


def validate_path(path: Path, *, max_depth: int = TREE_MAX_DEPTH) -> ValidationReport:
    """Load every skill at ``path`` and report what does not load and what is odd."""
    report = ValidationReport(path=path)
    if path.is_file():
        outcome = parse_skill_file(path)
        report.files = 1
        report.diagnostics.extend(outcome.diagnostics)
        if outcome.skill is not None:
            report.skills.append(outcome.skill)
        return report
    if not path.is_dir():
        report.diagnostics.append(
            Diagnostic(
                kind="skill", name=path.name, reason="no such file or folder", severity=Severity.ERROR, source=str(path)
            )
        )
        return report
    loose = LooseFiles.ALL if path.name == "skills" else LooseFiles.SKILLS_DIRS
    if (path / SKILL_FILE).is_file():
        loose = LooseFiles.NONE
    hidden_roots, passed_over = _hidden_places(path, max_depth)
    found = discover_skills([SkillRoot(path=path, scope=SkillScope.USER)], max_depth=max_depth, loose=loose)
    report.files = found.stats.files
    report.skills = found.skills
    report.diagnostics = found.diagnostics
    for root, root_loose in hidden_roots:
        extra = discover_skills([SkillRoot(path=root, scope=SkillScope.USER)], max_depth=max_depth, loose=root_loose)
        report.files += extra.stats.files
        report.skills += extra.skills
        report.diagnostics += extra.diagnostics
    report.passed_over = len(passed_over)
    for file in passed_over:
        report.diagnostics.append(
            Diagnostic(
                kind="skill",
                name=file.parent.name,
                severity=Severity.INFO,
                source=str(file),
                reason="skipped: it lies in a dot-folder that is not a skill root Kairox reads",
                hint="move it into a skills folder (.agents/skills, .kairox/skills) to have it loaded",
            )
        )
    if not report.skills and (passed_over or _holds_skill_file(path, max_depth)):
        report.diagnostics.append(
            Diagnostic(
                kind="skill",
                name=path.name,
                source=str(path),
                reason=(
                    "no skill was loaded, though the folder holds SKILL.md "
                    "files (see the diagnostics above, and --verbose)"
                ),
            )
        )
    return report


def _hidden_places(path: Path, max_depth: int) -> tuple[list[tuple[Path, LooseFiles]], list[Path]]:
    """The skill roots inside dot-folders under ``path``, and the ``SKILL.md`` files in other dot-folders."""
    roots: list[tuple[Path, LooseFiles]] = []
    passed_over: list[Path] = []
    for folder, dirs, _files in _walk(path, max_depth, hidden=False):
        for name in [d for d in dirs if d.startswith(".")]:
            hidden = Path(folder) / name
            if name in HIDDEN_COLLECTIONS and Path(folder).name == "skills":
                roots.append((hidden, LooseFiles.NONE))
                continue
            inside = [hidden.parent / r for r in _HOST_ROOTS if r.parts[0] == name and (hidden.parent / r).is_dir()]
            roots += [(root, LooseFiles.ALL) for root in inside]
            for sub, _subdirs, files in _walk(hidden, max_depth, hidden=True):
                if SKILL_FILE in files and not any(Path(sub).is_relative_to(root) for root in inside):
                    passed_over.append(Path(sub) / SKILL_FILE)
    return roots, passed_over


def _walk(top: Path, max_depth: int, *, hidden: bool) -> "list[tuple[str, list[str], list[str]]]":
    """``os.walk`` to ``max_depth``, without following links;
    dot-folders are listed but not entered unless ``hidden``."""
    found = []
    base = len(top.parts)
    for folder, dirs, files in os.walk(top):
        found.append((folder, list(dirs), files))
        depth = len(Path(folder).parts) - base
        dirs[:] = (
            []
            if depth >= max_depth
            else [d for d in dirs if d not in _NOT_SEARCHED and (hidden or not d.startswith("."))]
        )
    return found


def _holds_skill_file(path: Path, max_depth: int) -> bool:
    return any(SKILL_FILE in files for _folder, _dirs, files in _walk(path, max_depth, hidden=True))
